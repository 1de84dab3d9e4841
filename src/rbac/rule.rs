//! RBAC's policy rules and their two questions, as Kubernetes answers them: does a rule allow a
//! request (`plugin/pkg/auth/authorizer/rbac/rbac.go :: RuleAllows` over
//! `pkg/apis/rbac/v1/evaluation_helpers.go :: VerbMatches, APIGroupMatches, ResourceMatches,
//! ResourceNameMatches, NonResourceURLMatches`), and do some rules cover others (what the
//! escalation check asks: `k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go ::
//! Covers, BreakdownRule, ruleCovers, resourceCoversAll, nonResourceURLCovers`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `rbacv1.PolicyRule`; absent lists are empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// `apiGroups`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// `resources` (`<resource>` or `<resource>/<subresource>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// `resourceNames`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// `nonResourceURLs`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        rename = "nonResourceURLs"
    )]
    pub non_resource_urls: Vec<String>,
    /// `verbs`.
    #[serde(default)]
    pub verbs: Vec<String>,
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn list(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

impl Rule {
    /// A resource rule.
    pub fn resource(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Rule {
        Rule {
            api_groups: list(groups),
            resources: list(resources),
            verbs: list(verbs),
            ..Rule::default()
        }
    }

    /// The rule with these `resourceNames`.
    pub fn named(mut self, names: &[&str]) -> Rule {
        self.resource_names = list(names);
        self
    }

    /// A rule from its JSON (non-string items are dropped, as the API server refuses them).
    pub fn from_json(v: &Value) -> Rule {
        Rule {
            api_groups: strings(v, "apiGroups"),
            resources: strings(v, "resources"),
            resource_names: strings(v, "resourceNames"),
            non_resource_urls: strings(v, "nonResourceURLs"),
            verbs: strings(v, "verbs"),
        }
    }

    /// The `rules` of a Role or ClusterRole.
    pub fn of_role(role: &Value) -> Vec<Rule> {
        role.get("rules")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Rule::from_json).collect())
            .unwrap_or_default()
    }

    /// The rule as JSON, in the API's field order (apiGroups, resources, resourceNames,
    /// nonResourceURLs, verbs).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// [`Rule::compact`], cut to `max` characters (with `...`) for a message.
    pub fn compact_cut(&self, max: usize) -> String {
        let c = self.compact();
        if c.chars().count() > max {
            format!("{}...", c.chars().take(max).collect::<String>())
        } else {
            c
        }
    }

    /// How many values its lists hold in all (the work of comparing it, list by list).
    pub fn lists_len(&self) -> usize {
        self.api_groups.len()
            + self.resources.len()
            + self.verbs.len()
            + self.resource_names.len()
            + self.non_resource_urls.len()
    }

    /// The rule as Kubernetes' `CompactString` writes it in escalation errors:
    /// `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`.
    pub fn compact(&self) -> String {
        let mut parts = Vec::new();
        let mut add = |name: &str, v: &[String]| {
            if !v.is_empty() {
                let items: Vec<String> = v
                    .iter()
                    .map(|s| {
                        let mut q = String::new();
                        crate::gojson::write_string(&mut q, s);
                        q
                    })
                    .collect();
                parts.push(format!("{name}:[{}]", items.join(" ")));
            }
        };
        add("APIGroups", &self.api_groups);
        add("Resources", &self.resources);
        add("ResourceNames", &self.resource_names);
        add("NonResourceURLs", &self.non_resource_urls);
        add("Verbs", &self.verbs);
        format!("{{{}}}", parts.join(", "))
    }
}

/// One request as the authorizer sees it (`authorizer.Attributes`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Request {
    /// The verb.
    pub verb: String,
    /// The API group (`""` for the core group).
    pub api_group: String,
    /// The resource (may be `<resource>/<subresource>` as operator-controller writes
    /// `clusterextensions/finalizers`).
    pub resource: String,
    /// The subresource, if any.
    pub subresource: String,
    /// The object's name (empty for create, list, watch).
    pub name: String,
    /// The namespace (empty: cluster scope).
    pub namespace: String,
    /// A non-resource request's path (then the resource fields are unused).
    pub path: Option<String>,
}

impl Request {
    /// A resource request.
    pub fn resource(verb: &str, api_group: &str, resource: &str) -> Request {
        Request {
            verb: verb.to_string(),
            api_group: api_group.to_string(),
            resource: resource.to_string(),
            ..Request::default()
        }
    }

    /// The request for an object of this name.
    pub fn named(mut self, name: &str) -> Request {
        self.name = name.to_string();
        self
    }

    /// The request in this namespace.
    pub fn in_namespace(mut self, namespace: &str) -> Request {
        self.namespace = namespace.to_string();
        self
    }
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

/// `RuleAllows`: whether `rule` allows `req` (the namespace is the binding's business).
pub fn allows(rule: &Rule, req: &Request) -> bool {
    allows_named(rule, req, &|n| has(&rule.resource_names, n))
}

/// [`allows`], with `named` telling whether a name is among the rule's `resourceNames` (for a
/// caller that keeps long name lists in a set).
pub fn allows_named(rule: &Rule, req: &Request, named: &dyn Fn(&str) -> bool) -> bool {
    let verb = has(&rule.verbs, "*") || has(&rule.verbs, &req.verb);
    if let Some(path) = &req.path {
        // NonResourceURLMatches: `*`, the exact path, or a `prefix*`.
        return verb
            && rule.non_resource_urls.iter().any(|u| {
                u == "*"
                    || u == path
                    || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
            });
    }
    let group = has(&rule.api_groups, "*") || has(&rule.api_groups, &req.api_group);
    let combined = if req.subresource.is_empty() {
        req.resource.clone()
    } else {
        format!("{}/{}", req.resource, req.subresource)
    };
    // ResourceMatches: `*`, the combined name, or `*/<subresource>`.
    let resource = rule.resources.iter().any(|r| {
        r == "*"
            || *r == combined
            || (!req.subresource.is_empty()
                && r.len() == req.subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(&req.subresource))
    });
    // ResourceNameMatches: an empty list allows every name.
    verb && group && resource && (rule.resource_names.is_empty() || named(&req.name))
}

/// How many rules [`breakdown`] makes of `rule`, counted without making them (saturating).
pub fn breakdown_len(rule: &Rule) -> u64 {
    let n = |v: &[String]| v.len() as u64;
    let resources = n(&rule.api_groups)
        .saturating_mul(n(&rule.resources))
        .saturating_mul(n(&rule.verbs))
        .saturating_mul(n(&rule.resource_names).max(1));
    resources.saturating_add(n(&rule.non_resource_urls).saturating_mul(n(&rule.verbs)))
}

/// `BreakdownRule`: the rule as rules of one group, resource, verb and (if any) name, then one
/// non-resource URL and verb each. Its length is the product of the lists
/// ([`breakdown_len`]): callers bound it first, or work on the rule's lists instead
/// ([`super::cover`]).
pub fn breakdown(rule: &Rule) -> Vec<Rule> {
    let mut out = Vec::new();
    for g in &rule.api_groups {
        for r in &rule.resources {
            for v in &rule.verbs {
                let one = Rule::resource(&[g], &[r], &[v]);
                if rule.resource_names.is_empty() {
                    out.push(one);
                } else {
                    for n in &rule.resource_names {
                        out.push(one.clone().named(&[n]));
                    }
                }
            }
        }
    }
    for u in &rule.non_resource_urls {
        for v in &rule.verbs {
            out.push(Rule {
                non_resource_urls: vec![u.clone()],
                verbs: vec![v.clone()],
                ..Rule::default()
            });
        }
    }
    out
}

fn has_all(set: &[String], want: &[String]) -> bool {
    want.iter().all(|w| has(set, w))
}

/// `resourceCoversAll`.
fn resource_covers_all(set: &[String], want: &[String]) -> bool {
    if has(set, "*") || has_all(set, want) {
        return true;
    }
    want.iter().all(|path| {
        has(set, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(set, &format!("*/{sub}")))
    })
}

/// `nonResourceURLsCoversAll` over `nonResourceURLCovers`.
fn non_resource_urls_cover_all(set: &[String], want: &[String]) -> bool {
    want.iter().all(|path| {
        set.iter().any(|owner| {
            owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
        })
    })
}

/// `ruleCovers`: whether `owner` covers the (broken-down) `sub`.
pub fn rule_covers(owner: &Rule, sub: &Rule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resource_covers_all(&owner.resources, &sub.resources);
    let urls = non_resource_urls_cover_all(&owner.non_resource_urls, &sub.non_resource_urls);
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// `Covers`: whether `owner` covers every rule of `servant`; the broken-down rules it does not
/// cover.
pub fn covers(owner: &[Rule], servant: &[Rule]) -> (bool, Vec<Rule>) {
    let mut missing = Vec::new();
    for r in servant {
        for sub in breakdown(r) {
            if !owner.iter().any(|o| rule_covers(o, &sub)) {
                missing.push(sub);
            }
        }
    }
    (missing.is_empty(), missing)
}

/// The resource a kind is served as, by `meta.UnsafeGuessKindToResource` (what a REST mapper
/// falls back to; right for every kind a registry+v1 bundle may carry): lower case, then `s`,
/// `es` after an `s`, `ies` for a final `y`; `endpoints` stays.
pub fn guess_resource(kind: &str) -> String {
    let singular = kind.to_lowercase();
    if singular.is_empty() || singular.ends_with("endpoints") {
        return singular;
    }
    if singular.ends_with('s') {
        return format!("{singular}es");
    }
    if let Some(stem) = singular.strip_suffix('y') {
        return format!("{stem}ies");
    }
    format!("{singular}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(verb: &str, group: &str, resource: &str) -> Request {
        Request::resource(verb, group, resource)
    }

    #[test]
    fn allows_follows_the_evaluation_helpers() {
        let r = Rule::resource(&["apps"], &["deployments"], &["get", "update"]).named(&["a"]);
        assert!(allows(&r, &req("get", "apps", "deployments").named("a")));
        assert!(!allows(&r, &req("get", "apps", "deployments").named("b")));
        // An empty name (list, create) is not among the names.
        assert!(!allows(&r, &req("get", "apps", "deployments")));
        assert!(!allows(
            &r,
            &req("delete", "apps", "deployments").named("a")
        ));
        assert!(!allows(&r, &req("get", "", "deployments").named("a")));
        let star = Rule::resource(&["*"], &["*"], &["*"]);
        assert!(allows(&star, &req("escalate", "x", "y")));
        // `*/status` matches any resource's status; `pods/*` only the literal subresource `*`.
        let sub = Rule::resource(&[""], &["*/status", "pods/*"], &["get"]);
        let mut status = req("get", "", "nodes");
        status.subresource = "status".into();
        assert!(allows(&sub, &status));
        let mut log = req("get", "", "pods");
        log.subresource = "log".into();
        assert!(!allows(&sub, &log));
        // operator-controller's finalizers request names the subresource in the resource.
        let fin = Rule::resource(
            &["olm.operatorframework.io"],
            &["clusterextensions/finalizers"],
            &["update"],
        );
        assert!(allows(
            &fin,
            &req(
                "update",
                "olm.operatorframework.io",
                "clusterextensions/finalizers"
            )
            .named("x")
        ));
        let urls = Rule {
            non_resource_urls: vec!["/metrics".into(), "/api/*".into()],
            verbs: vec!["get".into()],
            ..Rule::default()
        };
        let mut nr = Request {
            verb: "get".into(),
            path: Some("/api/v1".into()),
            ..Request::default()
        };
        assert!(allows(&urls, &nr));
        nr.path = Some("/healthz".into());
        assert!(!allows(&urls, &nr));
    }

    #[test]
    fn covers_follows_the_policy_comparator() {
        let owner = vec![
            Rule::resource(&["apps"], &["deployments"], &["*"]),
            Rule::resource(&[""], &["*/status"], &["get"]),
            Rule::resource(&[""], &["secrets"], &["get"]).named(&["a", "b"]),
        ];
        assert!(
            covers(
                &owner,
                &[Rule::resource(
                    &["apps"],
                    &["deployments"],
                    &["get", "list"]
                )]
            )
            .0
        );
        assert!(covers(&owner, &[Rule::resource(&[""], &["pods/status"], &["get"])]).0);
        assert!(
            covers(
                &owner,
                &[Rule::resource(&[""], &["secrets"], &["get"]).named(&["a"])]
            )
            .0
        );
        // Names narrow: an owner with names does not cover every name.
        let (ok, missing) = covers(
            &owner,
            &[Rule::resource(&[""], &["secrets"], &["get", "list"])],
        );
        assert!(!ok);
        assert_eq!(
            missing,
            vec![
                Rule::resource(&[""], &["secrets"], &["get"]),
                Rule::resource(&[""], &["secrets"], &["list"])
            ]
        );
        // A wildcard is covered only by a wildcard.
        assert!(
            !covers(
                &[Rule::resource(
                    &["apps"],
                    &["deployments"],
                    &["get", "list"]
                )],
                &[Rule::resource(&["apps"], &["deployments"], &["*"])]
            )
            .0
        );
        let url_owner = vec![Rule {
            non_resource_urls: vec!["/api/*".into()],
            verbs: vec!["get".into()],
            ..Rule::default()
        }];
        let url = Rule {
            non_resource_urls: vec!["/api/v1".into()],
            verbs: vec!["get".into()],
            ..Rule::default()
        };
        assert!(covers(&url_owner, &[url]).0);
    }

    #[test]
    fn compact_strings_are_kubernetes_compact_strings() {
        let r = Rule::resource(&[""], &["pods"], &["get", "list"]).named(&["a"]);
        assert_eq!(
            r.compact(),
            r#"{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get" "list"]}"#
        );
    }

    #[test]
    fn resources_are_guessed_as_the_rest_mapper_guesses() {
        assert_eq!(guess_resource("Deployment"), "deployments");
        assert_eq!(guess_resource("PriorityClass"), "priorityclasses");
        assert_eq!(guess_resource("NetworkPolicy"), "networkpolicies");
        assert_eq!(guess_resource("ConsoleCLIDownload"), "consoleclidownloads");
        assert_eq!(guess_resource("Endpoints"), "endpoints");
    }
}
