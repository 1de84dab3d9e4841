//! The objects an InstallPlan is about to apply: `status.plan[].resource.manifest` holds either
//! the object itself (compact JSON) or a reference to the unpacked-bundle ConfigMap, which the
//! gate follows as OLM does (operator.md §3.5):
//!
//! - a reference is JSON with `kind: ConfigMap` and non-empty `name`, `namespace`,
//!   `catalogSourceName` and `catalogSourceNamespace`; anything else is the object;
//! - the ConfigMap's files are in `binaryData` as base64(base64(gzip(file))) when annotated
//!   `olm.contentEncoding: gzip+base64`, else plain in `data`; each file is decoded as a YAML or
//!   JSON object (files that are not objects are skipped), keys in sorted order;
//! - the step's object is the bundle object with the step's kind and name; the CSV gets OLM's
//!   rewrites: `metadata.namespace` (the plan's), `spec.replaces` and the
//!   `operatorframework.io/properties` annotation from the reference.
//!
//! Missing content is an error (the gate holds the plan), never a guess.

use std::io::Read;

use super::objects::{Object, Objects};
use crate::bundle::load::str_at;
use crate::fbc::node::{Node, Value};

/// Step kinds OLM synthesizes from the CSV's install strategy (not files of the bundle).
pub const RBAC: [&str; 5] = [
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
];

/// The reference fields of a manifest, when it is one.
struct Reference {
    name: String,
    namespace: String,
    replaces: String,
    properties: String,
}

fn reference(m: &Node) -> Option<Reference> {
    let s = |k: &str| str_at(m, &[k]).unwrap_or_default().to_string();
    if str_at(m, &["kind"]) != Some("ConfigMap") {
        return None;
    }
    let r = Reference {
        name: s("name"),
        namespace: s("namespace"),
        replaces: s("replaces"),
        properties: s("properties"),
    };
    let complete = !r.name.is_empty()
        && !r.namespace.is_empty()
        && !s("catalogSourceName").is_empty()
        && !s("catalogSourceNamespace").is_empty();
    complete.then_some(r)
}

/// The unpacked-bundle ConfigMap (namespace, name) that a step's manifest text references, when
/// it is a reference (the operator fetches those ConfigMaps before it decides).
pub fn referenced_config_map(manifest: &str) -> Option<(String, String)> {
    let mut first = None;
    crate::fbc::json::parse_stream(manifest, |d| {
        if first.is_none() {
            first = Some(d);
        }
    })
    .ok()?;
    let r = reference(&first?)?;
    Some((r.namespace, r.name))
}

fn decode_file(cm: &Object, key: &str, raw: &str, gzip: bool) -> Result<String, String> {
    let what = || format!("ConfigMap {}/{} key {key}", cm.namespace(), cm.name());
    if !gzip {
        return Ok(raw.to_string());
    }
    let b64 = crate::checks::bundle::hub::decode_base64(raw.trim())
        .ok_or_else(|| format!("{}: not base64", what()))?;
    let b64 = String::from_utf8(b64)
        .map_err(|_| format!("{}: inner content is not base64 text", what()))?;
    let gz = crate::checks::bundle::hub::decode_base64(b64.trim())
        .ok_or_else(|| format!("{}: inner content is not base64", what()))?;
    let mut out = String::new();
    // Bounded: a ConfigMap holds at most 1 MiB; refuse anything that inflates beyond 64 MiB.
    flate2::read::GzDecoder::new(gz.as_slice())
        .take(64 << 20)
        .read_to_string(&mut out)
        .map_err(|e| format!("{}: {e}", what()))?;
    Ok(out)
}

/// The bundle objects of an unpacked-bundle ConfigMap, in key order.
pub fn bundle_objects(cm: &Object) -> Result<Vec<Node>, String> {
    let gzip = str_at(
        &cm.node,
        &["metadata", "annotations", "olm.contentEncoding"],
    ) == Some("gzip+base64");
    let section = if gzip { "binaryData" } else { "data" };
    let mut files: Vec<(&str, &str)> =
        match crate::bundle::load::field(&cm.node, &[section]).map(|n| &n.value) {
            Some(Value::Map(entries)) => entries
                .iter()
                .filter_map(|e| match &e.value.value {
                    Value::Str(v) => Some((e.key.as_str(), v.as_str())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
    files.sort();
    let mut out = Vec::new();
    for (key, raw) in files {
        let text = decode_file(cm, key, raw, gzip)?;
        if let Ok(Some(n)) = crate::fbc::yaml::first_document(&text)
            && str_at(&n, &["kind"]).is_some()
        {
            out.push(n);
        }
    }
    Ok(out)
}

/// Sets the string at `path` (objects created where missing).
fn set(n: &mut Node, path: &[&str], value: &str) {
    if let Some((last, parents)) = path.split_last() {
        crate::bundle::tree::set(
            crate::bundle::tree::ensure_obj(n, parents),
            last,
            crate::bundle::tree::s(value),
        );
    }
}

/// The object step `step` of `plan` applies, from its inline manifest or the unpacked bundle.
pub fn step_object(plan: &Object, step: &Node, objects: &Objects) -> Result<Node, String> {
    let kind = str_at(step, &["resource", "kind"]).unwrap_or_default();
    let name = str_at(step, &["resource", "name"]).unwrap_or_default();
    let manifest = str_at(step, &["resource", "manifest"])
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| format!("step {kind} {name} has no manifest yet"))?;
    let mut parsed = None;
    crate::fbc::json::parse_object_stream(manifest, |n| {
        if parsed.is_none() {
            parsed = Some(n);
        }
    })
    .map_err(|e| format!("step {kind} {name}: manifest is not JSON: {}", e.message))?;
    let m = parsed.ok_or_else(|| format!("step {kind} {name}: empty manifest"))?;
    let Some(r) = reference(&m) else {
        return Ok(m);
    };
    let cm = objects
        .config_maps
        .iter()
        .find(|c| c.name() == r.name && c.namespace() == r.namespace)
        .ok_or_else(|| {
            format!(
                "error finding unpacked bundle configmap {}/{} for step {kind} {name}",
                r.namespace, r.name
            )
        })?;
    let mut obj = cm
        .bundle_objects()?
        .iter()
        .find(|o| {
            str_at(o, &["kind"]) == Some(kind) && str_at(o, &["metadata", "name"]) == Some(name)
        })
        .cloned()
        .ok_or_else(|| {
            if RBAC.contains(&kind) {
                format!("step {kind} {name} is synthesized by OLM from the CSV's install strategy; it is not a bundle file")
            } else {
                format!(
                    "couldn't find unpacked step for {kind} {name} in ConfigMap {}/{}",
                    r.namespace, r.name
                )
            }
        })?;
    if kind == "ClusterServiceVersion" {
        set(&mut obj, &["metadata", "namespace"], plan.namespace());
        set(&mut obj, &["spec", "replaces"], &r.replaces);
        set(
            &mut obj,
            &["metadata", "annotations", "operatorframework.io/properties"],
            &r.properties,
        );
    }
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step of the example plan resolves; the CSV from the ConfigMap carries OLM's
    /// rewrites and equals the new CSV on the cluster where both set the same fields.
    #[test]
    fn the_example_plan_resolves() {
        let o = super::super::objects::example_objects();
        let plan = &o.install_plans[0];
        let steps = crate::bundle::load::list_at(&plan.node, &["status", "plan"]);
        assert!(!steps.is_empty());
        let mut kinds = Vec::new();
        let mut csv_checked = 0;
        for s in steps {
            let kind = str_at(s, &["resource", "kind"]).unwrap_or_default();
            let by_ref = str_at(s, &["resource", "manifest"])
                .is_some_and(|m| m.contains("\"kind\":\"ConfigMap\""));
            if RBAC.contains(&kind) && by_ref {
                let e = step_object(plan, s, &o).expect_err("RBAC is synthesized");
                assert!(e.contains("synthesized by OLM"), "{e}");
                continue;
            }
            let obj = step_object(plan, s, &o).unwrap_or_else(|e| panic!("{e}"));
            kinds.push(kind.to_string());
            if str_at(s, &["resource", "kind"]) == Some("ClusterServiceVersion")
                && str_at(s, &["resource", "name"]) == Some("acme-db-operator.v1.5.0")
            {
                assert_eq!(
                    str_at(&obj, &["metadata", "namespace"]),
                    Some(plan.namespace())
                );
                assert_eq!(
                    str_at(&obj, &["spec", "replaces"]),
                    Some("acme-db-operator.v1.4.2")
                );
                csv_checked += 1;
                assert!(
                    str_at(
                        &obj,
                        &["metadata", "annotations", "operatorframework.io/properties"]
                    )
                    .is_some_and(|p| p.contains("olm.package"))
                );
                assert_eq!(str_at(&obj, &["spec", "version"]), Some("1.5.0"));
            }
        }
        assert_eq!(
            csv_checked, 1,
            "the new CSV's step was resolved and checked"
        );
        assert!(
            kinds.iter().any(|k| k == "CustomResourceDefinition"),
            "{kinds:?}"
        );
    }

    #[test]
    fn missing_content_is_an_error() {
        let o = super::super::objects::example_objects();
        let plan = &o.install_plans[0];
        let step_of = |m: &str| -> Node {
            let text =
                format!("resource: {{kind: ClusterServiceVersion, name: x, manifest: {m:?}}}\n");
            let mut n = None;
            crate::fbc::yaml::parse_documents(&text, |d| n = Some(d)).expect("yaml");
            n.expect("doc")
        };
        let e = step_object(plan, &step_of(""), &o).expect_err("no manifest");
        assert!(e.contains("no manifest yet"), "{e}");
        let r = r#"{"kind":"ConfigMap","name":"nope","namespace":"olm","catalogSourceName":"c","catalogSourceNamespace":"olm","replaces":"","properties":""}"#;
        let e = step_object(plan, &step_of(r), &o).expect_err("no configmap");
        assert!(
            e.contains("error finding unpacked bundle configmap olm/nope"),
            "{e}"
        );
        // Inline: the object itself.
        let inline =
            step_object(plan, &step_of(r#"{"metadata":{"name":"x"}}"#), &o).expect("inline");
        assert_eq!(str_at(&inline, &["metadata", "name"]), Some("x"));
        let e = step_object(plan, &step_of("{not json"), &o).expect_err("broken");
        assert!(e.contains("not JSON"), "{e}");
    }
}
