//! The RBAC OLM creates for a CSV, and the lift to cluster scope under an AllNamespaces
//! OperatorGroup (cluster.md §7):
//!
//! - the catalog operator turns each `permissions[]` entry into a Role and RoleBinding in the
//!   install namespace, each `clusterPermissions[]` entry into a ClusterRole and
//!   ClusterRoleBinding, named `generateName(...)` (`resolver/rbac.go ::
//!   RBACForClusterServiceVersion, generateName`, R7.1) and labelled with the CSV owner labels;
//!   a ServiceAccount per `serviceAccountName`;
//! - the OLM operator, when the OperatorGroup targets all namespaces and the permissions are
//!   not already granted at cluster scope, copies every owner-labelled Role and RoleBinding of
//!   the namespace to a ClusterRole and ClusterRoleBinding of the same name, with the extra
//!   rule to get, list and watch namespaces (`operatorgroup.go :: ensureRBACInTargetNamespace,
//!   ensureSingletonRBAC`, R7.2);
//! - Roles and RoleBindings that a bundle ships as manifests are created as they are, without
//!   owner labels, so they are never lifted (R7.3).
//!
//! The name hash is base62 of SHA-224 over this double's JSON of the inputs: the same length
//! and truncation rule as OLM's, not the same bytes.

use serde_json::{Value, json};
use sha2::{Digest, Sha224};

const MAX_NAME: usize = 63;

fn base62(bytes: &[u8]) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut n: Vec<u8> = bytes.to_vec();
    let mut out = Vec::new();
    while n.iter().any(|b| *b != 0) {
        let mut rem = 0u32;
        for b in n.iter_mut() {
            let cur = (rem << 8) | *b as u32;
            *b = (cur / 62) as u8;
            rem = cur % 62;
        }
        out.push(DIGITS[rem as usize]);
    }
    if out.is_empty() {
        out.push(b'0');
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// `generateName(base, o)`: `base` (cut so the name fits 63 characters), `-`, the hash.
pub fn generate_name(base: &str, o: &Value) -> String {
    let hash = base62(&Sha224::digest(o.to_string().as_bytes()));
    let mut base = base.to_string();
    if base.len() + hash.len() > MAX_NAME {
        base.truncate(MAX_NAME - hash.len() - 1);
    }
    format!("{base}-{hash}")
}

/// The CSV owner labels (`ownerutil.OwnerLabel`).
pub fn owner_labels(csv: &str, ns: &str) -> Value {
    json!({"olm.owner": csv, "olm.owner.kind": "ClusterServiceVersion", "olm.owner.namespace": ns,
           "olm.managed": "true"})
}

/// A non-blocking owner reference to the CSV (`ownerutil.NonBlockingOwner`).
pub fn csv_owner(csv: &Value) -> Value {
    json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
           "name": csv["metadata"]["name"], "uid": csv["metadata"]["uid"],
           "controller": false, "blockOwnerDeletion": false})
}

/// ServiceAccounts, Roles, RoleBindings, ClusterRoles and ClusterRoleBindings for `csv` (as
/// stored: with its uid) in namespace `ns`, in OLM's step order.
pub fn for_csv(csv: &Value, ns: &str) -> Vec<Value> {
    let name = csv["metadata"]["name"].as_str().unwrap_or_default();
    let spec = &csv["spec"]["install"]["spec"];
    let labels = owner_labels(name, ns);
    let mut out = Vec::new();
    let mut accounts: Vec<String> = Vec::new();
    let mut add_sa = |sa: &str, out: &mut Vec<Value>| {
        if sa != "default" && !accounts.iter().any(|a| a == sa) {
            accounts.push(sa.to_string());
            out.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": sa, "namespace": ns, "ownerReferences": [csv_owner(csv)],
                             "labels": {"olm.managed": "true"}}}));
        }
    };
    let perms = spec["permissions"].as_array().cloned().unwrap_or_default();
    let cluster = spec["clusterPermissions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for p in perms.iter().chain(&cluster) {
        add_sa(
            p["serviceAccountName"].as_str().unwrap_or_default(),
            &mut out,
        );
    }
    for p in &perms {
        let sa = p["serviceAccountName"].as_str().unwrap_or_default();
        let rname = generate_name(&format!("{name}-{sa}"), &json!([name, p]));
        let md = json!({"name": rname, "namespace": ns, "labels": labels,
                        "ownerReferences": [csv_owner(csv)]});
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                        "metadata": md, "rules": p["rules"]}),
        );
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": md,
            "roleRef": {"kind": "Role", "name": rname, "apiGroup": "rbac.authorization.k8s.io"},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]}),
        );
    }
    for p in &cluster {
        let sa = p["serviceAccountName"].as_str().unwrap_or_default();
        let rname = generate_name(name, &json!([name, ns, p]));
        let md = json!({"name": rname, "labels": labels});
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                        "metadata": md, "rules": p["rules"]}),
        );
        out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": md,
            "roleRef": {"kind": "ClusterRole", "name": rname, "apiGroup": "rbac.authorization.k8s.io"},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]}));
    }
    out
}

/// What the OLM operator adds under an AllNamespaces OperatorGroup (R7.2): from the
/// owner-labelled Roles and RoleBindings of `csv` in `ns` (given as stored), ClusterRoles
/// and ClusterRoleBindings of the same names. `granted` says whether the CSV's rules are
/// already granted at cluster scope (then nothing is lifted).
pub fn lift(csv: &str, ns: &str, roles_and_bindings: &[Value], granted: bool) -> Vec<Value> {
    if granted {
        return Vec::new();
    }
    let owned = |o: &Value| {
        o["metadata"]["labels"]["olm.owner"] == csv
            && o["metadata"]["labels"]["olm.owner.namespace"] == ns
            && o["metadata"]["labels"]["olm.owner.kind"] == "ClusterServiceVersion"
    };
    let mut out = Vec::new();
    for o in roles_and_bindings.iter().filter(|o| owned(o)) {
        let md = json!({"name": o["metadata"]["name"], "labels": o["metadata"]["labels"]});
        match o["kind"].as_str() {
            Some("Role") => {
                let mut rules = o["rules"].as_array().cloned().unwrap_or_default();
                rules.push(json!({"apiGroups": [""], "resources": ["namespaces"],
                                  "verbs": ["get", "list", "watch"]}));
                out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRole", "metadata": md, "rules": rules}));
            }
            Some("RoleBinding") => out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding", "metadata": md, "subjects": o["subjects"],
                "roleRef": {"kind": "ClusterRole", "name": o["roleRef"]["name"],
                            "apiGroup": "rbac.authorization.k8s.io"}})),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_63_characters() {
        let n = generate_name(&"x".repeat(80), &json!(["a"]));
        assert_eq!(n.len(), 63, "{n}");
        // SHA-224 in base62 is 37-38 characters: a long base is cut.
        let n = generate_name("olmctl-operator.v0.3.0-olmctl-operator", &json!(["a"]));
        assert!(
            n.len() <= 63 && n.starts_with("olmctl-operator.v0.3.0-o"),
            "{n}"
        );
        let n = generate_name("op.v1-op", &json!(["a"]));
        assert!(n.starts_with("op.v1-op-") && n.len() > 40, "{n}");
        assert_eq!(base62(&[0, 61]), "z");
        assert_eq!(base62(&[0, 62]), "10");
    }

    #[test]
    fn a_csv_gets_roles_and_the_lift_copies_the_owned_ones() {
        let csv = json!({"metadata": {"name": "op.v1", "uid": "u1"}, "spec": {"install": {"spec": {
            "permissions": [{"serviceAccountName": "op", "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}]}],
            "clusterPermissions": [{"serviceAccountName": "op", "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}]}}}});
        let objs = for_csv(&csv, "ns");
        let kinds: Vec<&str> = objs
            .iter()
            .map(|o| o["kind"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            kinds,
            [
                "ServiceAccount",
                "Role",
                "RoleBinding",
                "ClusterRole",
                "ClusterRoleBinding"
            ]
        );
        let lifted = lift("op.v1", "ns", &objs, false);
        assert_eq!(lifted.len(), 2);
        assert_eq!(lifted[0]["kind"], "ClusterRole");
        assert_eq!(lifted[0]["metadata"]["name"], objs[1]["metadata"]["name"]);
        assert_eq!(lifted[0]["rules"][1]["resources"], json!(["namespaces"]));
        assert!(lift("op.v1", "ns", &objs, true).is_empty());
    }
}
