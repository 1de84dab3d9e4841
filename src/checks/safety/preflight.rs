//! OLM v1's CRD upgrade-safety preflight between two CRD objects, the one on the cluster and
//! the one a bundle brings (operator-controller `rukpak/preflights/crdupgradesafety ::
//! Preflight.runPreflight` with crdify's default checks, `enum` additions allowed): the scope
//! must stay, no stored version may go, and each version in both must pass the schema checks
//! (`schema::compare`, every change an error, SCH014 included). Messages follow upstream's
//! `sameVersionErrors`: `<version>: <property>: <check>: <message>`.

use serde_json::Value;

use super::schema;
use crate::fbc::node::Node;

fn node(v: &Value) -> Option<Node> {
    let mut out = None;
    crate::fbc::json::parse_object_stream(&v.to_string(), |n| {
        if out.is_none() {
            out = Some(n);
        }
    })
    .ok()?;
    out
}

/// crdify's check name for a schema change's code.
fn check_name(code: &str) -> &'static str {
    match code {
        "SCH001" => "existingFieldRemoval",
        "SCH002" => "default",
        "SCH003" => "enum",
        "SCH004" => "maximum",
        "SCH005" => "minimum",
        "SCH006" => "required",
        "SCH007" => "type",
        "SCH008" => "pattern",
        "SCH009" => "nullable",
        "SCH010" => "oneOf",
        _ => "unhandled",
    }
}

fn schema_of<'a>(crd: &'a Node, version: &str) -> Option<&'a Node> {
    let versions = crate::bundle::load::list_at(crd, &["spec", "versions"]);
    versions
        .iter()
        .find(|v| crate::bundle::load::str_at(v, &["name"]) == Some(version))
        .and_then(|v| crate::bundle::load::field(v, &["schema", "openAPIV3Schema"]))
}

/// What the preflight refuses in replacing `old` with `new` (empty: it passes).
pub fn crd_preflight_olmv1(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(o), Some(n)) = (node(old), node(new)) else {
        return vec!["unhandled: the CRDs do not parse".to_string()];
    };
    let scope = |v: &Value| {
        v.pointer("/spec/scope")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if scope(old) != scope(new) {
        out.push(format!(
            "scope: scope changed: {:?} -> {:?}",
            scope(old),
            scope(new)
        ));
    }
    let names = |v: &Value| -> Vec<String> {
        v.pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|x| x["name"].as_str().map(str::to_string))
            .collect()
    };
    let new_versions = names(new);
    for stored in old
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !new_versions.iter().any(|v| v == stored) {
            out.push(format!(
                "storedVersionRemoval: stored version {stored:?} removed"
            ));
        }
    }
    for v in names(old) {
        if let (Some(a), Some(b)) = (schema_of(&o, &v), schema_of(&n, &v)) {
            for c in schema::compare(a, b, &schema::Options::default()) {
                out.push(format!(
                    "{v}: {}: {}: {}",
                    c.path,
                    check_name(c.code.code),
                    c.message
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

    fn crd(props: Value) -> Value {
        json!({"spec": {"scope": "Namespaced", "versions": [{"name": "v1", "schema": {"openAPIV3Schema":
            {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}}}]},
            "status": {"storedVersions": ["v1"]}})
    }

    #[test]
    fn the_preflight_refuses_what_crdify_refuses() {
        let old = crd(json!({"size": {"type": "integer"}}));
        assert!(crd_preflight_olmv1(&old, &old).is_empty());
        let typed = crd(json!({"size": {"type": "string"}}));
        let errs = crd_preflight_olmv1(&old, &typed);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with("v1: ^.spec.size: type: "), "{errs:?}");
        let gone = crd(json!({}));
        assert!(crd_preflight_olmv1(&old, &gone)[0].contains(": existingFieldRemoval: "));
        let mut renamed = old.clone();
        renamed["spec"]["versions"][0]["name"] = json!("v2");
        assert_eq!(
            crd_preflight_olmv1(&old, &renamed),
            ["storedVersionRemoval: stored version \"v1\" removed"]
        );
    }
}
