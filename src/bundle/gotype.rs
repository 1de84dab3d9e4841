//! Re-encoding a positioned value through a Go struct type, as `json.Unmarshal` into a typed
//! struct followed by `json.Marshal` does: keys match fields case-insensitively, unknown keys are
//! dropped, `null` leaves the zero value, zero values of `omitempty` fields disappear, and zero
//! values of other fields appear (`""`, `false`, `0`, `null` for slices and maps, `{}` for
//! structs). opm builds the `olm.csv.metadata` property this way from the CSV, so the shapes here
//! describe the operator-framework/api `v1alpha1` types it goes through.

use crate::fbc::decode::Obj;
use crate::fbc::node::{Entry, Node, Pos, Value};

/// A Go type.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// `string`.
    Str,
    /// `bool`.
    Bool,
    /// `int32`.
    Int32,
    /// `json.RawMessage`: the value as it is.
    Raw,
    /// `map[string]string`.
    StrMap,
    /// `[]T`.
    List(&'static Shape),
    /// A struct with its fields in declaration order.
    Struct(&'static [Field]),
}

/// One struct field.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The JSON name.
    pub name: &'static str,
    /// Its type.
    pub shape: Shape,
    /// `omitempty` in the tag.
    pub omitempty: bool,
}

/// A field that is always encoded.
pub const fn req(name: &'static str, shape: Shape) -> Field {
    Field {
        name,
        shape,
        omitempty: false,
    }
}

/// An `omitempty` field.
pub const fn opt(name: &'static str, shape: Shape) -> Field {
    Field {
        name,
        shape,
        omitempty: true,
    }
}

/// A value Go cannot decode into the type (json: cannot unmarshal X into Go value of type Y).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    /// Dotted path of the value.
    pub path: String,
    /// What the type needs.
    pub expected: &'static str,
    /// What the value is.
    pub found: &'static str,
    /// Where the value is.
    pub pos: Pos,
}

impl std::fmt::Display for TypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{}` is {}, expected {}",
            self.pos.line, self.pos.col, self.path, self.found, self.expected
        )
    }
}

fn node(value: Value) -> Node {
    Node::new(Pos::default(), value)
}

fn entry(key: &str, value: Node) -> Entry {
    Entry {
        key: key.to_string(),
        key_pos: Pos::default(),
        value,
    }
}

/// The zero value of `shape` as Go marshals it.
fn zero(shape: Shape) -> Node {
    match shape {
        Shape::Str => node(Value::Str(String::new())),
        Shape::Bool => node(Value::Bool(false)),
        Shape::Int32 => node(Value::Number(0.0)),
        Shape::Raw | Shape::StrMap | Shape::List(_) => node(Value::Null),
        Shape::Struct(fields) => node(Value::Map(
            fields
                .iter()
                .filter(|f| !f.omitempty)
                .map(|f| entry(f.name, zero(f.shape)))
                .collect(),
        )),
    }
}

/// Whether Go's `omitempty` drops this encoded value (structs are never empty).
pub fn is_empty(shape: Shape, n: &Node) -> bool {
    match (&n.value, shape) {
        (Value::Null, _) => true,
        (_, Shape::Struct(_)) => false,
        (Value::Str(s), _) => s.is_empty(),
        (Value::Bool(b), _) => !b,
        (Value::Number(x), _) => *x == 0.0,
        (Value::Seq(v), _) => v.is_empty(),
        (Value::Map(m), _) => m.is_empty(),
    }
}

/// `n` decoded into `shape` and encoded again. `None` input means the key is absent.
pub fn encode(n: Option<&Node>, shape: Shape, path: &str) -> Result<Node, TypeError> {
    let Some(n) = n else {
        return Ok(zero(shape));
    };
    if matches!(n.value, Value::Null) && !matches!(shape, Shape::Raw) {
        return Ok(zero(shape));
    }
    let mismatch = |expected| TypeError {
        path: path.to_string(),
        expected,
        found: n.kind(),
        pos: n.pos,
    };
    Ok(match shape {
        Shape::Str => match &n.value {
            Value::Str(_) => n.clone(),
            _ => return Err(mismatch("a string")),
        },
        Shape::Bool => match &n.value {
            Value::Bool(_) => n.clone(),
            _ => return Err(mismatch("a boolean")),
        },
        Shape::Int32 => match &n.value {
            Value::Number(x) if x.fract() == 0.0 && x.abs() <= i32::MAX as f64 => n.clone(),
            _ => return Err(mismatch("a 32-bit integer")),
        },
        Shape::Raw => n.clone(),
        Shape::StrMap => match &n.value {
            Value::Map(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for e in crate::fbc::node::sorted_unique(entries) {
                    match &e.value.value {
                        Value::Str(_) | Value::Null => out.push(entry(
                            &e.key,
                            if matches!(e.value.value, Value::Null) {
                                node(Value::Str(String::new()))
                            } else {
                                e.value.clone()
                            },
                        )),
                        _ => {
                            return Err(TypeError {
                                path: format!("{path}.{}", e.key),
                                expected: "a string",
                                found: e.value.kind(),
                                pos: e.value.pos,
                            });
                        }
                    }
                }
                node(Value::Map(out))
            }
            _ => return Err(mismatch("an object")),
        },
        Shape::List(item) => match &n.value {
            Value::Seq(items) => node(Value::Seq(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, it)| encode(Some(it), *item, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            )),
            _ => return Err(mismatch("a list")),
        },
        Shape::Struct(fields) => {
            let mut issues = Vec::new();
            let Some(obj) = Obj::new(n, path, &mut issues) else {
                return Err(mismatch("an object"));
            };
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let sub = if path.is_empty() {
                    f.name.to_string()
                } else {
                    format!("{path}.{}", f.name)
                };
                let v = encode(obj.get(f.name).map(|e| &e.value), f.shape, &sub)?;
                if !(f.omitempty && is_empty(f.shape, &v)) {
                    out.push(entry(f.name, v));
                }
            }
            node(Value::Map(out))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(y: &str) -> Node {
        let mut out = None;
        crate::fbc::yaml::parse_documents(y, |n| out = Some(n)).expect("yaml");
        out.expect("doc")
    }

    static LINK: [Field; 2] = [opt("name", Shape::Str), opt("url", Shape::Str)];
    static MODE: [Field; 2] = [req("type", Shape::Str), req("supported", Shape::Bool)];
    static T: [Field; 4] = [
        opt("provider", Shape::Struct(&LINK)),
        opt("modes", Shape::List(&Shape::Struct(&MODE))),
        opt("labels", Shape::StrMap),
        req("rules", Shape::List(&Shape::Str)),
    ];

    #[test]
    fn go_round_trip_semantics() {
        let n = parse("Provider: {NAME: x, extra: 1}\nmodes:\n- type: A\nlabels: {}\n");
        let out = encode(Some(&n), Shape::Struct(&T), "").expect("ok");
        // Case-insensitive match, unknown keys dropped, missing bool encoded, empty map omitted,
        // missing non-omitempty slice is null.
        assert_eq!(
            out.to_json(),
            r#"{"modes":[{"supported":false,"type":"A"}],"provider":{"name":"x"},"rules":null}"#
        );
        // A struct is never omitted, even when empty.
        let out = encode(Some(&parse("rules: [a]\n")), Shape::Struct(&T), "").expect("ok");
        assert_eq!(out.to_json(), r#"{"provider":{},"rules":["a"]}"#);
    }

    #[test]
    fn type_mismatch_names_the_path_and_position() {
        let n = parse("modes:\n- type: A\n  supported: 'yes'\n");
        let e = encode(Some(&n), Shape::Struct(&T), "spec").expect_err("mismatch");
        assert_eq!(e.path, "spec.modes[0].supported");
        assert_eq!((e.pos.line, e.expected), (3, "a boolean"));
        let n = parse("labels: {a: 1}\n");
        let e = encode(Some(&n), Shape::Struct(&T), "").expect_err("mismatch");
        assert_eq!(e.path, "labels.a");
    }
}
