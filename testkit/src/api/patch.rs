//! `PATCH` bodies (cluster.md §2.4; `endpoints/handlers/patch.go :: PatchResource`):
//!
//! - `application/merge-patch+json`: RFC 7386;
//! - `application/json-patch+json`: RFC 6902, where `test` of a missing path against `null`
//!   passes (evanphx/json-patch as the apiserver vendors it);
//! - `application/apply-patch+yaml` (server-side apply): `fieldManager` is required, `force`
//!   only allowed here; applying to a missing object creates it. Field ownership is modelled
//!   per apply manager only: a manager owns the leaf fields it applied; another apply manager
//!   setting an owned field to another value without `force` conflicts (409 with
//!   `FieldManagerConflict` causes and the message of `conflict.go :: NewConflictError`);
//!   fields a manager applied before and no longer applies are removed. Ownership through
//!   `Update` operations (PUT, merge patches) is NOT modelled: such writes never conflict with
//!   an apply here, where a real server would report a conflict with their manager;
//! - `application/strategic-merge-patch+json`: refused with 415 for custom resources (R2.11);
//!   for built-in kinds applied as a merge patch (list merge keys are not modelled).
//!
//! The body of an apply patch must be JSON (what kubectl sends); YAML bodies are refused. Before
//! any of this, the server refuses an apply patch of a custom resource that sets a field the
//! version's schema does not declare, as the typed conversion of `structuredmerge.go` does
//! (500, whatever `fieldValidation` says).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The patch types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 7386.
    Merge,
    /// RFC 6902.
    Json,
    /// Server-side apply.
    Apply,
    /// Strategic merge patch.
    Strategic,
}

impl PatchType {
    /// From a `Content-Type` (a `;charset=` suffix is ignored).
    pub fn parse(content_type: &str) -> Option<PatchType> {
        match content_type.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/json-patch+json" => Some(PatchType::Json),
            "application/apply-patch+yaml" => Some(PatchType::Apply),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            _ => None,
        }
    }
}

/// Applies a JSON patch to `doc`.
pub fn json_patch(doc: &mut Value, body: &Value) -> Result<(), String> {
    let ops: json_patch::Patch =
        serde_json::from_value(body.clone()).map_err(|e| format!("json patch: {e}"))?;
    let ops: Vec<json_patch::PatchOperation> = ops
        .0
        .into_iter()
        .filter(|op| match op {
            json_patch::PatchOperation::Test(t) => {
                !(t.value.is_null() && doc.pointer(t.path.as_str()).is_none())
            }
            _ => true,
        })
        .collect();
    json_patch::patch(doc, &ops).map_err(|e| e.to_string())
}

/// Leaf fields of an applied configuration, as JSON pointers (lists are one atomic field).
fn leaves(v: &Value, at: String, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                leaves(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        other => {
            out.insert(at, other.clone());
        }
    }
}

/// Merges an applied configuration into `live` (maps recursively, lists and scalars
/// replaced).
fn overlay(live: &mut Value, applied: &Value) {
    match (live, applied) {
        (Value::Object(l), Value::Object(a)) => {
            for (k, v) in a {
                match l.get_mut(k) {
                    Some(x) if x.is_object() && v.is_object() => overlay(x, v),
                    _ => {
                        l.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (l, a) => *l = a.clone(),
    }
}

fn remove_pointer(v: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(m)) = v.pointer_mut(parent) {
        m.remove(&key);
        if m.is_empty() && !parent.is_empty() {
            remove_pointer(v, parent);
        }
    }
}

/// What an apply manager owns: its leaf fields and their values.
pub type Owned = BTreeMap<String, BTreeMap<String, Value>>;

/// A failed apply.
#[derive(Debug)]
pub struct ApplyConflict {
    /// `(manager, field path)` of every conflict.
    pub conflicts: Vec<(String, String)>,
}

impl ApplyConflict {
    /// The 409 message (`conflict.go :: NewConflictError`).
    pub fn message(&self) -> String {
        let items: Vec<String> = self
            .conflicts
            .iter()
            .map(|(m, f)| format!("conflict with \"{m}\": {f}"))
            .collect();
        match items.len() {
            1 => format!("Apply failed with 1 conflict: {}", items[0]),
            n => format!("Apply failed with {n} conflicts: {}", items.join("\n")),
        }
    }

    /// `details.causes`.
    pub fn causes(&self) -> Value {
        json!(
            self.conflicts
                .iter()
                .map(|(m, f)| json!({"reason": "FieldManagerConflict",
                    "message": format!("conflict with \"{m}\""), "field": f}))
                .collect::<Vec<_>>()
        )
    }
}

/// A JSON pointer as SSA prints field paths (`.spec.replicas`).
fn dotted(pointer: &str) -> String {
    pointer
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| format!(".{}", s.replace("~1", "/").replace("~0", "~")))
        .collect()
}

/// Server-side apply of `applied` by `manager` onto `live` (none: a create). Returns the new
/// object and updates `owned`.
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    owned: &mut Owned,
) -> Result<Value, ApplyConflict> {
    let mut fields = BTreeMap::new();
    leaves(applied, String::new(), &mut fields);
    // Identity is not owned.
    fields.retain(|p, _| {
        !matches!(
            p.as_str(),
            "/apiVersion" | "/kind" | "/metadata/name" | "/metadata/namespace"
        ) && !p.starts_with("/metadata/resourceVersion")
    });
    let mut conflicts = Vec::new();
    for (m, theirs) in owned.iter() {
        if m == manager {
            continue;
        }
        for (p, v) in &fields {
            if let Some(tv) = theirs.get(p)
                && tv != v
            {
                conflicts.push((m.clone(), dotted(p)));
            }
        }
    }
    if !conflicts.is_empty() && !force {
        conflicts.sort();
        return Err(ApplyConflict { conflicts });
    }
    let mut out = live.cloned().unwrap_or_else(|| Value::Object(Map::new()));
    // Fields this manager applied before and no longer applies (and nobody else owns).
    if let Some(before) = owned.get(manager) {
        for p in before.keys() {
            let other = owned.iter().any(|(m, f)| m != manager && f.contains_key(p));
            if !fields.contains_key(p) && !other {
                remove_pointer(&mut out, p);
            }
        }
    }
    overlay(&mut out, applied);
    if force {
        for (m, theirs) in owned.iter_mut() {
            if m != manager {
                theirs.retain(|p, _| !fields.contains_key(p));
            }
        }
    }
    owned.insert(manager.to_string(), fields);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_creates_merges_removes_and_conflicts() {
        let mut owned = Owned::new();
        let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"x": "1", "y": "2"}});
        let o = apply(None, &a, "kubectl", false, &mut owned).expect("create");
        assert_eq!(o["data"], json!({"x": "1", "y": "2"}));
        // The same manager drops y: it goes.
        let b = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"x": "1"}});
        let o = apply(Some(&o), &b, "kubectl", false, &mut owned).expect("update");
        assert_eq!(o["data"], json!({"x": "1"}));
        // Another manager sets x differently: a conflict, unless forced.
        let c = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"x": "3"}});
        let e = apply(Some(&o), &c, "other", false, &mut owned).expect_err("conflict");
        assert_eq!(
            e.message(),
            "Apply failed with 1 conflict: conflict with \"kubectl\": .data.x"
        );
        let o = apply(Some(&o), &c, "other", true, &mut owned).expect("forced");
        assert_eq!(o["data"]["x"], "3");
        assert!(!owned["kubectl"].contains_key("/data/x"));
    }

    #[test]
    fn json_patch_test_of_a_missing_path_against_null_passes() {
        let mut d = json!({"metadata": {}});
        json_patch(
            &mut d,
            &json!([{"op": "test", "path": "/metadata/finalizers", "value": null},
                    {"op": "add", "path": "/metadata/finalizers", "value": ["f"]}]),
        )
        .expect("patch");
        assert_eq!(d["metadata"]["finalizers"], json!(["f"]));
        assert!(
            json_patch(
                &mut d,
                &json!([{"op": "test", "path": "/metadata/finalizers", "value": ["g"]}])
            )
            .is_err()
        );
    }
}
