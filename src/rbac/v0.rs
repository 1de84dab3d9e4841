//! The RBAC objects OLM v0 makes for a bundle, for the permissions review: for each CSV
//! `permissions` entry a Role and RoleBinding in the install namespace, lifted to a ClusterRole
//! and ClusterRoleBinding with the extra `namespaces` rule under an AllNamespaces
//! OperatorGroup; for each `clusterPermissions` entry a ClusterRole and ClusterRoleBinding; and
//! the bundle's own RBAC manifests, Roles and RoleBindings placed in the install namespace
//! (`pkg/controller/registry/resolver/rbac.go :: RBACForClusterServiceVersion`;
//! `pkg/controller/operators/olm/operatorgroup.go :: ensureSingletonRBAC`;
//! `resolver/steps.go :: NewStepResourceFromBundle`).
//!
//! OLM names its roles with a hash (`generateName`); these objects are named
//! `<csv>-<serviceAccount>-<n>` instead, which only the review's text shows.

use serde_json::{Value, json};

use crate::bundle::load::BundleDir;

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The bundle's objects as JSON (every document of `manifests/`).
pub fn bundle_objects(bundle: &BundleDir) -> Vec<Value> {
    bundle
        .manifests
        .iter()
        .flat_map(|m| m.docs.iter())
        .filter_map(|d| serde_json::from_str(&d.to_json()).ok())
        .collect()
}

fn rbac(kind: &str, name: &str, ns: &str, rules: &Value) -> Value {
    super::make::role(kind, name, ns, rules.clone(), None)
}

fn bind(kind: &str, name: &str, ns: &str, role_kind: &str, sa: &str, sa_ns: &str) -> Value {
    super::make::binding(kind, name, ns, (role_kind, name), (sa, sa_ns), None)
}

/// OLM v0's RBAC objects for a bundle (its manifests as JSON, [`bundle_objects`]) installed in
/// `namespace`, with an AllNamespaces OperatorGroup when the CSV supports that install mode (the
/// usual OperatorGroup for such an operator), else one targeting its own namespace.
pub fn objects(all: &[Value], namespace: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let Some(csv) = all
        .iter()
        .find(|o| str_at(o, "/kind") == "ClusterServiceVersion")
    else {
        return out;
    };
    let all_namespaces = csv
        .pointer("/spec/installModes")
        .and_then(Value::as_array)
        .is_some_and(|m| {
            m.iter()
                .any(|m| m["type"] == "AllNamespaces" && m["supported"] == true)
        });
    let csv_name = str_at(csv, "/metadata/name");
    let spec = csv
        .pointer("/spec/install/spec")
        .cloned()
        .unwrap_or(Value::Null);
    let entries = |key: &str| {
        spec.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let sa_of = |p: &Value| {
        let sa = str_at(p, "/serviceAccountName");
        if sa.is_empty() {
            "default".to_string()
        } else {
            sa.to_string()
        }
    };
    for (i, p) in entries("permissions").iter().enumerate() {
        let sa = sa_of(p);
        let name = format!("{csv_name}-{sa}-{i}");
        let rules = p.get("rules").cloned().unwrap_or(json!([]));
        out.push(rbac("Role", &name, namespace, &rules));
        out.push(bind(
            "RoleBinding",
            &name,
            namespace,
            "Role",
            &sa,
            namespace,
        ));
        if all_namespaces {
            let mut lifted = rules.as_array().cloned().unwrap_or_default();
            lifted.push(json!({"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]}));
            out.push(rbac("ClusterRole", &name, "", &Value::Array(lifted)));
            out.push(bind(
                "ClusterRoleBinding",
                &name,
                "",
                "ClusterRole",
                &sa,
                namespace,
            ));
        }
    }
    for (i, p) in entries("clusterPermissions").iter().enumerate() {
        let sa = sa_of(p);
        let name = format!("{csv_name}-{sa}-cluster-{i}");
        let rules = p.get("rules").cloned().unwrap_or(json!([]));
        out.push(rbac("ClusterRole", &name, "", &rules));
        out.push(bind(
            "ClusterRoleBinding",
            &name,
            "",
            "ClusterRole",
            &sa,
            namespace,
        ));
    }
    for o in all {
        let kind = str_at(o, "/kind");
        if matches!(kind, "Role" | "RoleBinding") {
            let mut o = o.clone();
            o["metadata"]["namespace"] = json!(namespace);
            out.push(o);
        } else if matches!(kind, "ClusterRole" | "ClusterRoleBinding") {
            out.push(o.clone());
        }
    }
    out
}
