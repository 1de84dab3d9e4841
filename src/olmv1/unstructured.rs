//! An object read into a Go struct as Kubernetes' unstructured converter reads it
//! (`k8s.io/apimachinery/pkg/runtime/converter.go :: fromUnstructured`, v0.36): what
//! operator-controller's bundle source does to a CSV (`DefaultUnstructuredConverter.FromUnstructured`).
//!
//! The object is JSON as Kubernetes' YAML decoding leaves it (`k8s.io/apimachinery/pkg/util/json ::
//! Unmarshal`: a number is an int64 when its text is an integer in range, else a float64). The
//! converter is not `encoding/json`: an int64 converts to any integer type by truncation (2^32
//! into an int32 is 0, 65536 stays 65536), an integral float64 too (`reflect.Value.Convert`; out of int64's range it
//! is what amd64 gives, int64's minimum), a fractional one is refused; a string never converts to
//! a number nor a number to a string. A type with its own `UnmarshalJSON` (`intstr.IntOrString`)
//! gets the value re-encoded as JSON (`structured-merge-diff value/reflectcache.go ::
//! FromUnstructured`), with `encoding/json`'s messages. The first error, in struct field order,
//! is the result, without a path, as upstream returns it. Fields left out of a [`Ty::Struct`]
//! are not checked and are kept as they are.

use serde_json::{Map, Value};

/// A Go type, as far as the converter treats it differently.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// A string kind; the Go type's name (`string`, `v1alpha1.InstallModeType`).
    Str(&'static str),
    /// `bool`.
    Bool,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `intstr.IntOrString` (its `UnmarshalJSON`).
    IntOrString,
    /// `[]T`.
    List(&'static Ty),
    /// `map[string]T`.
    Map(&'static Ty),
    /// A struct: its JSON fields in declaration order.
    Struct(&'static [(&'static str, Ty)]),
    /// Anything: a type not modelled here (`interface{}`, or a struct not checked).
    Any,
}

/// `string`.
pub const STR: Ty = Ty::Str("string");
/// `[]string`.
pub static STRS: Ty = Ty::List(&STR);
/// `map[string]string`.
pub static STR_MAP: Ty = Ty::Map(&STR);

/// What a JSON value is once Go decoded it into `interface{}`.
pub(super) enum Src {
    Nil,
    Bool,
    Int(i64),
    Float(f64),
    Str,
    Slice,
    Map,
}

pub(super) fn src(v: &Value) -> Src {
    match v {
        Value::Null => Src::Nil,
        Value::Bool(_) => Src::Bool,
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Src::Int(i),
            // Past int64: a float64 (`convertNumber` falls back to ParseFloat).
            (None, Some(u)) => Src::Float(u as f64),
            (None, None) => Src::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(_) => Src::Str,
        Value::Array(_) => Src::Slice,
        Value::Object(_) => Src::Map,
    }
}

impl Src {
    /// `reflect.Kind.String()`.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Src::Nil => "invalid",
            Src::Bool => "bool",
            Src::Int(_) => "int64",
            Src::Float(_) => "float64",
            Src::Str => "string",
            Src::Slice => "slice",
            Src::Map => "map",
        }
    }
}

/// Go's `int64(f)` for an integral float64 on amd64: out of range, int64's minimum
/// (`CVTTSD2SQ`'s "integer indefinite").
fn go_float_to_int64(f: f64) -> i64 {
    // [-2^63, 2^63)
    if (i64::MIN as f64..-(i64::MIN as f64)).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// `json.Marshal` of the decoded number, as `encoding/json` names it in a message.
fn number_text(s: &Src) -> String {
    match s {
        Src::Int(i) => i.to_string(),
        Src::Float(f) => {
            let mut t = String::new();
            crate::fbc::node::write_go_float(&mut t, *f);
            t
        }
        _ => String::new(),
    }
}

/// An integer type: the int64 Go holds after the conversion (then truncated by the caller).
pub(super) fn integer(v: &Value, go_type: &str) -> Result<i64, String> {
    match src(v) {
        Src::Int(i) => Ok(i),
        Src::Float(f) if f == f.trunc() => Ok(go_float_to_int64(f)),
        Src::Float(_) => Err(format!("cannot convert float64 to {go_type}")),
        _ => Err(format!("unrecognized type: {go_type}")),
    }
}

/// `IntOrString.UnmarshalJSON`: a string, or a number `encoding/json` puts into an int32.
pub(super) fn int_or_string(v: &Value) -> Result<(), String> {
    let s = src(v);
    let what = match &s {
        Src::Nil | Src::Str => return Ok(()),
        Src::Int(i) if i32::try_from(*i).is_ok() => return Ok(()),
        Src::Int(_) | Src::Float(_) => format!("number {}", number_text(&s)),
        Src::Bool => "bool".into(),
        Src::Slice => "array".into(),
        Src::Map => "object".into(),
    };
    Err(format!(
        "json: cannot unmarshal {what} into Go value of type int32"
    ))
}

/// Reads `v` into `ty` as the converter does: `Err` with its message, or `Ok` with the integers
/// in `v` replaced by the values Go holds.
pub fn convert(v: &mut Value, ty: &Ty) -> Result<(), String> {
    let s = src(v);
    if matches!(s, Src::Nil) {
        return Ok(());
    }
    match ty {
        Ty::Any => Ok(()),
        Ty::Str(name) => match s {
            Src::Str => Ok(()),
            Src::Int(_) => Err(format!("cannot convert int64 to {name}")),
            _ => Err("unrecognized type: string".into()),
        },
        Ty::Bool => match s {
            Src::Bool => Ok(()),
            _ => Err("unrecognized type: bool".into()),
        },
        Ty::Int32 => {
            *v = Value::from(integer(v, "int32")? as i32);
            Ok(())
        }
        Ty::Int64 => {
            *v = Value::from(integer(v, "int64")?);
            Ok(())
        }
        Ty::IntOrString => int_or_string(v),
        Ty::List(item) => match v {
            Value::Array(items) => items.iter_mut().try_for_each(|i| convert(i, item)),
            _ => Err(format!("cannot restore slice from {}", s.kind())),
        },
        Ty::Map(item) => match v {
            Value::Object(m) => m.values_mut().try_for_each(|i| convert(i, item)),
            _ => Err(format!("cannot restore map from {}", s.kind())),
        },
        Ty::Struct(fields) => match v {
            Value::Object(m) => fields.iter().try_for_each(|(name, t)| field(m, name, t)),
            _ => Err(format!("cannot restore struct from: {}", s.kind())),
        },
    }
}

fn field(m: &mut Map<String, Value>, name: &str, ty: &Ty) -> Result<(), String> {
    match m.get_mut(name) {
        Some(v) => convert(v, ty),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conv(mut v: Value, ty: &Ty) -> Result<Value, String> {
        convert(&mut v, ty).map(|()| v)
    }

    /// `fromUnstructured`'s simple types: int64 truncates, integral float64 converts (amd64's
    /// result past int64), fractional float64 and strings are refused.
    #[test]
    fn numbers_convert_as_reflect_converts() {
        assert_eq!(conv(json!(65536), &Ty::Int32), Ok(json!(65536)));
        assert_eq!(conv(json!(4294967296u64), &Ty::Int32), Ok(json!(0)));
        assert_eq!(conv(json!(4294967297u64), &Ty::Int32), Ok(json!(1)));
        assert_eq!(
            conv(json!(2147483648u64), &Ty::Int32),
            Ok(json!(-2147483648))
        );
        assert_eq!(conv(json!(-1), &Ty::Int32), Ok(json!(-1)));
        assert_eq!(conv(json!(1e20), &Ty::Int32), Ok(json!(0)));
        assert_eq!(conv(json!(1e20), &Ty::Int64), Ok(json!(i64::MIN)));
        assert_eq!(
            conv(json!(u64::MAX), &Ty::Int64),
            Ok(json!(i64::MIN)),
            "past int64 a float64"
        );
        assert_eq!(
            conv(json!(1.5), &Ty::Int32),
            Err("cannot convert float64 to int32".into())
        );
        assert_eq!(
            conv(json!("443"), &Ty::Int32),
            Err("unrecognized type: int32".into())
        );
        assert_eq!(
            conv(json!(true), &Ty::Int64),
            Err("unrecognized type: int64".into())
        );
        assert_eq!(
            conv(json!(1), &Ty::Str("v1.FailurePolicyType")),
            Err("cannot convert int64 to v1.FailurePolicyType".into())
        );
        assert_eq!(
            conv(json!(1.5), &STR),
            Err("unrecognized type: string".into())
        );
        assert_eq!(
            conv(json!("x"), &Ty::Bool),
            Err("unrecognized type: bool".into())
        );
        assert_eq!(conv(Value::Null, &Ty::Int32), Ok(Value::Null));
    }

    #[test]
    fn containers_need_their_shape() {
        static S: Ty = Ty::Struct(&[("a", Ty::Int32), ("b", STR)]);
        assert_eq!(
            conv(json!("x"), &STRS),
            Err("cannot restore slice from string".into())
        );
        assert_eq!(
            conv(json!({}), &STRS),
            Err("cannot restore slice from map".into())
        );
        assert_eq!(
            conv(json!([]), &STR_MAP),
            Err("cannot restore map from slice".into())
        );
        assert_eq!(
            conv(json!(5), &S),
            Err("cannot restore struct from: int64".into())
        );
        // Field order decides which error is reported; unknown fields stay.
        assert_eq!(
            conv(json!({"b": 1, "a": 1.5}), &S),
            Err("cannot convert float64 to int32".into())
        );
        assert_eq!(
            conv(json!({"a": 70000, "x": [1]}), &S),
            Ok(json!({"a": 70000, "x": [1]}))
        );
        assert_eq!(
            conv(json!({"a": 4294967297u64, "b": "s"}), &S),
            Ok(json!({"a": 1, "b": "s"}))
        );
    }

    /// `IntOrString.UnmarshalJSON` through `encoding/json`.
    #[test]
    fn int_or_string_is_encoding_jsons() {
        for ok in [
            json!("443"),
            json!("https"),
            json!(-1),
            json!(65536),
            json!(2147483647),
        ] {
            assert_eq!(conv(ok.clone(), &Ty::IntOrString), Ok(ok));
        }
        for (bad, what) in [
            (json!(2147483648u64), "number 2147483648"),
            (json!(4294967296u64), "number 4294967296"),
            (json!(1e20), "number 100000000000000000000"),
            (json!(1.5), "number 1.5"),
            (json!(true), "bool"),
            (json!([1]), "array"),
            (json!({}), "object"),
        ] {
            assert_eq!(
                conv(bad, &Ty::IntOrString),
                Err(format!(
                    "json: cannot unmarshal {what} into Go value of type int32"
                ))
            );
        }
    }
}
