//! kube-apiserver's RBAC escalation prevention (`cluster.md` R7.4): a Role, ClusterRole or
//! binding may be written only by a user who already holds every rule it grants, unless the
//! user may `escalate` the role or `bind` the bound role.
//!
//! Followed upstream (kubernetes, `k8s.io/kubernetes/pkg/registry/rbac`):
//!
//! - `escalation_check.go` :: `EscalationAllowed` (`system:masters`), `RoleEscalationAuthorized`
//!   (the `escalate` verb on the request's resource, with the request's name: empty on create),
//!   `BindingAuthorized` (the `bind` verb on the role reference, by name, in the binding's
//!   namespace);
//! - `role/policybased/storage.go`, `clusterrole/policybased/storage.go` :: `Storage.Create`,
//!   `Storage.Update` (an `aggregationRule` needs full authority: `hasAggregationRule`, on the
//!   old or the new object of an update); updates skip the check when only the garbage
//!   collector's fields change (`helpers.go` :: `IsOnlyMutatingGCFields`);
//!   `rolebinding/policybased/storage.go`, `clusterrolebinding/policybased/storage.go` ::
//!   `Storage.Create`, `Storage.Update` (the bound role must exist unless `bind` is allowed);
//! - `validation/rule.go` :: `ConfirmNoEscalation`, `DefaultRuleResolver.RulesFor`;
//! - `k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go` :: `Covers`,
//!   `BreakdownRule`, `ruleCovers`, `resourceCoversAll`, `nonResourceURLsCoversAll`.
//!
//! Not modelled: `CompactRules` (the missing rules are listed broken down, one verb each).

use serde_json::Value;

use super::{
    Attributes, Decision, PolicyRule, Rbac, SYSTEM_MASTERS, UserInfo, authorize, kind_of, name_of,
    namespace_of, rules_of, str_field,
};
use crate::api::selectors::{aggregate_error, go_quote};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// `DefaultRuleResolver.RulesFor`: every rule bound to `user` in `namespace` (cluster bindings
/// first), and the resolution errors.
fn rules_for(
    user: &UserInfo,
    namespace: &str,
    rbac_objects: &[Value],
) -> (Vec<PolicyRule>, Vec<String>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    Rbac {
        objects: rbac_objects,
    }
    .visit_rules_for(user, namespace, &mut |_, rule, err| {
        if let Some(r) = rule {
            rules.push(r.clone());
        }
        if let Some(e) = err {
            errors.push(e);
        }
        true
    });
    (rules, errors)
}

/// `BreakdownRule`.
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    verbs: vec![verb.clone()],
                    ..PolicyRule::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    for name in &rule.resource_names {
                        let mut r = base.clone();
                        r.resource_names = vec![name.clone()];
                        out.push(r);
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: vec![url.clone()],
                verbs: vec![verb.clone()],
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

fn has_all(set: &[String], want: &[String]) -> bool {
    want.iter().all(|w| has(set, w))
}

/// `ruleCovers`.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    // resourceCoversAll: `*`, all exactly, or each exactly or as `*/<subresource>`.
    let resources = has(&owner.resources, "*")
        || has_all(&owner.resources, &sub.resources)
        || sub.resources.iter().all(|path| {
            has(&owner.resources, path)
                || match path.split_once('/') {
                    Some((_, subresource)) => has(&owner.resources, &format!("*/{subresource}")),
                    None => false,
                }
        });
    // nonResourceURLsCoversAll over nonResourceURLCovers.
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| o == path || (o.ends_with('*') && path.starts_with(o.trim_end_matches('*'))))
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && urls && names
}

/// `Covers`: the broken-down servant rules no owner rule covers.
fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect()
}

/// `rbacv1helpers.CompactString`.
fn compact_string(r: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (name, list) in [
        ("APIGroups", &r.api_groups),
        ("Resources", &r.resources),
        ("NonResourceURLs", &r.non_resource_urls),
        ("ResourceNames", &r.resource_names),
        ("Verbs", &r.verbs),
    ] {
        if !list.is_empty() {
            let items: Vec<String> = list.iter().map(|s| go_quote(s)).collect();
            parts.push(format!("{name}:[{}]", items.join(" ")));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// `ConfirmNoEscalation`: `user` must hold every rule of `rules` in `namespace`.
fn confirm_no_escalation(
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
    rbac_objects: &[Value],
) -> Result<(), String> {
    let (owner, errors) = rules_for(user, namespace, rbac_objects);
    let missing = uncovered(&owner, rules);
    if missing.is_empty() {
        return Ok(());
    }
    let mut descriptions: Vec<String> = missing.iter().map(compact_string).collect();
    descriptions.sort();
    descriptions.dedup();
    let groups: Vec<String> = user.groups.iter().map(|g| go_quote(g)).collect();
    let mut msg = format!(
        "user {} (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
        go_quote(&user.name),
        groups.join(" "),
        descriptions.join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!(
            "; resolution errors: {}",
            aggregate_error(&errors)
        ));
    }
    Err(msg)
}

fn allowed(attrs: &Attributes, rbac_objects: &[Value]) -> bool {
    authorize(attrs, rbac_objects) == Decision::Allow
}

/// `errors.NewForbidden(groupResource, name, err)`'s message.
fn forbidden(resource: &str, name: &str, err: &str) -> String {
    format!(
        "{resource}.{RBAC_GROUP} {} is forbidden: {err}",
        go_quote(name)
    )
}

/// The escalation check of a write of `obj` (a Role, ClusterRole, RoleBinding or
/// ClusterRoleBinding; other kinds pass) by `user`, as the RBAC storages run it before
/// storing. `update`: the request names the object (PUT/PATCH); a create (POST) does not,
/// so `escalate` limited by resourceNames does not help a create. `rbac_objects`: the
/// cluster's RBAC objects at the time.
pub fn check_write(
    user: &UserInfo,
    obj: &Value,
    update: bool,
    rbac_objects: &[Value],
) -> Result<(), String> {
    check(user, obj, update, None, rbac_objects)
}

/// The escalation check of an update (PUT) or patch of a stored object `old` into `obj`, as
/// the storages' `Update` wraps the updated object (`rest.WrapUpdatedObjectInfo`): nothing is
/// checked when only the fields the garbage collector writes change
/// (`IsOnlyMutatingGCFields`), and a ClusterRole that had an aggregation rule needs full
/// authority to change even when the new one has none. `old` is `None` when the update
/// creates the object (`forceAllowCreate`, a server-side apply of a new object).
pub fn check_update(
    user: &UserInfo,
    obj: &Value,
    old: Option<&Value>,
    rbac_objects: &[Value],
) -> Result<(), String> {
    if old.is_some_and(|old| only_gc_fields_change(obj, old)) {
        return Ok(());
    }
    check(user, obj, true, old, rbac_objects)
}

/// `EscalationAllowed`: system:masters writes any role or binding.
fn escalation_allowed(user: &UserInfo) -> bool {
    user.groups.iter().any(|g| g == SYSTEM_MASTERS)
}

/// `IsOnlyMutatingGCFields`: `obj` equals `old` once its ownerReferences, finalizers and
/// selfLink are taken from `old`, compared as `equality.Semantic.DeepEqual` does (an empty
/// list or map equals a missing one).
fn only_gc_fields_change(obj: &Value, old: &Value) -> bool {
    let mut copied = obj.clone();
    for field in ["ownerReferences", "finalizers", "selfLink"] {
        match old.pointer(&format!("/metadata/{field}")) {
            Some(v) => copied["metadata"][field] = v.clone(),
            None => {
                if let Some(m) = copied.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove(field);
                }
            }
        }
    }
    semantic(&copied) == semantic(old)
}

/// A value with nulls, empty lists and empty maps removed from maps (what Go's zero values
/// make of them).
fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), semantic(v)))
                .filter(|(_, v)| match v {
                    Value::Null => false,
                    Value::Array(a) => !a.is_empty(),
                    Value::Object(o) => !o.is_empty(),
                    _ => true,
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

/// `hasAggregationRule`: an aggregation rule with at least one selector.
fn has_aggregation_rule(role: &Value) -> bool {
    role.pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty())
}

fn check(
    user: &UserInfo,
    obj: &Value,
    update: bool,
    old: Option<&Value>,
    rbac_objects: &[Value],
) -> Result<(), String> {
    if escalation_allowed(user) {
        return Ok(());
    }
    let kind = kind_of(obj);
    let name = name_of(obj);
    let namespace = if kind.starts_with("Cluster") {
        ""
    } else {
        namespace_of(obj)
    };
    let request_name = if update { name } else { "" };
    match kind {
        "Role" | "ClusterRole" => {
            let resource = if kind == "Role" {
                "roles"
            } else {
                "clusterroles"
            };
            // RoleEscalationAuthorized.
            let escalate = Attributes::resource(user.clone(), "escalate", RBAC_GROUP, resource)
                .in_namespace(namespace)
                .named(request_name);
            if allowed(&escalate, rbac_objects) {
                return Ok(());
            }
            confirm_no_escalation(user, namespace, &rules_of(obj), rbac_objects)
                .map_err(|e| forbidden(resource, name, &e))?;
            // To set, or (on an update) change, an aggregation rule needs full authority.
            if kind == "ClusterRole"
                && (has_aggregation_rule(obj) || old.is_some_and(has_aggregation_rule))
            {
                let full = [
                    PolicyRule {
                        verbs: vec!["*".into()],
                        api_groups: vec!["*".into()],
                        resources: vec!["*".into()],
                        ..PolicyRule::default()
                    },
                    PolicyRule {
                        verbs: vec!["*".into()],
                        non_resource_urls: vec!["*".into()],
                        ..PolicyRule::default()
                    },
                ];
                confirm_no_escalation(user, namespace, &full, rbac_objects).map_err(|_| {
                    forbidden(
                        resource,
                        name,
                        "must have cluster-admin privileges to use the aggregationRule",
                    )
                })?;
            }
            Ok(())
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            let resource = if kind == "RoleBinding" {
                "rolebindings"
            } else {
                "clusterrolebindings"
            };
            let role_ref = obj.get("roleRef").unwrap_or(&Value::Null);
            let ref_kind = str_field(role_ref, "/kind");
            let ref_resource = if ref_kind == "Role" {
                "roles"
            } else {
                "clusterroles"
            };
            // BindingAuthorized.
            let bind = Attributes::resource(user.clone(), "bind", RBAC_GROUP, ref_resource)
                .in_namespace(namespace)
                .named(str_field(role_ref, "/name"));
            if allowed(&bind, rbac_objects) {
                return Ok(());
            }
            let rules = Rbac {
                objects: rbac_objects,
            }
            .role_reference_rules(role_ref, namespace)?;
            confirm_no_escalation(user, namespace, &rules, rbac_objects)
                .map_err(|e| forbidden(resource, name, &e))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn role(kind: &str, name: &str, rules: Value) -> Value {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
               "metadata": {"name": name, "namespace": "ns"}, "rules": rules})
    }

    fn grant(name: &str, rules: Value) -> Vec<Value> {
        vec![
            role("ClusterRole", name, rules),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": name},
                   "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
                   "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]}),
        ]
    }

    #[test]
    fn roles_need_the_rules_or_an_unnamed_escalate() {
        let user = UserInfo::service_account("ns", "sa");
        let wanted = role(
            "Role",
            "r",
            json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]),
        );
        let held = grant(
            "h",
            json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
        );
        let err = check_write(&user, &wanted, false, &held).unwrap_err();
        assert_eq!(
            err,
            "roles.rbac.authorization.k8s.io \"r\" is forbidden: user \"system:serviceaccount:ns:sa\" (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:ns\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\"]}"
        );
        let all = grant(
            "h",
            json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}]),
        );
        assert_eq!(check_write(&user, &wanted, false, &all), Ok(()));
        // `escalate` by name helps an update (the request names the role), not a create.
        let named = grant(
            "e",
            json!([{"apiGroups": [RBAC_GROUP], "resources": ["roles"], "verbs": ["escalate"], "resourceNames": ["r"]}]),
        );
        assert!(check_write(&user, &wanted, false, &named).is_err());
        assert_eq!(check_write(&user, &wanted, true, &named), Ok(()));
        let any = grant(
            "e",
            json!([{"apiGroups": [RBAC_GROUP], "resources": ["roles"], "verbs": ["escalate"]}]),
        );
        assert_eq!(check_write(&user, &wanted, false, &any), Ok(()));
        assert_eq!(check_write(&UserInfo::admin(), &wanted, false, &[]), Ok(()));
    }

    #[test]
    fn bindings_need_the_role_or_bind_on_it() {
        let user = UserInfo::service_account("ns", "sa");
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "b"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "system:auth-delegator"},
            "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "ns"}]});
        // The bound role does not exist: NotFound, unless bind is allowed.
        assert_eq!(
            check_write(&user, &binding, false, &[]),
            Err(
                "clusterrole.rbac.authorization.k8s.io \"system:auth-delegator\" not found"
                    .to_string()
            )
        );
        let bind = grant(
            "b",
            json!([{"apiGroups": [RBAC_GROUP], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["system:auth-delegator"]}]),
        );
        assert_eq!(check_write(&user, &binding, false, &bind), Ok(()));
        // Holding the role's rules is enough too.
        let mut state = grant(
            "h",
            json!([{"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]}]),
        );
        state.push(role(
            "ClusterRole",
            "system:auth-delegator",
            json!([{"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]}]),
        ));
        assert_eq!(check_write(&user, &binding, false, &state), Ok(()));
    }
}
