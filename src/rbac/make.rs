//! RBAC objects as JSON: a Role or ClusterRole, and a binding of one to a ServiceAccount.

use serde_json::{Value, json};

fn metadata(name: &str, namespace: &str, labels: Option<&Value>) -> Value {
    let mut meta = json!({ "name": name });
    if !namespace.is_empty() {
        meta["namespace"] = json!(namespace);
    }
    if let Some(l) = labels {
        meta["labels"] = l.clone();
    }
    meta
}

/// A `Role` (in `namespace`) or `ClusterRole` (`namespace` empty) with these rules.
pub fn role(
    kind: &str,
    name: &str,
    namespace: &str,
    rules: Value,
    labels: Option<&Value>,
) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata(name, namespace, labels),
        "rules": rules,
    })
}

/// The `RoleBinding` (in `namespace`) or `ClusterRoleBinding` of `role` (`role_kind`) to the
/// ServiceAccount `sa` of namespace `sa_namespace`.
pub fn binding(
    kind: &str,
    name: &str,
    namespace: &str,
    (role_kind, role): (&str, &str),
    (sa, sa_namespace): (&str, &str),
    labels: Option<&Value>,
) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata(name, namespace, labels),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_namespace}],
    })
}
