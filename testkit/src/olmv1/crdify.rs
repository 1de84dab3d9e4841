//! The double's own CRD upgrade-safety preflight, written from operator-controller
//! `rukpak/preflights/crdupgradesafety/crdupgradesafety.go :: Preflight.runPreflight,
//! crdWideErrors, sameVersionErrors` and sigs.k8s.io/crdify (`pkg/validations/crd/*`,
//! `validations/compare.go :: CompareVersions, checkUnhandled`, `validations/util.go ::
//! SchemaHas, FlattenCRDVersion`):
//!
//! - CRD-wide, as crdify words them: `existingFieldRemoval: removed field : <version>.<path>`
//!   for each field of a version in both CRDs that the new one lacks, `scope: scope changed :
//!   "A" -> "B"`, `storedVersionRemoval: stored versions removed : [v]`;
//! - per version in both, per property in both (its children left out): a change other than
//!   its description (not enforced by operator-controller) or enum values added (allowed) is
//!   refused as `<version>: <property>: unhandled: unhandled changes found`. Upstream names the
//!   check that refuses it (type, enum, required, ...) and the change; the double does not
//!   model those messages, only that the install stops.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Each field's simple path below `^` (`^.spec.list.items.name`), its schema without the
/// children (`FlattenCRDVersion`: `properties` and `items` cleared).
fn flatten(s: &Value, path: &str, out: &mut BTreeMap<String, Value>) {
    let Some(m) = s.as_object() else { return };
    let mut own = m.clone();
    own.remove("properties");
    own.remove("items");
    out.insert(path.to_string(), Value::Object(own));
    match &s["items"] {
        Value::Object(_) => flatten(&s["items"], &format!("{path}.items"), out),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(x, &format!("{path}.items[{i}]"), out);
            }
        }
        _ => {}
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for (i, x) in s[key].as_array().into_iter().flatten().enumerate() {
            flatten(x, &format!("{path}.{key}[{i}]"), out);
        }
    }
    if s["not"].is_object() {
        flatten(&s["not"], &format!("{path}.not"), out);
    }
    for (k, x) in s["properties"].as_object().into_iter().flatten() {
        flatten(x, &format!("{path}.{k}"), out);
    }
    if s["additionalProperties"].is_object() {
        flatten(
            &s["additionalProperties"],
            &format!("{path}.additionalProperties"),
            out,
        );
    }
    for (k, x) in s["patternProperties"].as_object().into_iter().flatten() {
        flatten(x, &format!("{path}.patternProperties[{k}]"), out);
    }
}

fn versions(crd: &Value) -> Vec<(String, BTreeMap<String, Value>)> {
    crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let mut fields = BTreeMap::new();
            flatten(&v["schema"]["openAPIV3Schema"], "^", &mut fields);
            (v["name"].as_str().unwrap_or_default().to_string(), fields)
        })
        .collect()
}

/// Whether replacing `old` by `new` changes property schema `a` into `b` in a way the
/// preflight refuses.
fn refused_change(a: &Value, b: &Value) -> bool {
    let mut a = a.clone();
    let mut b = b.clone();
    for s in [&mut a, &mut b] {
        if let Some(m) = s.as_object_mut() {
            m.remove("description");
        }
    }
    // Enum values may be added, not removed.
    let enum_of = |v: &Value| -> Option<Vec<Value>> { v.get("enum")?.as_array().cloned() };
    if let (Some(ea), Some(eb)) = (enum_of(&a), enum_of(&b))
        && ea.iter().all(|x| eb.contains(x))
    {
        for s in [&mut a, &mut b] {
            if let Some(m) = s.as_object_mut() {
                m.remove("enum");
            }
        }
    }
    a != b
}

/// What the preflight refuses in replacing the live CRD `old` by `new`, one message per
/// failure (empty: it passes).
pub fn preflight(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (old_v, new_v) = (versions(old), versions(new));
    for (name, fields) in &new_v {
        let Some((_, before)) = old_v.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let removed: BTreeSet<&String> =
            before.keys().filter(|k| !fields.contains_key(*k)).collect();
        for f in removed {
            out.push(format!("existingFieldRemoval: removed field : {name}.{f}"));
        }
    }
    let scope = |c: &Value| c["spec"]["scope"].as_str().unwrap_or_default().to_string();
    if scope(old) != scope(new) {
        out.push(format!(
            "scope: scope changed : {:?} -> {:?}",
            scope(old),
            scope(new)
        ));
    }
    let kept: BTreeSet<&str> = new_v.iter().map(|(n, _)| n.as_str()).collect();
    let removed: Vec<&str> = old["status"]["storedVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|v| !kept.contains(v))
        .collect();
    if !removed.is_empty() {
        out.push(format!(
            "storedVersionRemoval: stored versions removed : [{}]",
            removed.join(" ")
        ));
    }
    for (name, fields) in &new_v {
        let Some((_, before)) = old_v.iter().find(|(n, _)| n == name) else {
            continue;
        };
        for (prop, b) in fields {
            if let Some(a) = before.get(prop)
                && refused_change(a, b)
            {
                out.push(format!(
                    "{name}: {prop}: unhandled: unhandled changes found"
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(scope: &str, spec_props: Value, stored: &[&str]) -> Value {
        json!({"spec": {"scope": scope, "versions": [{"name": "v1", "schema": {"openAPIV3Schema":
            {"type": "object", "properties": {"spec": {"type": "object", "properties": spec_props}}}}}]},
            "status": {"storedVersions": stored}})
    }

    #[test]
    fn what_the_preflight_refuses() {
        let old = crd(
            "Namespaced",
            json!({"a": {"type": "string", "enum": ["x"]}, "b": {"type": "string"}}),
            &["v1"],
        );
        assert!(preflight(&old, &old).is_empty());
        // A description changed and an enum value added pass.
        let ok = crd(
            "Namespaced",
            json!({"a": {"type": "string", "enum": ["x", "y"], "description": "d"}, "b": {"type": "string"}}),
            &["v1"],
        );
        assert!(preflight(&old, &ok).is_empty());
        let gone = crd(
            "Namespaced",
            json!({"a": {"type": "string", "enum": ["x"]}}),
            &["v1"],
        );
        assert_eq!(
            preflight(&old, &gone),
            ["existingFieldRemoval: removed field : v1.^.spec.b"]
        );
        let typed = crd(
            "Cluster",
            json!({"a": {"type": "integer", "enum": ["x"]}, "b": {"type": "string"}}),
            &["v1"],
        );
        assert_eq!(
            preflight(&old, &typed),
            [
                "scope: scope changed : \"Namespaced\" -> \"Cluster\"",
                "v1: ^.spec.a: unhandled: unhandled changes found"
            ]
        );
        let mut other = crd("Namespaced", json!({}), &["v2"]);
        other["spec"]["versions"][0]["name"] = json!("v2");
        assert_eq!(
            preflight(&old, &other),
            ["storedVersionRemoval: stored versions removed : [v1]"]
        );
    }
}
