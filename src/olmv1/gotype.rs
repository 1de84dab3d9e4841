//! An object as operator-controller's Go types leave it: read into the typed struct
//! (`runtime.DefaultUnstructuredConverter.FromUnstructured`, as its bundle source reads CRDs and
//! the CSV) and written again with `encoding/json` (`Marshal`, the form of its rendered objects).
//!
//! The round trip drops what the struct has no field for, writes the zero value of every field
//! not tagged `omitempty` (`status: {}`, `versions: null`), drops empty `omitempty` fields
//! (`required: []`) and zero `omitzero` ones (`metadata.creationTimestamp`), and writes the
//! types with their own JSON methods as those methods do (quantities canonical, `IntOrString`,
//! the CRD schema's `items` and `additionalProperties`). The types, read from their Go sources
//! by `scripts/gotypes.py`, are in `gotypes.json`.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::unstructured::{Src, int_or_string, integer, src};

/// A Go type expression.
#[derive(Debug)]
enum Expr {
    Ptr(Box<Expr>),
    Slice(Box<Expr>),
    Map(Box<Expr>),
    Named(String),
}

impl Expr {
    fn parse(s: &str) -> Expr {
        if let Some(r) = s.strip_prefix('*') {
            Expr::Ptr(Box::new(Expr::parse(r)))
        } else if let Some(r) = s.strip_prefix("[]") {
            Expr::Slice(Box::new(Expr::parse(r)))
        } else if let Some(r) = s.strip_prefix("map[")
            && let Some(close) = r.find(']')
        {
            Expr::Map(Box::new(Expr::parse(&r[close + 1..])))
        } else {
            Expr::Named(s.to_string())
        }
    }
}

#[derive(Debug)]
struct Field {
    name: String,
    ty: Expr,
    omitempty: bool,
    omitzero: bool,
    inline: bool,
}

#[derive(Debug)]
enum Def {
    Struct(Vec<Field>),
    Alias(Expr),
}

/// The types of `gotypes.json`, by `package.Name`.
static TYPES: LazyLock<HashMap<String, Def>> = LazyLock::new(|| {
    let v: Value = serde_json::from_str(include_str!("gotypes.json")).unwrap_or_default();
    let mut out = HashMap::new();
    for (name, def) in v["types"].as_object().into_iter().flatten() {
        let d = if let Some(fields) = def["struct"].as_array() {
            Def::Struct(
                fields
                    .iter()
                    .map(|f| {
                        let flags = f[2].as_str().unwrap_or_default();
                        Field {
                            name: f[0].as_str().unwrap_or_default().to_string(),
                            ty: Expr::parse(f[1].as_str().unwrap_or_default()),
                            omitempty: flags.contains('e'),
                            omitzero: flags.contains('z'),
                            inline: flags.contains('i'),
                        }
                    })
                    .collect(),
            )
        } else {
            Def::Alias(Expr::parse(def["alias"].as_str().unwrap_or_default()))
        };
        out.insert(name.clone(), d);
    }
    out
});

/// A Go value as `encoding/json` writes it, with what its `omitempty` and `omitzero` see.
struct Go {
    v: Value,
    /// `isEmptyValue`: false, 0, "", a nil pointer or interface, an empty map, slice or string.
    empty: bool,
    /// `reflect.Value.IsZero` (or the type's `IsZero`).
    zero: bool,
}

impl Go {
    fn new(v: Value, empty: bool, zero: bool) -> Go {
        Go { v, empty, zero }
    }
    fn null() -> Go {
        Go::new(Value::Null, true, true)
    }
}

/// `obj` read into the Go type `ty` (`package.Name` as in `gotypes.json`, e.g.
/// `apps.Deployment`) and written again; or the converter's error.
pub fn round_trip(obj: &Value, ty: &str) -> Result<Value, String> {
    named(ty, obj).map(|g| g.v)
}

/// How the converter's messages name a Go type (`v1.Protocol`).
fn go_name(ty: &str) -> String {
    match ty.split_once('.') {
        Some(("types", n)) => format!("types.{n}"),
        Some((_, n)) => format!("v1.{n}"),
        None => ty.to_string(),
    }
}

fn enc(e: &Expr, x: &Value) -> Result<Go, String> {
    match e {
        Expr::Ptr(inner) => {
            if x.is_null() {
                return Ok(Go::null());
            }
            let g = enc(inner, x)?;
            Ok(Go::new(g.v, false, false))
        }
        Expr::Slice(inner) => match x {
            Value::Null => Ok(Go::null()),
            // []byte: base64 text, as it was read.
            Value::String(s) if matches!(&**inner, Expr::Named(n) if n == "uint8") => {
                Ok(Go::new(x.clone(), s.is_empty(), false))
            }
            Value::Array(items) => {
                let out = items
                    .iter()
                    .map(|i| enc(inner, i).map(|g| g.v))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Go::new(Value::Array(out), items.is_empty(), false))
            }
            _ => Err(format!("cannot restore slice from {}", src(x).kind())),
        },
        Expr::Map(inner) => match x {
            Value::Null => Ok(Go::null()),
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, v) in m {
                    out.insert(k.clone(), enc(inner, v)?.v);
                }
                Ok(Go::new(Value::Object(out), m.is_empty(), false))
            }
            _ => Err(format!("cannot restore map from {}", src(x).kind())),
        },
        Expr::Named(n) => named(n, x),
    }
}

fn string_kind(name: &str, x: &Value) -> Result<Go, String> {
    match x {
        Value::Null => Ok(Go::new(Value::String(String::new()), true, true)),
        Value::String(s) => Ok(Go::new(x.clone(), s.is_empty(), s.is_empty())),
        _ => match src(x) {
            Src::Int(_) => Err(format!("cannot convert int64 to {name}")),
            _ => Err("unrecognized type: string".into()),
        },
    }
}

fn named(n: &str, x: &Value) -> Result<Go, String> {
    match n {
        "string" => string_kind("string", x),
        "types.UID" => string_kind("types.UID", x),
        "bool" => match x {
            Value::Null => Ok(Go::new(Value::Bool(false), true, true)),
            Value::Bool(b) => Ok(Go::new(x.clone(), !b, !b)),
            _ => Err("unrecognized type: bool".into()),
        },
        "int32" | "int64" | "int" => {
            if x.is_null() {
                return Ok(Go::new(Value::from(0), true, true));
            }
            let i = integer(x, n)?;
            let i = if n == "int32" { i64::from(i as i32) } else { i };
            Ok(Go::new(Value::from(i), i == 0, i == 0))
        }
        "float64" => match src(x) {
            Src::Nil => Ok(Go::new(Value::from(0), true, true)),
            Src::Int(i) => Ok(Go::new(x.clone(), i == 0, i == 0)),
            Src::Float(f) => Ok(Go::new(x.clone(), f == 0.0, f == 0.0)),
            _ => Err("unrecognized type: float64".into()),
        },
        "interface{}" | "runtime.RawExtension" | "apiext.JSON" | "meta.FieldsV1" => {
            Ok(Go::new(x.clone(), x.is_null(), x.is_null()))
        }
        // MarshalJSON: zero is `null`, else RFC 3339 in UTC to the second (MicroTime: to the
        // microsecond); the text is kept as read when it cannot be parsed here.
        "meta.Time" | "meta.MicroTime" => match x {
            Value::Null => Ok(Go::new(Value::Null, false, true)),
            Value::String(s) => Ok(Go::new(Value::String(utc(s, n)), false, false)),
            _ => Err("unrecognized type: string".into()),
        },
        "meta.Duration" => match x {
            Value::Null => Ok(Go::new(Value::from("0s"), false, true)),
            _ => Ok(Go::new(x.clone(), false, false)),
        },
        "resource.Quantity" => quantity(x),
        "intstr.IntOrString" => {
            int_or_string(x)?;
            match x {
                Value::Null => Ok(Go::new(Value::from(0), false, true)),
                _ => Ok(Go::new(x.clone(), false, false)),
            }
        }
        "apiext.JSONSchemaPropsOrArray" => match x {
            Value::Object(_) => Ok(Go::new(props(x)?, false, false)),
            Value::Array(items) if !items.is_empty() => {
                let out = items.iter().map(props).collect::<Result<Vec<_>, _>>()?;
                Ok(Go::new(Value::Array(out), false, false))
            }
            _ => Ok(Go::new(Value::Null, false, x.is_null())),
        },
        "apiext.JSONSchemaPropsOrBool" => match x {
            Value::Object(_) => Ok(Go::new(props(x)?, false, false)),
            Value::Bool(b) => Ok(Go::new(x.clone(), false, !b)),
            Value::Null => Ok(Go::new(Value::Bool(false), false, true)),
            _ => Err("boolean or JSON schema expected".into()),
        },
        "apiext.JSONSchemaPropsOrStringArray" => match x {
            Value::Object(_) => Ok(Go::new(props(x)?, false, false)),
            Value::Array(items) if !items.is_empty() => {
                let out = items
                    .iter()
                    .map(|i| string_kind("string", i).map(|g| g.v))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Go::new(Value::Array(out), false, false))
            }
            _ => Ok(Go::new(Value::Null, false, x.is_null())),
        },
        _ => match TYPES.get(n) {
            Some(Def::Alias(Expr::Named(u))) if u == "string" => string_kind(&go_name(n), x),
            Some(Def::Alias(e)) => enc(e, x),
            Some(Def::Struct(fields)) => structure(fields, x),
            // Not modelled: kept as it is.
            None => Ok(Go::new(x.clone(), x.is_null(), x.is_null())),
        },
    }
}

fn props(x: &Value) -> Result<Value, String> {
    named("apiext.JSONSchemaProps", x).map(|g| g.v)
}

fn structure(fields: &[Field], x: &Value) -> Result<Go, String> {
    let empty = Map::new();
    let m = match x {
        Value::Null => &empty,
        Value::Object(m) => m,
        _ => return Err(format!("cannot restore struct from: {}", src(x).kind())),
    };
    let mut out = Map::new();
    let mut zero = true;
    for f in fields {
        if f.inline {
            let g = enc(&f.ty, x)?;
            zero &= g.zero;
            if let Value::Object(inner) = g.v {
                out.extend(inner);
            }
            continue;
        }
        let g = enc(&f.ty, m.get(&f.name).unwrap_or(&Value::Null))?;
        zero &= g.zero;
        if (f.omitempty && g.empty) || (f.omitzero && g.zero) {
            continue;
        }
        out.insert(f.name.clone(), g.v);
    }
    Ok(Go::new(Value::Object(out), false, zero))
}

/// `Quantity.UnmarshalJSON` of the value re-encoded as JSON (a number is its JSON text), then
/// `MarshalJSON`.
fn quantity(x: &Value) -> Result<Go, String> {
    let text = match src(x) {
        Src::Nil => return Ok(Go::new(Value::from("0"), false, true)),
        Src::Str => x.as_str().unwrap_or_default().trim().to_string(),
        Src::Int(i) => i.to_string(),
        Src::Float(f) => {
            let mut t = String::new();
            crate::fbc::node::write_go_float(&mut t, f);
            t
        }
        _ => return Err(super::quantity::FORMAT_WRONG.into()),
    };
    let s = super::quantity::marshal(&text).map_err(str::to_string)?;
    Ok(Go::new(Value::String(s), false, false))
}

/// `Time.MarshalJSON` (`MicroTime`: with microseconds) of an RFC 3339 text.
fn utc(s: &str, ty: &str) -> String {
    let Ok(t) = s.parse::<jiff::Timestamp>() else {
        return s.to_string();
    };
    let f = if ty == "meta.MicroTime" {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%dT%H:%M:%SZ"
    };
    t.strftime(f).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_type_named_is_in_the_table_or_written_here() {
        fn names(e: &Expr, out: &mut Vec<String>) {
            match e {
                Expr::Ptr(i) | Expr::Slice(i) | Expr::Map(i) => names(i, out),
                Expr::Named(n) => out.push(n.clone()),
            }
        }
        // Go's own types, and those the generator left to this module by name.
        let about: Value = serde_json::from_str(include_str!("gotypes.json")).expect("json");
        let mut own = vec![
            "string",
            "bool",
            "int32",
            "int64",
            "int",
            "float64",
            "uint8",
            "interface{}",
        ];
        own.extend(
            about["about"]["special"]
                .as_array()
                .expect("special")
                .iter()
                .filter_map(Value::as_str),
        );
        assert!(TYPES.len() > 200, "{}", TYPES.len());
        let mut all = Vec::new();
        for d in TYPES.values() {
            match d {
                Def::Struct(fields) => fields.iter().for_each(|f| names(&f.ty, &mut all)),
                Def::Alias(e) => names(e, &mut all),
            }
        }
        for n in all {
            assert!(TYPES.contains_key(&n) || own.contains(&n.as_str()), "{n}");
        }
    }

    /// What `json.Marshal` of the decoded Deployment writes: zero values of fields without
    /// `omitempty` (`status`, a struct, is never empty), no zero `creationTimestamp`
    /// (`omitzero`), no unknown fields, no empty `omitempty` ones.
    #[test]
    fn a_deployment_is_written_as_go_writes_it() {
        let d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "creationTimestamp": null, "labels": {}},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"creationTimestamp": null, "labels": {"a": "b"}},
                    "containers": [{"name": "x"}],
                    "spec": {"containers": [{
                        "name": "m", "image": "i",
                        "env": [{"name": "E", "value": ""}],
                        "resources": {"limits": {"cpu": 0.5, "memory": "1024Mi"}},
                        "ports": [{"containerPort": 4294967297u64}]
                    }]}
                }
            }
        });
        assert_eq!(
            round_trip(&d, "apps.Deployment"),
            Ok(json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "d"},
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "strategy": {},
                    "template": {
                        "metadata": {"labels": {"a": "b"}},
                        "spec": {"containers": [{
                            "name": "m", "image": "i",
                            "env": [{"name": "E"}],
                            "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                            "ports": [{"containerPort": 1}]
                        }]}
                    }
                },
                "status": {}
            }))
        );
    }

    /// A v1beta1 CRD read into v1's types, as upstream reads every CRD: its v1beta1-only fields
    /// go, `versions` and `status` are written with their zero values.
    #[test]
    fn a_crd_is_written_as_v1_types_write_it() {
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "a.b", "creationTimestamp": null},
            "spec": {"group": "b", "version": "v1", "names": {"kind": "A", "plural": "a", "shortNames": []},
                     "scope": "Namespaced", "validation": {}, "subresources": {"status": {}}}
        });
        assert_eq!(
            round_trip(&crd, "apiext.CustomResourceDefinition"),
            Ok(json!({
                "apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "a.b"},
                "spec": {"group": "b", "names": {"kind": "A", "plural": "a"}, "scope": "Namespaced", "versions": null},
                "status": {"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": null}
            }))
        );
        let schema = json!({"type": "object", "required": [], "items": {"type": "string", "bogus": 1},
            "additionalProperties": false, "default": {"a": null}, "x-kubernetes-list-type": "atomic",
            "properties": {"p": {"type": "integer", "maximum": 5, "enum": [1, "a"]}}});
        assert_eq!(
            round_trip(&schema, "apiext.JSONSchemaProps"),
            Ok(
                json!({"type": "object", "items": {"type": "string"}, "additionalProperties": false,
                "default": {"a": null}, "x-kubernetes-list-type": "atomic",
                "properties": {"p": {"type": "integer", "maximum": 5, "enum": [1, "a"]}}})
            )
        );
        assert_eq!(
            round_trip(
                &json!({"additionalProperties": "x"}),
                "apiext.JSONSchemaProps"
            ),
            Err("boolean or JSON schema expected".into())
        );
    }

    #[test]
    fn values_the_types_cannot_hold_are_the_converters_errors() {
        assert_eq!(
            round_trip(&json!({"spec": {"replicas": "1"}}), "apps.Deployment"),
            Err("unrecognized type: int32".into())
        );
        assert_eq!(
            round_trip(
                &json!({"spec": {"template": {"spec": {"containers": [{"imagePullPolicy": 1}]}}}}),
                "apps.Deployment"
            ),
            Err("cannot convert int64 to v1.PullPolicy".into())
        );
        assert_eq!(
            round_trip(
                &json!({"spec": {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "1K"}}}]}}}}),
                "apps.Deployment"
            ),
            Err(super::super::quantity::SUFFIX.into())
        );
        assert_eq!(
            round_trip(&json!({"spec": []}), "apps.Deployment"),
            Err("cannot restore struct from: slice".into())
        );
    }
}
