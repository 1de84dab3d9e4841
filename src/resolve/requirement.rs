//! A bundle's requirements as predicates: a port of OLM's `resolver.go` `predicateConverter`
//! (`convertDependencyProperties`, the legacy `olm.gvk.required`, `olm.package.required` and
//! `olm.label.required` parsers) and operator-framework/api `pkg/constraints` (`Parse` of
//! `olm.constraint`: `gvk`, `package`, `all`, `any`, `not`, `cel`).

use serde_json::{Map, Value};

use super::entry::Property;
use super::predicate::Predicate;
use crate::range::Range;

/// `maxConstraintSize` (`2 << 16` bytes).
const MAX_CONSTRAINT_SIZE: usize = 2 << 16;

/// `convertDependencyProperties`: a predicate per requirement property, in property order;
/// unknown types are ignored. An error is OLM's (it stops the resolution of the namespace).
pub fn dependencies(properties: &[Property]) -> Result<Vec<Predicate>, String> {
    let mut out = Vec::new();
    for p in properties {
        let pred = match p.type_.as_str() {
            "olm.constraint" => Some(constraint_property(&p.value)?),
            "olm.gvk.required" => Some(Predicate::ProvidingApi(
                go_field(p, "group")?,
                go_field(p, "version")?,
                go_field(p, "kind")?,
            )),
            "olm.package.required" => Some(package_required(
                &go_field(p, "packageName")?,
                &go_field(p, "versionRange")?,
            )?),
            "olm.label.required" => Some(Predicate::Label(go_field(p, "label")?)),
            _ => None,
        };
        out.extend(pred);
    }
    Ok(out)
}

/// A string field as `json.Unmarshal` into the legacy parsers' structs reads it, with its
/// error worded as Go's.
fn go_field(p: &Property, key: &str) -> Result<String, String> {
    if p.json.is_none() {
        return Err(format!(
            "invalid character in the value of property {}: {}",
            p.type_, p.value
        ));
    }
    p.field(key).map(str::to_string).map_err(|_| {
        format!(
            "json: cannot unmarshal the value of property {} into a struct with string field {key}",
            p.type_
        )
    })
}

/// `newPackageRequiredPredicate`: the package and a blang range.
fn package_required(name: &str, range: &str) -> Result<Predicate, String> {
    let r = Range::parse(range).map_err(|e| e.message)?;
    Ok(Predicate::And(vec![
        Predicate::Pkg(name.to_string()),
        Predicate::VersionInRange(r, range.to_string()),
    ]))
}

/// `predicateForConstraintProperty`.
fn constraint_property(value: &str) -> Result<Predicate, String> {
    if value.len() > MAX_CONSTRAINT_SIZE {
        return Err(format!(
            "parse olm.constraint: olm.constraint value is greater than max constraint size {MAX_CONSTRAINT_SIZE} bytes"
        ));
    }
    let v: Value = serde_json::from_str(value).map_err(|e| format!("parse olm.constraint: {e}"))?;
    let c = Constraint::parse(&v).map_err(|e| format!("parse olm.constraint: {e}"))?;
    c.predicate()
        .map_err(|e| format!("convert olm.constraint to resolver predicate: {e}"))
}

/// `constraints.Constraint`.
#[derive(Debug, Default)]
struct Constraint {
    failure_message: String,
    cel: Option<String>,
    package: Option<(String, String)>,
    gvk: Option<(String, String, String)>,
    all: Option<Vec<Constraint>>,
    any: Option<Vec<Constraint>>,
    not: Option<Vec<Constraint>>,
}

/// The value of `key` in `m` as Go's decoder finds a struct field: the exact key, else a
/// case-insensitive one.
fn lookup<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).or_else(|| {
        m.iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
            .next_back()
    })
}

fn object<'a>(v: &'a Value, what: &str) -> Result<Option<&'a Map<String, Value>>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Object(m) => Ok(Some(m)),
        other => Err(format!(
            "json: cannot unmarshal {} into Go value of type {what}",
            go_kind(other)
        )),
    }
}

fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `DisallowUnknownFields`: every key of `m` must be one of `known` (case-insensitively).
fn known_fields(m: &Map<String, Value>, known: &[&str]) -> Result<(), String> {
    match m
        .keys()
        .find(|k| !known.iter().any(|f| f.eq_ignore_ascii_case(k)))
    {
        Some(k) => Err(format!("json: unknown field \"{k}\"")),
        None => Ok(()),
    }
}

fn string(m: &Map<String, Value>, key: &str, ty: &str) -> Result<String, String> {
    match lookup(m, key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field {ty}.{key} of type string",
            go_kind(other)
        )),
    }
}

impl Constraint {
    /// `Parse`: the decoder with `DisallowUnknownFields`.
    fn parse(v: &Value) -> Result<Constraint, String> {
        let Some(m) = object(v, "constraints.Constraint")? else {
            return Ok(Constraint::default());
        };
        known_fields(
            m,
            &[
                "failureMessage",
                "cel",
                "package",
                "gvk",
                "all",
                "any",
                "not",
            ],
        )?;
        let mut c = Constraint {
            failure_message: string(m, "failureMessage", "Constraint")?,
            ..Constraint::default()
        };
        if let Some(v) = lookup(m, "cel")
            && let Some(cm) = object(v, "constraints.Cel")?
        {
            known_fields(cm, &["rule"])?;
            c.cel = Some(string(cm, "rule", "Cel")?);
        }
        if let Some(v) = lookup(m, "package")
            && let Some(pm) = object(v, "constraints.PackageConstraint")?
        {
            known_fields(pm, &["packageName", "versionRange"])?;
            c.package = Some((
                string(pm, "packageName", "PackageConstraint")?,
                string(pm, "versionRange", "PackageConstraint")?,
            ));
        }
        if let Some(v) = lookup(m, "gvk")
            && let Some(gm) = object(v, "constraints.GVKConstraint")?
        {
            known_fields(gm, &["group", "kind", "version"])?;
            c.gvk = Some((
                string(gm, "group", "GVKConstraint")?,
                string(gm, "version", "GVKConstraint")?,
                string(gm, "kind", "GVKConstraint")?,
            ));
        }
        for (key, slot) in [
            ("all", &mut c.all),
            ("any", &mut c.any),
            ("not", &mut c.not),
        ] {
            if let Some(v) = lookup(m, key)
                && let Some(cm) = object(v, "constraints.CompoundConstraint")?
            {
                known_fields(cm, &["constraints"])?;
                let list = match lookup(cm, "constraints") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(Constraint::parse)
                        .collect::<Result<_, _>>()?,
                    Some(other) => {
                        return Err(format!(
                            "json: cannot unmarshal {} into Go struct field CompoundConstraint.constraints of type []constraints.Constraint",
                            go_kind(other)
                        ));
                    }
                };
                *slot = Some(list);
            }
        }
        Ok(c)
    }

    /// `convertConstraints` for one constraint: the first field set, in OLM's order.
    fn predicate(&self) -> Result<Predicate, String> {
        let many = |cs: &[Constraint]| -> Result<Vec<Predicate>, String> {
            cs.iter().map(Constraint::predicate).collect()
        };
        if let Some((g, v, k)) = &self.gvk {
            Ok(Predicate::ProvidingApi(g.clone(), v.clone(), k.clone()))
        } else if let Some((name, range)) = &self.package {
            package_required(name, range)
        } else if let Some(cs) = &self.all {
            Ok(Predicate::And(many(cs)?))
        } else if let Some(cs) = &self.any {
            Ok(Predicate::Or(many(cs)?))
        } else if let Some(cs) = &self.not {
            Ok(Predicate::Not(many(cs)?))
        } else if let Some(rule) = &self.cel {
            let program = super::cel::Program::compile(rule)?;
            Ok(Predicate::Cel(
                program,
                rule.clone(),
                self.failure_message.clone(),
            ))
        } else {
            Err("constraint is empty".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(props: &[(&str, &str)]) -> Result<Vec<String>, String> {
        let ps: Vec<Property> = props.iter().map(|(t, v)| Property::new(*t, *v)).collect();
        dependencies(&ps).map(|d| d.iter().map(|p| p.to_string()).collect())
    }

    #[test]
    fn resolve_requirement_texts_as_olm_writes_them() {
        assert_eq!(
            strings(&[
                ("olm.package", r#"{"packageName":"x","version":"1.0.0"}"#),
                ("olm.package.required", r#"{"packageName":"foo","versionRange":">=1.0.0"}"#),
                ("olm.gvk.required", r#"{"group":"g","version":"v1","kind":"K"}"#),
                ("olm.label.required", r#"{"label":"l"}"#),
                (
                    "olm.constraint",
                    r#"{"any":{"constraints":[{"gvk":{"group":"g","version":"v","kind":"K"}},{"not":{"constraints":[{"package":{"packageName":"p","versionRange":"<2.0.0"}}]}}]}}"#
                ),
            ]),
            Ok(vec![
                "with package: foo and with version in range: >=1.0.0".to_string(),
                "providing an API with group: g, version: v1, kind: K".to_string(),
                "with label: l".to_string(),
                "providing an API with group: g, version: v, kind: K or with package: p and with version in range: <2.0.0".to_string(),
            ])
        );
    }

    #[test]
    fn resolve_constraint_errors_as_olm_words_them() {
        assert_eq!(
            strings(&[("olm.constraint", r#"{"foo":{}}"#)]),
            Err("parse olm.constraint: json: unknown field \"foo\"".into())
        );
        assert_eq!(
            strings(&[("olm.constraint", r#"{"failureMessage":"m"}"#)]),
            Err("convert olm.constraint to resolver predicate: constraint is empty".into())
        );
        let big = format!(
            r#"{{"failureMessage":"{}"}}"#,
            "x".repeat(MAX_CONSTRAINT_SIZE)
        );
        assert!(
            strings(&[("olm.constraint", &big)])
                .unwrap_err()
                .contains("greater than max constraint size 131072 bytes")
        );
        assert!(
            strings(&[(
                "olm.package.required",
                r#"{"packageName":"a","versionRange":">v1"}"#
            )])
            .unwrap_err()
            .starts_with("Could not parse Range")
        );
    }
}
