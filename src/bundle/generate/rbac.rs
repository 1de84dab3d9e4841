//! CSV `permissions` and `clusterPermissions` from Roles, ClusterRoles and their bindings, as
//! `operator-sdk generate bundle` derives them: the service accounts are those the deployments
//! run as (plus any extra ones asked for); a Role, or a ClusterRole bound by a RoleBinding,
//! bound to one of them becomes `permissions` of that account; a ClusterRole bound by a
//! ClusterRoleBinding becomes `clusterPermissions`. Rules are concatenated in binding order and
//! accounts sorted. Bindings whose subjects are all CSV service accounts, and roles used only
//! through such bindings, are consumed; everything else stays a bundle manifest.

use std::collections::{BTreeMap, BTreeSet};

use super::collect::{Inputs, Obj};
use crate::bundle::load::{BundleError, list_at, str_at};
use crate::bundle::tree::{obj, s, seq};
use crate::fbc::node::Node;

/// What RBAC becomes.
#[derive(Debug, Default)]
pub struct Rbac {
    /// `spec.install.spec.permissions`.
    pub permissions: Vec<Node>,
    /// `spec.install.spec.clusterPermissions`.
    pub cluster_permissions: Vec<Node>,
    /// Roles, bindings and service accounts that stay bundle manifests.
    pub leftovers: Vec<Obj>,
}

/// The service account a deployment's pods run as (`default` when unset).
pub fn deployment_service_account(d: &Obj) -> String {
    let spec = ["spec", "template", "spec"];
    let get = |k: &str| {
        let mut p = spec.to_vec();
        p.push(k);
        str_at(&d.doc, &p)
            .filter(|v| !v.is_empty())
            .map(String::from)
    };
    get("serviceAccountName")
        .or_else(|| get("serviceAccount"))
        .unwrap_or_else(|| "default".to_string())
}

/// Whether `o` is a Role named in `keep` or a RoleBinding to one (`--namespaced-rbac`).
pub fn kept(o: &Obj, keep: &[String]) -> bool {
    match o.kind() {
        "Role" => keep.iter().any(|k| k == o.name()),
        "RoleBinding" => {
            str_at(&o.doc, &["roleRef", "kind"]) == Some("Role")
                && str_at(&o.doc, &["roleRef", "name"]).is_some_and(|n| keep.iter().any(|k| k == n))
        }
        _ => false,
    }
}

/// Removes the namespace of a kept RoleBinding's subjects that are the CSV's service accounts
/// (`--namespaced-rbac`). OLM creates those accounts in the install namespace, and creates the
/// RoleBinding there too, but as it is: its subjects keep the namespace the manifest gave them
/// (catalog `operator.go :: ExecutePlan`, `case roleBindingKind`: owner references and
/// namespace set, subjects untouched). A ServiceAccount subject without a namespace means the
/// binding's own namespace (kubernetes `pkg/registry/rbac/validation/rule.go ::
/// appliesToUser`), and a RoleBinding may leave it out (`pkg/apis/rbac/validation ::
/// ValidateRoleBindingSubject` requires it only in a ClusterRoleBinding),
/// so the binding grants the operator its rights in whatever namespace it is installed.
pub fn unqualify_subjects(doc: &mut Node, accounts: &BTreeSet<String>) {
    if str_at(doc, &["kind"]) != Some("RoleBinding") {
        return;
    }
    for subject in crate::bundle::tree::items_mut(doc, "subjects") {
        if str_at(subject, &["kind"]) == Some("ServiceAccount")
            && str_at(subject, &["name"]).is_some_and(|n| accounts.contains(n))
        {
            crate::bundle::tree::remove(subject, "namespace");
        }
    }
}

/// Builds the CSV permissions for `accounts` from the input's RBAC objects; the Roles named
/// in `keep`, and the RoleBindings to them, stay bundle manifests.
pub fn build(
    inputs: &Inputs,
    accounts: &BTreeSet<String>,
    keep: &BTreeSet<String>,
) -> Result<Rbac, BundleError> {
    for k in keep {
        if !inputs
            .roles
            .iter()
            .any(|r| r.kind() == "Role" && r.name() == k)
        {
            return Err(super::usage(format!(
                "--namespaced-rbac {k}: no Role \"{k}\" among the manifests"
            )));
        }
    }
    let mut perms: BTreeMap<String, Vec<Node>> = BTreeMap::new();
    let mut cluster: BTreeMap<String, Vec<Node>> = BTreeMap::new();
    let mut used_roles: BTreeSet<(String, String)> = BTreeSet::new();
    let mut leftovers = Vec::new();
    let mut kept_roles: BTreeSet<(String, String)> = BTreeSet::new();
    for b in &inputs.bindings {
        let role_kind = str_at(&b.doc, &["roleRef", "kind"]).unwrap_or("");
        let role_name = str_at(&b.doc, &["roleRef", "name"]).unwrap_or("");
        if role_kind.is_empty() || role_name.is_empty() {
            return Err(b.error(format!(
                "{} \"{}\" has no roleRef.kind/roleRef.name",
                b.kind(),
                b.name()
            )));
        }
        let subjects: Vec<String> = list_at(&b.doc, &["subjects"])
            .iter()
            .filter(|s| str_at(s, &["kind"]) == Some("ServiceAccount"))
            .filter_map(|s| str_at(s, &["name"]).map(String::from))
            .collect();
        let all_subjects = list_at(&b.doc, &["subjects"]).len();
        let ours: Vec<&String> = subjects.iter().filter(|n| accounts.contains(*n)).collect();
        if b.kind() == "RoleBinding" && role_kind == "Role" && keep.contains(role_name) {
            leftovers.push(b.clone());
            kept_roles.insert((role_kind.to_string(), role_name.to_string()));
            continue;
        }
        let role = inputs
            .roles
            .iter()
            .find(|r| r.kind() == role_kind && r.name() == role_name);
        let Some(role) = role.filter(|_| !ours.is_empty()) else {
            // Not bound to a CSV account, or bound to a role the input does not define (such
            // as a built-in ClusterRole): keep the binding as it is.
            leftovers.push(b.clone());
            kept_roles.insert((role_kind.to_string(), role_name.to_string()));
            continue;
        };
        if b.kind() == "RoleBinding" && role_kind != "Role" && role_kind != "ClusterRole" {
            return Err(b.error(format!(
                "RoleBinding \"{}\" refers to a {role_kind}; only Role and ClusterRole can be bound",
                b.name()
            )));
        }
        let rules = list_at(&role.doc, &["rules"]).to_vec();
        let target = if b.kind() == "ClusterRoleBinding" {
            &mut cluster
        } else {
            &mut perms
        };
        for sa in &ours {
            target
                .entry((*sa).clone())
                .or_default()
                .extend(rules.iter().cloned());
        }
        used_roles.insert((role_kind.to_string(), role_name.to_string()));
        if ours.len() < all_subjects {
            // Other subjects keep their access through the original binding and role.
            leftovers.push(b.clone());
            kept_roles.insert((role_kind.to_string(), role_name.to_string()));
        }
    }
    for r in &inputs.roles {
        let key = (r.kind().to_string(), r.name().to_string());
        if !used_roles.contains(&key) || kept_roles.contains(&key) {
            leftovers.push(r.clone());
        }
    }
    for sa in &inputs.service_accounts {
        // OLM creates the CSV's service accounts; shipping one too is rejected (BND010).
        if !accounts.contains(sa.name()) {
            leftovers.push(sa.clone());
        }
    }
    let entry = |sa: &String, rules: &Vec<Node>| {
        obj(vec![
            ("serviceAccountName", s(sa)),
            ("rules", seq(rules.clone())),
        ])
    };
    Ok(Rbac {
        permissions: perms.iter().map(|(k, v)| entry(k, v)).collect(),
        cluster_permissions: cluster.iter().map(|(k, v)| entry(k, v)).collect(),
        leftovers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Node {
        let mut out = Vec::new();
        crate::fbc::yaml::parse_documents(text, |n| out.push(n)).expect("yaml");
        out.remove(0)
    }

    #[test]
    fn only_the_csvs_service_accounts_lose_their_namespace() {
        let mut rb = doc("kind: RoleBinding\nsubjects:\n\
             - {kind: ServiceAccount, name: op, namespace: op-system}\n\
             - {kind: ServiceAccount, name: scraper, namespace: monitoring}\n\
             - {kind: User, name: op, namespace: op-system}\n\
             - {kind: ServiceAccount, name: op}\n");
        let accounts: BTreeSet<String> = ["op".to_string()].into();
        unqualify_subjects(&mut rb, &accounts);
        let subjects = list_at(&rb, &["subjects"]);
        let ns: Vec<Option<&str>> = subjects.iter().map(|s| str_at(s, &["namespace"])).collect();
        assert_eq!(ns, [None, Some("monitoring"), Some("op-system"), None]);
        // A Role is left alone.
        let mut role =
            doc("kind: Role\nsubjects:\n- {kind: ServiceAccount, name: op, namespace: x}\n");
        unqualify_subjects(&mut role, &accounts);
        assert_eq!(
            str_at(&list_at(&role, &["subjects"])[0], &["namespace"]),
            Some("x")
        );
    }
}
