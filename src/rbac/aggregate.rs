//! The rules of an aggregated ClusterRole: what Kubernetes' aggregation controller copies into
//! a ClusterRole with an `aggregationRule` from the ClusterRoles its selectors match.

use serde_json::Value;

use super::rule::Rule;

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `metav1.LabelSelector` matching (`matchLabels`, then `matchExpressions` with `In`, `NotIn`,
/// `Exists`, `DoesNotExist`); a selector that does not parse matches nothing.
pub fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let exact = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    let exprs = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .is_none_or(|a| {
            a.iter().all(|e| {
                let key = str_at(e, "/key");
                let values: Vec<&str> = e
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                match str_at(e, "/operator") {
                    "In" => label(key).is_some_and(|l| values.contains(&l)),
                    "NotIn" => label(key).is_none_or(|l| !values.contains(&l)),
                    "Exists" => label(key).is_some(),
                    "DoesNotExist" => label(key).is_none(),
                    _ => false,
                }
            })
        });
    exact && exprs
}

/// A role's rules; for a ClusterRole with an `aggregationRule`, the rules the aggregation
/// controller gives it from the other ClusterRoles among `objects`
/// (`clusterroleaggregation_controller.go :: syncClusterRole`: per selector, the matching roles
/// sorted by name, rules de-duplicated). ClusterRoles already on the cluster may add more.
pub fn rules(role: &Value, objects: &[Value]) -> Vec<Rule> {
    sourced(role, objects)
        .into_iter()
        .map(|(r, _, _)| r)
        .collect()
}

/// [`rules`], each with the ClusterRole it comes from and its index there (a role without an
/// `aggregationRule` is its own source).
pub fn sourced(role: &Value, objects: &[Value]) -> Vec<(Rule, String, usize)> {
    let Some(selectors) = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
    else {
        let name = str_at(role, "/metadata/name").to_string();
        return Rule::of_role(role)
            .into_iter()
            .enumerate()
            .map(|(i, r)| (r, name.clone(), i))
            .collect();
    };
    let name = str_at(role, "/metadata/name");
    let mut out: Vec<(Rule, String, usize)> = Vec::new();
    // Rules already copied: one look each, not a scan of `out` (a role of many rules times
    // the roles it selects).
    let mut seen: std::collections::HashSet<Rule> = std::collections::HashSet::new();
    for sel in selectors {
        let mut matched: Vec<&Value> = objects
            .iter()
            .filter(|o| str_at(o, "/kind") == "ClusterRole" && str_at(o, "/metadata/name") != name)
            .filter(|o| {
                selector_matches(sel, o.pointer("/metadata/labels").unwrap_or(&Value::Null))
            })
            .collect();
        matched.sort_by_key(|o| str_at(o, "/metadata/name"));
        for m in matched {
            for (i, r) in Rule::of_role(m).into_iter().enumerate() {
                if seen.insert(r.clone()) {
                    out.push((r, str_at(m, "/metadata/name").to_string(), i));
                }
            }
        }
    }
    out
}
