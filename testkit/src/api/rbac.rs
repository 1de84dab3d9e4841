//! kube-apiserver's authorization as the test cluster needs it: the RBAC authorizer behind the
//! `system:masters` privileged-group authorizer, the 403 `Status` it writes, the
//! `SelfSubjectAccessReview` / `SelfSubjectRulesReview` answers (`kubectl auth can-i`, R8.6),
//! the request attributes the apiserver derives from a URL, and the default discovery roles.
//!
//! Followed upstream (`cluster.md` R2.1, R7, R8.6):
//!
//! - kubernetes `plugin/pkg/auth/authorizer/rbac/rbac.go` :: `RBACAuthorizer.Authorize`,
//!   `RBACAuthorizer.RulesFor`, `RuleAllows`;
//! - kubernetes `pkg/registry/rbac/validation/rule.go` :: `DefaultRuleResolver.VisitRulesFor`,
//!   `GetRoleReferenceRules`, `appliesTo`, `appliesToUser`, `describeSubject`, the binding
//!   describers;
//! - kubernetes `pkg/apis/rbac/v1/evaluation_helpers.go` :: `VerbMatches`, `APIGroupMatches`,
//!   `ResourceMatches`, `ResourceNameMatches`, `NonResourceURLMatches`;
//! - kubernetes `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go` ::
//!   `syncClusterRole` (the rules an aggregated ClusterRole converges to);
//! - kubernetes `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go` :: `ClusterRoles`,
//!   `ClusterRoleBindings` (five of them, see [`bootstrap_policy`]);
//! - kubernetes `pkg/registry/authorization/selfsubjectrulesreview/rest.go` :: `REST.Create`,
//!   `selfsubjectaccessreview/rest.go` :: `REST.Create`, `pkg/registry/authorization/util` ::
//!   `ResourceAttributesFrom`, `NonResourceAttributesFrom`, `pkg/apis/authorization/validation`
//!   :: `ValidateSelfSubjectAccessReviewSpec`;
//! - k8s.io/apiserver v0.36.3 (vendored by operator-framework/operator-lifecycle-manager @
//!   992bb097): `pkg/endpoints/handlers/responsewriters/errors.go` :: `ForbiddenStatusError`,
//!   `forbiddenMessage`; `pkg/endpoints/filters/authorization.go` :: `withAuthorization`;
//!   `pkg/authorization/authorizerfactory/builtin.go` :: `privilegedGroupAuthorizer`;
//!   `pkg/authorization/union/union.go` :: `unionAuthzHandler.Authorize`;
//!   `pkg/authentication/serviceaccount/util.go` :: `UserInfo`, `MatchesUsername`;
//!   `pkg/authentication/group/authenticated_group_adder.go`;
//!   `pkg/endpoints/request/requestinfo.go` :: `NewRequestInfo`; k8s.io/apimachinery v0.36.3
//!   `pkg/api/errors/errors.go` :: `NewForbidden`, `NewNotFound`.
//!
//! Not modelled: the Node authorizer (users in `system:nodes` get no node-specific rights),
//! webhook/ABAC authorizers, impersonation, `AuthorizeWithSelectors` (field/label selector
//! attributes are ignored by RBAC anyway). The escalation check on writes of RBAC objects
//! (R7.4) is [`escalation`], which the API server runs on creates and updates of roles and
//! bindings (not on patches). The informer caches' arbitrary order is replaced by a sort by namespace and
//! name, which only affects the order of `rules_review` rules and of aggregated resolution
//! errors.

use serde_json::{Map, Value, json};

use super::selectors::{FieldSelector, LabelSelector, aggregate_error, go_quote};

pub mod escalation;

/// `user.SystemPrivilegedGroup`.
pub const SYSTEM_MASTERS: &str = "system:masters";
/// `user.AllAuthenticated`.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// `user.AllUnauthenticated`.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// `rbacv1.GroupName`.
pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// An authenticated user (`user.Info`: name and groups; UID and extra are not modelled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name.
    pub name: String,
    /// The groups, including `system:authenticated` when the authenticator added it.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A ServiceAccount's user: `system:serviceaccount:<ns>:<name>`, groups
    /// `system:serviceaccounts`, `system:serviceaccounts:<ns>` (serviceaccount/util.go ::
    /// `UserInfo`) and `system:authenticated` (`AuthenticatedGroupAdder`).
    pub fn service_account(ns: &str, name: &str) -> UserInfo {
        UserInfo {
            name: format!("system:serviceaccount:{ns}:{name}"),
            groups: vec![
                "system:serviceaccounts".to_string(),
                format!("system:serviceaccounts:{ns}"),
                ALL_AUTHENTICATED.to_string(),
            ],
        }
    }

    /// The cluster admin of a kubeconfig: `kubernetes-admin` in `system:masters`, which the
    /// privileged-group authorizer allows everything before RBAC is asked.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: "kubernetes-admin".to_string(),
            groups: vec![SYSTEM_MASTERS.to_string(), ALL_AUTHENTICATED.to_string()],
        }
    }

    /// Any other user; `system:authenticated` is appended as `AuthenticatedGroupAdder` does
    /// (unless the user is `system:anonymous` or already has it or `system:unauthenticated`).
    pub fn user(name: &str, groups: &[&str]) -> UserInfo {
        let mut groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        if name != "system:anonymous"
            && !groups
                .iter()
                .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
        {
            groups.push(ALL_AUTHENTICATED.to_string());
        }
        UserInfo {
            name: name.to_string(),
            groups,
        }
    }

    /// The anonymous user (`system:anonymous`, group `system:unauthenticated`).
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: "system:anonymous".to_string(),
            groups: vec![ALL_UNAUTHENTICATED.to_string()],
        }
    }
}

/// `authorizer.Attributes` of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// The Kubernetes verb (`get`, `list`, `watch`, `create`, ...) or, for non-resource
    /// requests, the lower-case HTTP method.
    pub verb: String,
    /// The namespace, `""` at cluster scope.
    pub namespace: String,
    /// The API group, `""` for core.
    pub api_group: String,
    /// The resource (plural).
    pub resource: String,
    /// The subresource, `""` if none.
    pub subresource: String,
    /// The object name, `""` for collections.
    pub name: String,
    /// Whether this is a resource request (else `path` is what is authorized).
    pub resource_request: bool,
    /// The URL path.
    pub path: String,
}

impl Attributes {
    /// A resource request at cluster scope without a name; refine with [`Attributes::in_namespace`],
    /// [`Attributes::named`] and [`Attributes::subresource`].
    pub fn resource(user: UserInfo, verb: &str, api_group: &str, resource: &str) -> Attributes {
        Attributes {
            user,
            verb: verb.to_string(),
            namespace: String::new(),
            api_group: api_group.to_string(),
            resource: resource.to_string(),
            subresource: String::new(),
            name: String::new(),
            resource_request: true,
            path: String::new(),
        }
    }

    /// A non-resource request (`/api`, `/version`, `/healthz`, ...).
    pub fn non_resource(user: UserInfo, verb: &str, path: &str) -> Attributes {
        Attributes {
            user,
            verb: verb.to_string(),
            namespace: String::new(),
            api_group: String::new(),
            resource: String::new(),
            subresource: String::new(),
            name: String::new(),
            resource_request: false,
            path: path.to_string(),
        }
    }

    /// With a namespace.
    pub fn in_namespace(mut self, namespace: &str) -> Attributes {
        self.namespace = namespace.to_string();
        self
    }

    /// With an object name.
    pub fn named(mut self, name: &str) -> Attributes {
        self.name = name.to_string();
        self
    }

    /// With a subresource.
    pub fn subresource(mut self, subresource: &str) -> Attributes {
        self.subresource = subresource.to_string();
        self
    }

    /// The attributes kube-apiserver derives from an HTTP request (requestinfo.go ::
    /// `RequestInfoFactory.NewRequestInfo` with API prefixes `api` and `apis`): `GET` without a
    /// name is `list`, or `watch` with `watch=true` (or the deprecated `/watch/` prefix);
    /// `DELETE` without a name is `deletecollection`; a list/watch with the field selector
    /// `metadata.name=<n>` is authorized for the name `<n>`; `/namespaces/<ns>` itself is in the
    /// namespace `<ns>`. `path` and `query` are as sent (percent-encoded). The error is the
    /// one upstream turns into a 500 (`/api/v1/watch` without a resource).
    ///
    /// Of the list options only `labelSelector`, `fieldSelector`, `timeoutSeconds` and `limit`
    /// are checked for decoding errors (an error drops the name, as upstream).
    pub fn from_request(
        user: UserInfo,
        method: &str,
        path: &str,
        query: &str,
    ) -> Result<Attributes, String> {
        let decoded_path = percent_decode(path, false);
        let mut attrs = Attributes::non_resource(user, &method.to_lowercase(), &decoded_path);
        let trimmed = decoded_path.trim_matches('/');
        let all: Vec<&str> = if trimmed.is_empty() {
            Vec::new()
        } else {
            trimmed.split('/').collect()
        };
        if all.len() < 3 || !matches!(all[0], "api" | "apis") {
            return Ok(attrs);
        }
        let mut parts = &all[1..];
        if all[0] == "apis" {
            if parts.len() < 3 {
                return Ok(attrs);
            }
            attrs.api_group = parts[0].to_string();
            parts = &parts[1..];
        }
        attrs.resource_request = true;
        // parts[0] is the version.
        parts = &parts[1..];
        let Some(&first) = parts.first() else {
            return Ok(attrs);
        };
        if first == "proxy" || first == "watch" {
            if parts.len() < 2 {
                let url = if query.is_empty() {
                    path.to_string()
                } else {
                    format!("{path}?{query}")
                };
                return Err(format!(
                    "unable to determine kind and namespace from url, {url}"
                ));
            }
            attrs.verb = first.to_string();
            parts = &parts[1..];
        } else {
            attrs.verb = match method {
                "POST" => "create",
                "GET" | "HEAD" => "get",
                "PUT" => "update",
                "PATCH" => "patch",
                "DELETE" => "delete",
                _ => "",
            }
            .to_string();
        }
        if parts.first() == Some(&"namespaces") {
            if parts.len() > 1 {
                attrs.namespace = parts[1].to_string();
                if parts.len() > 2 && !matches!(parts[2], "status" | "finalize") {
                    parts = &parts[2..];
                }
            }
        } else {
            attrs.namespace = String::new();
        }
        if parts.len() >= 3 && attrs.verb != "proxy" {
            attrs.subresource = parts[2].to_string();
        }
        if parts.len() >= 2 {
            attrs.name = parts[1].to_string();
        }
        if let Some(r) = parts.first() {
            attrs.resource = r.to_string();
        }
        if attrs.name.is_empty() && attrs.verb == "get" {
            let params = parse_query(query);
            let first_value = |k: &str| {
                params
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.as_str())
            };
            let watch = first_value("watch")
                .is_some_and(|v| !(v == "0" || v.eq_ignore_ascii_case("false")));
            attrs.verb = if watch { "watch" } else { "list" }.to_string();
            let mut decode_ok =
                first_value("labelSelector").is_none_or(|s| LabelSelector::parse(s).is_ok());
            for int_param in ["timeoutSeconds", "limit"] {
                if first_value(int_param)
                    .is_some_and(|v| !v.is_empty() && v.parse::<i64>().is_err())
                {
                    decode_ok = false;
                }
            }
            let field_selector = match first_value("fieldSelector") {
                Some(s) => match FieldSelector::parse(s) {
                    Ok(sel) => Some(sel),
                    Err(_) => {
                        decode_ok = false;
                        None
                    }
                },
                None => None,
            };
            if decode_ok
                && let Some(name) =
                    field_selector.and_then(|s| s.requires_exact_match("metadata.name"))
                && name != "."
                && name != ".."
                && !name.contains(['/', '%'])
            {
                attrs.name = name;
            }
        }
        if attrs.name.is_empty() && attrs.verb == "delete" {
            attrs.verb = "deletecollection".to_string();
        }
        Ok(attrs)
    }

    /// The attributes a `SelfSubjectAccessReview` asks about (`ResourceAttributesFrom`,
    /// `NonResourceAttributesFrom`), after `ValidateSelfSubjectAccessReviewSpec`; the error is
    /// the list of field errors for a 422 `SelfSubjectAccessReview.authorization.k8s.io ""
    /// is invalid: ...`.
    pub fn from_self_subject_access_review(
        user: UserInfo,
        review: &Value,
    ) -> Result<Attributes, Vec<String>> {
        let spec = review.get("spec").unwrap_or(&Value::Null);
        let ra = spec.get("resourceAttributes").filter(|v| !v.is_null());
        let nra = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
        let s = |v: &Value, k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match (ra, nra) {
            (Some(_), Some(n)) => Err(vec![format!(
                "spec.nonResourceAttributes: Invalid value: {}: cannot be specified in combination with resourceAttributes",
                serde_json::to_string(n).unwrap_or_default()
            )]),
            (None, None) => Err(vec![
                "spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
                    .to_string(),
            ]),
            (Some(r), None) => Ok(Attributes {
                user,
                verb: s(r, "verb"),
                namespace: s(r, "namespace"),
                api_group: s(r, "group"),
                resource: s(r, "resource"),
                subresource: s(r, "subresource"),
                name: s(r, "name"),
                resource_request: true,
                path: String::new(),
            }),
            (None, Some(n)) => Ok(Attributes::non_resource(user, &s(n, "verb"), &s(n, "path"))),
        }
    }
}

/// The authorization decision the apiserver acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The request goes on.
    Allow,
    /// 403 with [`forbidden_status`]; the reason (possibly empty) is the authorizers' reason.
    Deny(String),
}

/// `rbacv1.PolicyRule`, normalised (absent lists are empty, as `Semantic.DeepEqual` treats nil).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PolicyRule {
    verbs: Vec<String>,
    api_groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    non_resource_urls: Vec<String>,
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn str_field<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl PolicyRule {
    fn from_json(v: &Value) -> PolicyRule {
        PolicyRule {
            verbs: string_list(v.get("verbs")),
            api_groups: string_list(v.get("apiGroups")),
            resources: string_list(v.get("resources")),
            resource_names: string_list(v.get("resourceNames")),
            non_resource_urls: string_list(v.get("nonResourceURLs")),
        }
    }

    /// The v1 JSON: `verbs` always, the other lists `omitempty`.
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, l: &Vec<String>| {
            if !l.is_empty() {
                m.insert(k.to_string(), json!(l));
            }
        };
        put("apiGroups", &self.api_groups);
        put("resources", &self.resources);
        put("resourceNames", &self.resource_names);
        put("nonResourceURLs", &self.non_resource_urls);
        m.insert("verbs".to_string(), json!(self.verbs));
        Value::Object(m)
    }
}

fn rules_of(role: &Value) -> Vec<PolicyRule> {
    role.get("rules")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(PolicyRule::from_json).collect())
        .unwrap_or_default()
}

/// evaluation_helpers.go :: `VerbMatches`.
fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == "*" || v == verb)
}

/// evaluation_helpers.go :: `APIGroupMatches`.
fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups.iter().any(|g| g == "*" || g == group)
}

/// evaluation_helpers.go :: `ResourceMatches`: `*`, the exact `<resource>[/<subresource>]`, or
/// `*/<subresource>`. (A rule `<resource>/*` matches only the literal subresource `*`.)
fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        r == "*"
            || r == combined
            || (!subresource.is_empty()
                && r.len() == subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(subresource))
    })
}

/// evaluation_helpers.go :: `ResourceNameMatches`: an empty list matches every name, including
/// the empty name of list/watch/create/deletecollection; otherwise the name must be listed.
fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name)
}

/// evaluation_helpers.go :: `NonResourceURLMatches`: `*`, exact, or a prefix before trailing `*`s.
fn non_resource_url_matches(rule: &PolicyRule, url: &str) -> bool {
    rule.non_resource_urls.iter().any(|u| {
        u == "*" || u == url || (u.ends_with('*') && url.starts_with(u.trim_end_matches('*')))
    })
}

/// rbac.go :: `RuleAllows`.
fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if attrs.resource_request {
        let combined = if attrs.subresource.is_empty() {
            attrs.resource.clone()
        } else {
            format!("{}/{}", attrs.resource, attrs.subresource)
        };
        verb_matches(rule, &attrs.verb)
            && api_group_matches(rule, &attrs.api_group)
            && resource_matches(rule, &combined, &attrs.subresource)
            && resource_name_matches(rule, &attrs.name)
    } else {
        verb_matches(rule, &attrs.verb) && non_resource_url_matches(rule, &attrs.path)
    }
}

/// `serviceaccount.MatchesUsername`.
fn matches_sa_username(namespace: &str, name: &str, username: &str) -> bool {
    username
        .strip_prefix("system:serviceaccount:")
        .and_then(|u| u.strip_prefix(namespace))
        .and_then(|u| u.strip_prefix(':'))
        .is_some_and(|u| u == name)
}

/// rule.go :: `appliesToUser`. A ServiceAccount subject without a namespace means the binding's
/// namespace; in a ClusterRoleBinding it matches nobody.
fn applies_to_user(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = str_field(subject, "/name");
    match str_field(subject, "/kind") {
        "User" => user.name == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let sa_ns = match str_field(subject, "/namespace") {
                "" => namespace,
                ns => ns,
            };
            !sa_ns.is_empty() && matches_sa_username(sa_ns, name, &user.name)
        }
        _ => false,
    }
}

/// rule.go :: `describeSubject`.
fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let kind = str_field(subject, "/kind");
    let name = str_field(subject, "/name");
    if kind == "ServiceAccount" {
        let ns = match str_field(subject, "/namespace") {
            "" => binding_namespace,
            ns => ns,
        };
        format!("{kind} {}", go_quote(&format!("{name}/{ns}")))
    } else {
        format!("{kind} {}", go_quote(name))
    }
}

fn kind_of(o: &Value) -> &str {
    str_field(o, "/kind")
}

fn name_of(o: &Value) -> &str {
    str_field(o, "/metadata/name")
}

fn namespace_of(o: &Value) -> &str {
    str_field(o, "/metadata/namespace")
}

/// The RBAC objects the informers would hold.
struct Rbac<'a> {
    objects: &'a [Value],
}

/// A visitor gets the source of a rule (a binding description), the rule, or an error.
type Visitor<'v> = dyn FnMut(&str, Option<&PolicyRule>, Option<String>) -> bool + 'v;

impl<'a> Rbac<'a> {
    fn of_kind(&self, kind: &'static str) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects.iter().filter(move |o| kind_of(o) == kind)
    }

    fn sorted(mut v: Vec<&'a Value>) -> Vec<&'a Value> {
        v.sort_by(|a, b| (namespace_of(a), name_of(a)).cmp(&(namespace_of(b), name_of(b))));
        v
    }

    fn cluster_role(&self, name: &str) -> Option<&'a Value> {
        self.of_kind("ClusterRole").find(|o| name_of(o) == name)
    }

    /// The rules a ClusterRole has once the aggregation controller has synced it
    /// (clusterroleaggregation_controller.go :: `syncClusterRole`): for each selector in order,
    /// the matching ClusterRoles sorted by name, except itself, their rules de-duplicated. A
    /// selector that does not convert leaves the stored rules (the sync fails). Chains of
    /// aggregated roles are resolved as converged; a cycle falls back to the stored rules.
    fn effective_cluster_role_rules(
        &self,
        role: &Value,
        visiting: &mut Vec<String>,
    ) -> Vec<PolicyRule> {
        let stored = rules_of(role);
        let Some(aggregation) = role.get("aggregationRule").filter(|a| a.is_object()) else {
            return stored;
        };
        let name = name_of(role).to_string();
        if visiting.contains(&name) {
            return stored;
        }
        let selectors = aggregation
            .get("clusterRoleSelectors")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut parsed = Vec::new();
        for s in &selectors {
            match LabelSelector::from_label_selector(s) {
                Ok(sel) => parsed.push(sel),
                Err(_) => return stored,
            }
        }
        visiting.push(name.clone());
        let mut rules: Vec<PolicyRule> = Vec::new();
        for selector in &parsed {
            let matched = Self::sorted(
                self.of_kind("ClusterRole")
                    .filter(|cr| {
                        selector.matches(cr.pointer("/metadata/labels").unwrap_or(&Value::Null))
                    })
                    .collect(),
            );
            for cr in matched {
                if name_of(cr) == name {
                    continue;
                }
                for rule in self.effective_cluster_role_rules(cr, visiting) {
                    if !rules.contains(&rule) {
                        rules.push(rule);
                    }
                }
            }
        }
        visiting.pop();
        rules
    }

    /// rule.go :: `GetRoleReferenceRules`, with the listers' NotFound messages.
    fn role_reference_rules(
        &self,
        role_ref: &Value,
        binding_namespace: &str,
    ) -> Result<Vec<PolicyRule>, String> {
        let name = str_field(role_ref, "/name");
        match str_field(role_ref, "/kind") {
            "Role" => self
                .of_kind("Role")
                .find(|o| {
                    !binding_namespace.is_empty()
                        && namespace_of(o) == binding_namespace
                        && name_of(o) == name
                })
                .map(rules_of)
                .ok_or_else(|| format!("role.{RBAC_GROUP} {} not found", go_quote(name))),
            "ClusterRole" => self
                .cluster_role(name)
                .map(|cr| self.effective_cluster_role_rules(cr, &mut Vec::new()))
                .ok_or_else(|| format!("clusterrole.{RBAC_GROUP} {} not found", go_quote(name))),
            kind => Err(format!(
                "unsupported role reference kind: {}",
                go_quote(kind)
            )),
        }
    }

    /// rule.go :: `DefaultRuleResolver.VisitRulesFor`: ClusterRoleBindings, then (in a namespace)
    /// that namespace's RoleBindings.
    fn visit_rules_for(&self, user: &UserInfo, namespace: &str, visitor: &mut Visitor<'_>) {
        let crbs = Self::sorted(self.of_kind("ClusterRoleBinding").collect());
        let rbs = if namespace.is_empty() {
            Vec::new()
        } else {
            Self::sorted(
                self.of_kind("RoleBinding")
                    .filter(|rb| namespace_of(rb) == namespace)
                    .collect(),
            )
        };
        let bindings = crbs
            .into_iter()
            .map(|b| (b, ""))
            .chain(rbs.into_iter().map(|b| (b, namespace)));
        for (binding, ns) in bindings {
            let subjects = binding
                .get("subjects")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let Some(subject) = subjects.iter().find(|s| applies_to_user(user, s, ns)) else {
                continue;
            };
            let role_ref = binding.get("roleRef").unwrap_or(&Value::Null);
            let rules = match self.role_reference_rules(role_ref, ns) {
                Ok(rules) => rules,
                Err(e) => {
                    if !visitor("", None, Some(e)) {
                        return;
                    }
                    continue;
                }
            };
            let source = if ns.is_empty() {
                format!(
                    "ClusterRoleBinding {} of {} {} to {}",
                    go_quote(name_of(binding)),
                    str_field(role_ref, "/kind"),
                    go_quote(str_field(role_ref, "/name")),
                    describe_subject(subject, "")
                )
            } else {
                format!(
                    "RoleBinding {} of {} {} to {}",
                    go_quote(&format!("{}/{}", name_of(binding), namespace_of(binding))),
                    str_field(role_ref, "/kind"),
                    go_quote(str_field(role_ref, "/name")),
                    describe_subject(subject, namespace_of(binding))
                )
            };
            for rule in &rules {
                if !visitor(&source, Some(rule), None) {
                    return;
                }
            }
        }
    }
}

/// The union of kube-apiserver's authorizers as modelled: `system:masters` first
/// (`privilegedGroupAuthorizer`, reason `""`), then RBAC (`RBACAuthorizer.Authorize`: reason
/// `RBAC: allowed by <binding>` or, on denial, `RBAC: <resolution errors>` or `""`).
fn evaluate(attrs: &Attributes, rbac_objects: &[Value]) -> (bool, String) {
    if attrs.user.groups.iter().any(|g| g == SYSTEM_MASTERS) {
        return (true, String::new());
    }
    let mut allowed_by: Option<String> = None;
    let mut errors: Vec<String> = Vec::new();
    Rbac {
        objects: rbac_objects,
    }
    .visit_rules_for(&attrs.user, &attrs.namespace, &mut |source, rule, err| {
        if let Some(rule) = rule
            && rule_allows(attrs, rule)
        {
            allowed_by = Some(format!("RBAC: allowed by {source}"));
            return false;
        }
        if let Some(e) = err {
            errors.push(e);
        }
        true
    });
    match allowed_by {
        Some(reason) => (true, reason),
        None if errors.is_empty() => (false, String::new()),
        None => (false, format!("RBAC: {}", aggregate_error(&errors))),
    }
}

/// Authorizes a request as kube-apiserver (`withAuthorization` over the union of the
/// privileged-group and RBAC authorizers) against the given RBAC objects (full JSON objects of
/// `rbac.authorization.k8s.io/v1` Role, ClusterRole, RoleBinding, ClusterRoleBinding; other
/// kinds are ignored). RoleBindings count only in the request's namespace (to Roles of that
/// namespace or to ClusterRoles), ClusterRoleBindings everywhere. Aggregated ClusterRoles
/// have the rules the aggregation controller gives them.
pub fn authorize(attrs: &Attributes, rbac_objects: &[Value]) -> Decision {
    match evaluate(attrs, rbac_objects) {
        (true, _) => Decision::Allow,
        (false, reason) => Decision::Deny(reason),
    }
}

/// The `status` of a `SelfSubjectAccessReview` for these attributes
/// (selfsubjectaccessreview/rest.go :: `REST.Create`): `allowed`, and `reason` when not empty
/// (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`). RBAC never
/// denies explicitly and returns no evaluation error, so `denied` and `evaluationError` are
/// never set.
pub fn access_review_status(attrs: &Attributes, rbac_objects: &[Value]) -> Value {
    let (allowed, reason) = evaluate(attrs, rbac_objects);
    let mut status = Map::new();
    status.insert("allowed".to_string(), Value::Bool(allowed));
    if !reason.is_empty() {
        status.insert("reason".to_string(), Value::String(reason));
    }
    Value::Object(status)
}

/// responsewriters/errors.go :: `forbiddenMessage`.
fn forbidden_message(attrs: &Attributes) -> String {
    let user = go_quote(&attrs.user.name);
    if !attrs.resource_request {
        return format!(
            "User {user} cannot {} path {}",
            attrs.verb,
            go_quote(&attrs.path)
        );
    }
    let mut resource = attrs.resource.clone();
    if !attrs.subresource.is_empty() {
        resource = format!("{resource}/{}", attrs.subresource);
    }
    if !attrs.namespace.is_empty() {
        format!(
            "User {user} cannot {} resource {} in API group {} in the namespace {}",
            attrs.verb,
            go_quote(&resource),
            go_quote(&attrs.api_group),
            go_quote(&attrs.namespace)
        )
    } else {
        format!(
            "User {user} cannot {} resource {} in API group {} at the cluster scope",
            attrs.verb,
            go_quote(&resource),
            go_quote(&attrs.api_group)
        )
    }
}

/// The responsewriters' `sanitizer`: `&`, `<`, `>` as HTML entities.
fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// The 403 `Status` body (`ForbiddenStatusError` + `NewForbidden` + `ErrorToAPIStatus`):
/// `<resource>[.<group>] ["<name>" ]is forbidden: <forbiddenMessage>[: <reason>]`, or
/// `forbidden: User "<u>" cannot <verb> path "<path>"` for non-resource requests; `details`
/// holds `name`, `group` and `kind` (the plural resource), each omitted when empty.
pub fn forbidden_status(attrs: &Attributes, reason: &str) -> Value {
    let msg = sanitize(&forbidden_message(attrs));
    let err = if reason.is_empty() {
        msg
    } else {
        format!("{msg}: {reason}")
    };
    let group = &attrs.api_group;
    let resource = &attrs.resource;
    let qualified = if group.is_empty() {
        resource.clone()
    } else {
        format!("{resource}.{group}")
    };
    let message = if group.is_empty() && resource.is_empty() {
        format!("forbidden: {err}")
    } else if attrs.name.is_empty() {
        format!("{qualified} is forbidden: {err}")
    } else {
        format!("{qualified} {} is forbidden: {err}", go_quote(&attrs.name))
    };
    let mut details = Map::new();
    for (k, v) in [("name", &attrs.name), ("group", group), ("kind", resource)] {
        if !v.is_empty() {
            details.insert(k.to_string(), Value::String(v.clone()));
        }
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    })
}

/// What a `SelfSubjectRulesReview` for `namespace` returns (selfsubjectrulesreview/rest.go ::
/// `REST.Create` over `RBACAuthorizer.RulesFor`): the whole `authorization.k8s.io/v1` object
/// with an empty `spec` (upstream does not echo it) and `status.resourceRules` (rules with
/// resources), `status.nonResourceRules` (rules with non-resource URLs), `incomplete: false`,
/// and `evaluationError` when a binding's role is missing. The privileged group contributes
/// no rules (it is not a rule resolver). An empty namespace gives the 400 `Status` upstream
/// answers (`no namespace on request`).
pub fn rules_review(user: &UserInfo, namespace: &str, rbac_objects: &[Value]) -> Value {
    if namespace.is_empty() {
        return json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "no namespace on request",
            "reason": "BadRequest",
            "code": 400,
        });
    }
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    let mut errors = Vec::new();
    Rbac {
        objects: rbac_objects,
    }
    .visit_rules_for(user, namespace, &mut |_, rule, err| {
        if let Some(rule) = rule {
            if !rule.resources.is_empty() {
                let mut m = Map::new();
                m.insert("verbs".to_string(), json!(rule.verbs));
                for (k, l) in [
                    ("apiGroups", &rule.api_groups),
                    ("resources", &rule.resources),
                    ("resourceNames", &rule.resource_names),
                ] {
                    if !l.is_empty() {
                        m.insert(k.to_string(), json!(l));
                    }
                }
                resource_rules.push(Value::Object(m));
            }
            if !rule.non_resource_urls.is_empty() {
                non_resource_rules.push(json!({
                    "verbs": rule.verbs,
                    "nonResourceURLs": rule.non_resource_urls,
                }));
            }
        }
        if let Some(e) = err {
            errors.push(e);
        }
        true
    });
    let mut status = Map::new();
    status.insert("resourceRules".to_string(), Value::Array(resource_rules));
    status.insert(
        "nonResourceRules".to_string(),
        Value::Array(non_resource_rules),
    );
    status.insert("incomplete".to_string(), Value::Bool(false));
    if !errors.is_empty() {
        status.insert(
            "evaluationError".to_string(),
            Value::String(aggregate_error(&errors)),
        );
    }
    json!({
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {},
        "status": status,
    })
}

/// The `rules` the ClusterRole aggregation controller writes into `cluster_role` (see
/// `syncClusterRole`), or `None` when it has no `aggregationRule`; a fake can store them to
/// show what `kubectl get clusterrole` shows on a real cluster.
pub fn aggregated_rules(cluster_role: &Value, rbac_objects: &[Value]) -> Option<Value> {
    cluster_role
        .get("aggregationRule")
        .filter(|a| a.is_object())?;
    let rules = Rbac {
        objects: rbac_objects,
    }
    .effective_cluster_role_rules(cluster_role, &mut Vec::new());
    Some(Value::Array(
        rules.iter().map(PolicyRule::to_json).collect(),
    ))
}

/// The default RBAC objects of a real cluster that matter to clients (bootstrappolicy/policy.go
/// :: `ClusterRoles`, `ClusterRoleBindings`, with `addDefaultMetadata`'s label and annotation
/// and `PolicyRuleBuilder.Rule`'s sorted lists): `cluster-admin` (bound to `system:masters`),
/// `system:discovery` and `system:basic-user` (bound to `system:authenticated`),
/// `system:public-info-viewer` (bound to `system:authenticated` and `system:unauthenticated`)
/// and `system:service-account-issuer-discovery` (bound to `system:serviceaccounts`: what
/// `kubectl auth can-i --list` shows a ServiceAccount besides the others). Only these five of
/// upstream's roles are provided; `admin`/`edit`/`view`, the controller and node roles are not.
pub fn bootstrap_policy() -> Vec<Value> {
    let metadata = |name: &str| {
        json!({
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        })
    };
    let cluster_role = |name: &str, rules: Value| {
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": metadata(name),
            "rules": rules,
        })
    };
    let binding = |name: &str, groups: &[&str]| {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"apiGroup": RBAC_GROUP, "kind": "Group", "name": g}))
            .collect();
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": metadata(name),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
            "subjects": subjects,
        })
    };
    vec![
        cluster_role(
            "cluster-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
        ),
        cluster_role(
            "system:discovery",
            json!([{
                "nonResourceURLs": [
                    "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                    "/openapi/*", "/readyz", "/version", "/version/",
                ],
                "verbs": ["get"],
            }]),
        ),
        cluster_role(
            "system:basic-user",
            json!([
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                    "verbs": ["create"],
                },
            ]),
        ),
        cluster_role(
            "system:public-info-viewer",
            json!([{
                "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                "verbs": ["get"],
            }]),
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            json!([{
                "nonResourceURLs": [
                    "/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                    "/openid/v1/jwks", "/openid/v1/jwks/",
                ],
                "verbs": ["get"],
            }]),
        ),
        binding("cluster-admin", &[SYSTEM_MASTERS]),
        binding("system:discovery", &[ALL_AUTHENTICATED]),
        binding("system:basic-user", &[ALL_AUTHENTICATED]),
        binding(
            "system:public-info-viewer",
            &[ALL_AUTHENTICATED, ALL_UNAUTHENTICATED],
        ),
        binding(
            "system:service-account-issuer-discovery",
            &["system:serviceaccounts"],
        ),
    ]
}

/// Percent-decoding as Go's `url.PathUnescape` / `QueryUnescape` (`+` is a space in queries);
/// a malformed escape is kept literally.
fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let hex = |x: u8| (x as char).to_digit(16);
        if c == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(if plus_is_space && c == b'+' { b' ' } else { c });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `url.ParseQuery`, keeping order (pairs with `;` are dropped, as Go does).
fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty() && !p.contains(';'))
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k, true), percent_decode(v, true))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SA: &str = "system:serviceaccount:ns:sa";

    fn sa() -> UserInfo {
        UserInfo::service_account("ns", "sa")
    }

    fn role(ns: &str, name: &str, rules: Value) -> Value {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": name, "namespace": ns}, "rules": rules})
    }

    fn cluster_role(name: &str, labels: Value, rules: Value) -> Value {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": name, "labels": labels}, "rules": rules})
    }

    fn role_binding(ns: &str, name: &str, kind: &str, role: &str, subjects: Value) -> Value {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": name, "namespace": ns},
               "roleRef": {"apiGroup": RBAC_GROUP, "kind": kind, "name": role},
               "subjects": subjects})
    }

    fn cluster_role_binding(name: &str, role: &str, subjects: Value) -> Value {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": name},
               "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
               "subjects": subjects})
    }

    fn sa_subject(ns: &str, name: &str) -> Value {
        json!({"kind": "ServiceAccount", "name": name, "namespace": ns})
    }

    /// The objects most tests evaluate against.
    fn fixture() -> Vec<Value> {
        vec![
            role(
                "ns",
                "leases",
                json!([{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                        "verbs": ["get", "update"], "resourceNames": ["olmctl-leader"]},
                       {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                        "verbs": ["create"]}]),
            ),
            role_binding(
                "ns",
                "leases",
                "Role",
                "leases",
                json!([sa_subject("ns", "sa")]),
            ),
            cluster_role(
                "pod-reader",
                json!({}),
                json!([{"apiGroups": [""], "resources": ["pods", "pods/log"],
                        "verbs": ["get", "list", "watch"]}]),
            ),
            // A RoleBinding to a ClusterRole grants it in "apps" only; its SA subject has no
            // namespace and so means apps/sa.
            role_binding(
                "apps",
                "read-pods",
                "ClusterRole",
                "pod-reader",
                json!([{"kind": "ServiceAccount", "name": "sa"}, sa_subject("ns", "sa")]),
            ),
            cluster_role(
                "status-writer",
                json!({}),
                json!([{"apiGroups": ["olmctl.dev"], "resources": ["*/status"],
                        "verbs": ["update", "patch"]},
                       {"apiGroups": ["apps"], "resources": ["deployments/*"],
                        "verbs": ["get"]}]),
            ),
            cluster_role_binding(
                "status-writer",
                "status-writer",
                json!([{"kind": "Group", "apiGroup": RBAC_GROUP, "name": "olm-operators"}]),
            ),
            cluster_role(
                "metrics",
                json!({}),
                json!([{"nonResourceURLs": ["/metrics", "/logs/*"], "verbs": ["get"]}]),
            ),
            // A ServiceAccount subject of a ClusterRoleBinding without a namespace matches
            // nobody.
            cluster_role_binding(
                "metrics",
                "metrics",
                json!([{"kind": "ServiceAccount", "name": "sa"},
                       {"kind": "User", "apiGroup": RBAC_GROUP, "name": "alice"}]),
            ),
            cluster_role(
                "ns-reader",
                json!({}),
                json!([{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}]),
            ),
            cluster_role_binding(
                "ns-reader",
                "ns-reader",
                json!([{"kind": "Group", "apiGroup": RBAC_GROUP, "name": "system:serviceaccounts:ns"}]),
            ),
        ]
    }

    #[test]
    fn users() {
        assert_eq!(
            UserInfo::service_account("ns", "sa"),
            UserInfo {
                name: SA.to_string(),
                groups: vec![
                    "system:serviceaccounts".to_string(),
                    "system:serviceaccounts:ns".to_string(),
                    "system:authenticated".to_string()
                ]
            }
        );
        assert_eq!(
            UserInfo::user("bob", &["dev"]).groups,
            vec!["dev", "system:authenticated"]
        );
        assert_eq!(
            UserInfo::user("bob", &["system:authenticated"]).groups,
            vec!["system:authenticated"]
        );
        assert!(
            UserInfo::admin()
                .groups
                .contains(&"system:masters".to_string())
        );
    }

    #[test]
    fn authorize_table() {
        let objs = fixture();
        let alice = UserInfo::user("alice", &[]);
        let operator = UserInfo::user("op", &["olm-operators"]);
        let other_sa = UserInfo::service_account("other", "sa");
        let apps_sa = UserInfo::service_account("apps", "sa");
        let lease = |u: &UserInfo, verb: &str| {
            Attributes::resource(u.clone(), verb, "coordination.k8s.io", "leases")
                .in_namespace("ns")
        };
        let cases: Vec<(&str, Attributes, bool)> = vec![
            // resourceNames: a named get is allowed, a list (no name) and another name are not.
            (
                "named get",
                lease(&sa(), "get").named("olmctl-leader"),
                true,
            ),
            (
                "named update",
                lease(&sa(), "update").named("olmctl-leader"),
                true,
            ),
            ("other name", lease(&sa(), "get").named("other"), false),
            ("list with resourceNames", lease(&sa(), "list"), false),
            ("create without names", lease(&sa(), "create"), true),
            (
                "create is not named",
                lease(&sa(), "create").named("x"),
                true,
            ),
            (
                "delete not granted",
                lease(&sa(), "delete").named("olmctl-leader"),
                false,
            ),
            (
                "other namespace",
                lease(&sa(), "get").named("olmctl-leader").in_namespace("x"),
                false,
            ),
            (
                "cluster scope",
                lease(&sa(), "create").in_namespace(""),
                false,
            ),
            ("other sa", lease(&other_sa, "create"), false),
            (
                "wrong group",
                Attributes::resource(sa(), "create", "", "leases").in_namespace("ns"),
                false,
            ),
            // RoleBinding to a ClusterRole: only in its namespace.
            (
                "rb to clusterrole in apps (namespaced subject)",
                Attributes::resource(sa(), "list", "", "pods").in_namespace("apps"),
                true,
            ),
            (
                "rb to clusterrole in apps (defaulted subject namespace)",
                Attributes::resource(apps_sa.clone(), "watch", "", "pods").in_namespace("apps"),
                true,
            ),
            (
                "rb to clusterrole elsewhere",
                Attributes::resource(sa(), "list", "", "pods").in_namespace("ns"),
                false,
            ),
            (
                "rb to clusterrole at cluster scope",
                Attributes::resource(sa(), "list", "", "pods"),
                false,
            ),
            // Subresources.
            (
                "explicit subresource",
                Attributes::resource(sa(), "get", "", "pods")
                    .in_namespace("apps")
                    .named("p")
                    .subresource("log"),
                true,
            ),
            (
                "unlisted subresource",
                Attributes::resource(sa(), "get", "", "pods")
                    .in_namespace("apps")
                    .named("p")
                    .subresource("exec"),
                false,
            ),
            (
                "*/status",
                Attributes::resource(operator.clone(), "patch", "olmctl.dev", "upgradepolicies")
                    .in_namespace("x")
                    .named("p")
                    .subresource("status"),
                true,
            ),
            (
                "*/status is not the main resource",
                Attributes::resource(operator.clone(), "patch", "olmctl.dev", "upgradepolicies")
                    .in_namespace("x")
                    .named("p"),
                false,
            ),
            (
                "<resource>/* is literal upstream",
                Attributes::resource(operator.clone(), "get", "apps", "deployments")
                    .in_namespace("x")
                    .named("d")
                    .subresource("scale"),
                false,
            ),
            // Group subjects.
            (
                "group of all SAs in ns",
                Attributes::resource(sa(), "list", "", "namespaces"),
                true,
            ),
            (
                "group does not cover other ns",
                Attributes::resource(other_sa.clone(), "list", "", "namespaces"),
                false,
            ),
            // Non-resource URLs.
            (
                "user exact url",
                Attributes::non_resource(alice.clone(), "get", "/metrics"),
                true,
            ),
            (
                "url prefix",
                Attributes::non_resource(alice.clone(), "get", "/logs/kubelet.log"),
                true,
            ),
            (
                "url prefix base",
                Attributes::non_resource(alice.clone(), "get", "/logs/"),
                true,
            ),
            (
                "url no prefix",
                Attributes::non_resource(alice.clone(), "get", "/logs"),
                false,
            ),
            (
                "url verb",
                Attributes::non_resource(alice.clone(), "post", "/metrics"),
                false,
            ),
            (
                "crb sa subject without namespace",
                Attributes::non_resource(sa(), "get", "/metrics"),
                false,
            ),
            // Admin bypass: no RBAC object is needed.
            (
                "admin",
                Attributes::resource(UserInfo::admin(), "delete", "", "nodes").named("n"),
                true,
            ),
            (
                "admin url",
                Attributes::non_resource(UserInfo::admin(), "get", "/anything"),
                true,
            ),
        ];
        for (what, attrs, want) in cases {
            let got = authorize(&attrs, &objs);
            assert_eq!(got == Decision::Allow, want, "{what}: {got:?}");
        }
        assert_eq!(
            authorize(
                &Attributes::resource(UserInfo::admin(), "get", "", "pods"),
                &[]
            ),
            Decision::Allow
        );
    }

    #[test]
    fn forbidden_messages() {
        let sa = sa();
        let cases: Vec<(Attributes, &str, &str, Value)> = vec![
            (
                Attributes::resource(sa.clone(), "get", "coordination.k8s.io", "leases")
                    .in_namespace("ns")
                    .named("olmctl-leader"),
                "",
                r#"leases.coordination.k8s.io "olmctl-leader" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "ns""#,
                json!({"name": "olmctl-leader", "group": "coordination.k8s.io", "kind": "leases"}),
            ),
            (
                Attributes::resource(sa.clone(), "list", "coordination.k8s.io", "leases")
                    .in_namespace("ns"),
                "",
                r#"leases.coordination.k8s.io is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "ns""#,
                json!({"group": "coordination.k8s.io", "kind": "leases"}),
            ),
            (
                Attributes::resource(sa.clone(), "list", "", "namespaces"),
                "",
                r#"namespaces is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "namespaces" in API group "" at the cluster scope"#,
                json!({"kind": "namespaces"}),
            ),
            (
                Attributes::resource(
                    sa.clone(),
                    "get",
                    "apiextensions.k8s.io",
                    "customresourcedefinitions",
                )
                .named("upgradepolicies.olmctl.dev"),
                "",
                r#"customresourcedefinitions.apiextensions.k8s.io "upgradepolicies.olmctl.dev" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope"#,
                json!({"name": "upgradepolicies.olmctl.dev", "group": "apiextensions.k8s.io", "kind": "customresourcedefinitions"}),
            ),
            (
                Attributes::resource(sa.clone(), "update", "olmctl.dev", "upgradepolicies")
                    .in_namespace("ns")
                    .named("x")
                    .subresource("status"),
                "",
                r#"upgradepolicies.olmctl.dev "x" is forbidden: User "system:serviceaccount:ns:sa" cannot update resource "upgradepolicies/status" in API group "olmctl.dev" in the namespace "ns""#,
                json!({"name": "x", "group": "olmctl.dev", "kind": "upgradepolicies"}),
            ),
            (
                Attributes::non_resource(UserInfo::anonymous(), "get", "/metrics"),
                "",
                r#"forbidden: User "system:anonymous" cannot get path "/metrics""#,
                json!({}),
            ),
            (
                Attributes::resource(sa.clone(), "get", "", "pods")
                    .in_namespace("ns")
                    .named("p"),
                r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#,
                r#"pods "p" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "pods" in API group "" in the namespace "ns": RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#,
                json!({"name": "p", "kind": "pods"}),
            ),
            (
                // The sanitizer escapes the message, not the reason.
                Attributes::non_resource(UserInfo::user("a<b>&c", &[]), "get", "/x"),
                "<r>",
                r#"forbidden: User "a&lt;b&gt;&amp;c" cannot get path "/x": <r>"#,
                json!({}),
            ),
        ];
        for (attrs, reason, message, details) in cases {
            let status = forbidden_status(&attrs, reason);
            assert_eq!(
                status,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": "Forbidden", "details": details, "code": 403}),
                "{message}"
            );
        }
    }

    #[test]
    fn denial_reasons() {
        let objs = vec![
            role_binding(
                "ns",
                "a-gone",
                "ClusterRole",
                "gone",
                json!([sa_subject("ns", "sa")]),
            ),
            role_binding(
                "ns",
                "b-gone-role",
                "Role",
                "missing",
                json!([sa_subject("ns", "sa")]),
            ),
            role_binding("ns", "c-bad", "Thing", "x", json!([sa_subject("ns", "sa")])),
            role_binding(
                "ns",
                "d-gone-again",
                "ClusterRole",
                "gone",
                json!([sa_subject("ns", "sa")]),
            ),
            // Not for this user: never resolved, so no error.
            role_binding(
                "ns",
                "e-other",
                "ClusterRole",
                "nope",
                json!([sa_subject("ns", "x")]),
            ),
        ];
        let attrs = Attributes::resource(sa(), "get", "", "pods")
            .in_namespace("ns")
            .named("p");
        assert_eq!(
            authorize(&attrs, &objs),
            Decision::Deny(
                r#"RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "missing" not found, unsupported role reference kind: "Thing"]"#
                    .to_string()
            )
        );
        assert_eq!(
            authorize(&attrs, &objs[..1]),
            Decision::Deny(
                r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#.to_string()
            )
        );
        assert_eq!(authorize(&attrs, &[]), Decision::Deny(String::new()));
        // An allowing rule wins over resolution errors.
        let mut allowing = objs.clone();
        allowing.push(cluster_role(
            "all-pods",
            json!({}),
            json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]),
        ));
        allowing.push(role_binding(
            "ns",
            "z",
            "ClusterRole",
            "all-pods",
            json!([sa_subject("ns", "sa")]),
        ));
        assert_eq!(authorize(&attrs, &allowing), Decision::Allow);
        assert_eq!(
            access_review_status(&attrs, &allowing),
            json!({"allowed": true,
                   "reason": r#"RBAC: allowed by RoleBinding "z/ns" of ClusterRole "all-pods" to ServiceAccount "sa/ns""#})
        );
        assert_eq!(
            access_review_status(&attrs, &objs[..1]),
            json!({"allowed": false,
                   "reason": r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#})
        );
        assert_eq!(access_review_status(&attrs, &[]), json!({"allowed": false}));
    }

    #[test]
    fn bootstrap_discovery() {
        let objs = bootstrap_policy();
        let cases: Vec<(UserInfo, &str, &str, bool)> = vec![
            (sa(), "get", "/api", true),
            (sa(), "get", "/api/v1", true),
            (sa(), "get", "/apis", true),
            (sa(), "get", "/apis/olmctl.dev/v1alpha1", true),
            (sa(), "get", "/version", true),
            (sa(), "get", "/openapi/v3", true),
            (sa(), "get", "/openapi/v3/apis/olmctl.dev/v1alpha1", true),
            (sa(), "get", "/healthz", true),
            (sa(), "get", "/metrics", false),
            (sa(), "get", "/.well-known/openid-configuration", true),
            (sa(), "get", "/openid/v1/jwks/", true),
            (UserInfo::anonymous(), "get", "/openid/v1/jwks", false),
            (sa(), "post", "/api", false),
            (UserInfo::anonymous(), "get", "/version", true),
            (UserInfo::anonymous(), "get", "/readyz", true),
            (UserInfo::anonymous(), "get", "/api", false),
        ];
        for (user, verb, path, want) in cases {
            let got = authorize(&Attributes::non_resource(user.clone(), verb, path), &objs);
            assert_eq!(
                got == Decision::Allow,
                want,
                "{} {verb} {path}: {got:?}",
                user.name
            );
        }
        for (group, resource, want) in [
            ("authorization.k8s.io", "selfsubjectaccessreviews", true),
            ("authorization.k8s.io", "selfsubjectrulesreviews", true),
            ("authentication.k8s.io", "selfsubjectreviews", true),
            ("authorization.k8s.io", "subjectaccessreviews", false),
        ] {
            let attrs = Attributes::resource(sa(), "create", group, resource);
            assert_eq!(
                authorize(&attrs, &objs) == Decision::Allow,
                want,
                "{resource}"
            );
        }
        let ssar = Attributes::resource(
            sa(),
            "create",
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
        );
        assert_eq!(
            access_review_status(&ssar, &objs),
            json!({"allowed": true, "reason": r#"RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated""#})
        );
    }

    #[test]
    fn rules_review_lists_granted_rules() {
        let objs = fixture();
        let got = rules_review(&sa(), "ns", &objs);
        assert_eq!(
            got,
            json!({
                "kind": "SelfSubjectRulesReview",
                "apiVersion": "authorization.k8s.io/v1",
                "metadata": {},
                "spec": {},
                "status": {
                    "resourceRules": [
                        {"verbs": ["list"], "apiGroups": [""], "resources": ["namespaces"]},
                        {"verbs": ["get", "update"], "apiGroups": ["coordination.k8s.io"],
                         "resources": ["leases"], "resourceNames": ["olmctl-leader"]},
                        {"verbs": ["create"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]},
                    ],
                    "nonResourceRules": [],
                    "incomplete": false,
                }
            })
        );
        // In "apps" the RoleBinding to the ClusterRole counts, the "ns" Role does not.
        let apps = rules_review(&sa(), "apps", &objs);
        assert_eq!(
            apps["status"]["resourceRules"],
            json!([
                {"verbs": ["list"], "apiGroups": [""], "resources": ["namespaces"]},
                {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods", "pods/log"]},
            ])
        );
        let alice = rules_review(&UserInfo::user("alice", &[]), "default", &objs);
        assert_eq!(
            alice["status"]["nonResourceRules"],
            json!([{"verbs": ["get"], "nonResourceURLs": ["/metrics", "/logs/*"]}])
        );
        assert_eq!(alice["status"]["resourceRules"], json!([]));
        // Missing roles are reported, the admin's privileged group adds nothing.
        let gone = vec![role_binding(
            "ns",
            "g",
            "Role",
            "gone",
            json!([sa_subject("ns", "sa")]),
        )];
        assert_eq!(
            rules_review(&sa(), "ns", &gone)["status"]["evaluationError"],
            json!(r#"role.rbac.authorization.k8s.io "gone" not found"#)
        );
        assert_eq!(
            rules_review(&UserInfo::admin(), "ns", &[])["status"]["resourceRules"],
            json!([])
        );
        let admin = rules_review(&UserInfo::admin(), "ns", &bootstrap_policy());
        assert_eq!(
            admin["status"]["resourceRules"][0],
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
        );
        assert_eq!(
            rules_review(&sa(), "", &objs),
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "no namespace on request", "reason": "BadRequest", "code": 400})
        );
    }

    #[test]
    fn aggregation() {
        let view = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "view", "labels": {"agg/edit": "true"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg/view": "true"}}]},
            "rules": []});
        let edit = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "edit"},
            "aggregationRule": {"clusterRoleSelectors": [
                {"matchLabels": {"agg/edit": "true"}},
                {"matchExpressions": [{"key": "agg/view", "operator": "In", "values": ["true"]}]}]},
            "rules": [{"apiGroups": ["x"], "resources": ["stale"], "verbs": ["get"]}]});
        let objs = vec![
            view.clone(),
            edit.clone(),
            cluster_role(
                "b-view-subs",
                json!({"agg/view": "true"}),
                json!([{"apiGroups": ["operators.coreos.com"], "resources": ["subscriptions"], "verbs": ["get", "list"]}]),
            ),
            cluster_role(
                "a-view-csvs",
                json!({"agg/view": "true"}),
                json!([{"apiGroups": ["operators.coreos.com"], "resources": ["clusterserviceversions"], "verbs": ["get"]}]),
            ),
            cluster_role(
                "c-edit-subs",
                json!({"agg/edit": "true"}),
                json!([{"apiGroups": ["operators.coreos.com"], "resources": ["subscriptions"], "verbs": ["create"]}]),
            ),
            role_binding(
                "ns",
                "edit",
                "ClusterRole",
                "edit",
                json!([sa_subject("ns", "sa")]),
            ),
        ];
        let csvs = json!({"apiGroups": ["operators.coreos.com"], "resources": ["clusterserviceversions"], "verbs": ["get"]});
        let subs = json!({"apiGroups": ["operators.coreos.com"], "resources": ["subscriptions"], "verbs": ["get", "list"]});
        let create = json!({"apiGroups": ["operators.coreos.com"], "resources": ["subscriptions"], "verbs": ["create"]});
        assert_eq!(aggregated_rules(&view, &objs), Some(json!([csvs, subs])));
        // edit: c-edit-subs then view (by name), then the view selector again (de-duplicated).
        assert_eq!(
            aggregated_rules(&edit, &objs),
            Some(json!([create, csvs, subs]))
        );
        assert_eq!(aggregated_rules(&objs[2], &objs), None);
        let can = |verb: &str, resource: &str| {
            authorize(
                &Attributes::resource(sa(), verb, "operators.coreos.com", resource)
                    .in_namespace("ns"),
                &objs,
            ) == Decision::Allow
        };
        assert!(can("create", "subscriptions"));
        assert!(can("list", "subscriptions"));
        assert!(can("get", "clusterserviceversions"));
        assert!(!can("delete", "subscriptions"));
        // The stale stored rule is replaced.
        assert!(
            authorize(
                &Attributes::resource(sa(), "get", "x", "stale").in_namespace("ns"),
                &objs
            ) != Decision::Allow
        );
        // A bad selector leaves the stored rules (the controller's sync fails).
        let bad = json!({"kind": "ClusterRole", "metadata": {"name": "bad"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchExpressions": [{"key": "k", "operator": "Bogus"}]}]},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
        assert_eq!(
            aggregated_rules(&bad, std::slice::from_ref(&bad)),
            Some(json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]))
        );
        // A cycle terminates.
        let a = json!({"kind": "ClusterRole", "metadata": {"name": "a", "labels": {"l": "a"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"l": "b"}}]}});
        let b = json!({"kind": "ClusterRole", "metadata": {"name": "b", "labels": {"l": "b"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"l": "a"}}]},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/b"]}]});
        assert_eq!(
            aggregated_rules(&a, &[a.clone(), b.clone()]),
            Some(json!([]))
        );
    }

    #[test]
    fn request_attributes() {
        let u = sa();
        let attrs = |method: &str, path: &str, query: &str| {
            let a = Attributes::from_request(u.clone(), method, path, query).expect("no error");
            (
                a.resource_request,
                a.verb,
                a.namespace,
                a.api_group,
                a.resource,
                a.subresource,
                a.name,
            )
        };
        let r = |verb: &str, ns: &str, group: &str, res: &str, sub: &str, name: &str| {
            (
                true,
                verb.to_string(),
                ns.to_string(),
                group.to_string(),
                res.to_string(),
                sub.to_string(),
                name.to_string(),
            )
        };
        let nr = |verb: &str| {
            (
                false,
                verb.to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            )
        };
        let cases = vec![
            (("GET", "/api", ""), nr("get")),
            (("GET", "/apis/olmctl.dev", ""), nr("get")),
            (("GET", "/version", ""), nr("get")),
            (
                ("GET", "/api/v1/namespaces/ns/pods", ""),
                r("list", "ns", "", "pods", "", ""),
            ),
            (
                ("GET", "/api/v1/namespaces/ns/pods", "watch=true"),
                r("watch", "ns", "", "pods", "", ""),
            ),
            (
                ("GET", "/api/v1/namespaces/ns/pods", "watch=false"),
                r("list", "ns", "", "pods", "", ""),
            ),
            (
                ("GET", "/api/v1/namespaces/ns/pods/p/log", ""),
                r("get", "ns", "", "pods", "log", "p"),
            ),
            (
                ("GET", "/api/v1/namespaces/ns", ""),
                r("get", "ns", "", "namespaces", "", "ns"),
            ),
            (
                ("PUT", "/api/v1/namespaces/ns/finalize", ""),
                r("update", "ns", "", "namespaces", "finalize", "ns"),
            ),
            (
                ("GET", "/api/v1/namespaces", ""),
                r("list", "", "", "namespaces", "", ""),
            ),
            (
                (
                    "POST",
                    "/apis/coordination.k8s.io/v1/namespaces/ns/leases",
                    "",
                ),
                r("create", "ns", "coordination.k8s.io", "leases", "", ""),
            ),
            (
                (
                    "PUT",
                    "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l",
                    "",
                ),
                r("update", "ns", "coordination.k8s.io", "leases", "", "l"),
            ),
            (
                (
                    "PATCH",
                    "/apis/olmctl.dev/v1alpha1/namespaces/ns/upgradepolicies/p/status",
                    "",
                ),
                r(
                    "patch",
                    "ns",
                    "olmctl.dev",
                    "upgradepolicies",
                    "status",
                    "p",
                ),
            ),
            (
                (
                    "DELETE",
                    "/apis/olmctl.dev/v1alpha1/namespaces/ns/upgradepolicies",
                    "",
                ),
                r(
                    "deletecollection",
                    "ns",
                    "olmctl.dev",
                    "upgradepolicies",
                    "",
                    "",
                ),
            ),
            (
                (
                    "DELETE",
                    "/apis/olmctl.dev/v1alpha1/namespaces/ns/upgradepolicies/p",
                    "",
                ),
                r("delete", "ns", "olmctl.dev", "upgradepolicies", "", "p"),
            ),
            (
                (
                    "GET",
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.olmctl.dev",
                    "",
                ),
                r(
                    "get",
                    "",
                    "apiextensions.k8s.io",
                    "customresourcedefinitions",
                    "",
                    "x.olmctl.dev",
                ),
            ),
            // kubectl wait: list/watch with metadata.name is authorized for that name.
            (
                (
                    "GET",
                    "/apis/olmctl.dev/v1alpha1/namespaces/ns/upgradepolicies",
                    "fieldSelector=metadata.name%3Dp&watch=1",
                ),
                r("watch", "ns", "olmctl.dev", "upgradepolicies", "", "p"),
            ),
            (
                (
                    "GET",
                    "/apis/olmctl.dev/v1alpha1/namespaces/ns/upgradepolicies",
                    "fieldSelector=metadata.name%3Da%25b",
                ),
                r("list", "ns", "olmctl.dev", "upgradepolicies", "", ""),
            ),
            (
                (
                    "GET",
                    "/apis/olmctl.dev/v1alpha1/namespaces/ns/upgradepolicies",
                    "fieldSelector=metadata.name%3Dp&labelSelector=a%3D%3D%3D",
                ),
                r("list", "ns", "olmctl.dev", "upgradepolicies", "", ""),
            ),
            (
                ("GET", "/api/v1/watch/namespaces/ns/pods", ""),
                r("watch", "ns", "", "pods", "", ""),
            ),
            (
                ("GET", "/api/v1/watch/namespaces/ns/pods/p", ""),
                r("watch", "ns", "", "pods", "", "p"),
            ),
            (
                ("GET", "/api/v1/namespaces/ns/pods/p/proxy/x/y", ""),
                r("get", "ns", "", "pods", "proxy", "p"),
            ),
            (
                ("GET", "/api/v1/proxy/namespaces/ns/pods/p/x", ""),
                r("proxy", "ns", "", "pods", "", "p"),
            ),
        ];
        for ((method, path, query), want) in cases {
            assert_eq!(attrs(method, path, query), want, "{method} {path}?{query}");
        }
        assert_eq!(
            Attributes::from_request(u.clone(), "GET", "/api/v1/watch", ""),
            Err("unable to determine kind and namespace from url, /api/v1/watch".to_string())
        );
        let a = Attributes::from_request(u.clone(), "GET", "/openapi/v3", "").expect("ok");
        assert_eq!(a.path, "/openapi/v3");
    }

    #[test]
    fn self_subject_access_review_attributes() {
        let review = json!({"spec": {"resourceAttributes": {"namespace": "ns", "verb": "get",
            "group": "coordination.k8s.io", "resource": "leases", "name": "olmctl-leader"}}});
        let attrs = Attributes::from_self_subject_access_review(sa(), &review).expect("valid");
        assert_eq!(
            attrs,
            Attributes::resource(sa(), "get", "coordination.k8s.io", "leases")
                .in_namespace("ns")
                .named("olmctl-leader")
        );
        assert_eq!(
            access_review_status(&attrs, &fixture())["allowed"],
            json!(true)
        );
        let nr = json!({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/api"}}});
        assert_eq!(
            Attributes::from_self_subject_access_review(sa(), &nr),
            Ok(Attributes::non_resource(sa(), "get", "/api"))
        );
        assert_eq!(
            Attributes::from_self_subject_access_review(sa(), &json!({"spec": {}})),
            Err(vec!["spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified".to_string()])
        );
        assert!(
            Attributes::from_self_subject_access_review(
                sa(),
                &json!({"spec": {"resourceAttributes": {}, "nonResourceAttributes": {"path": "/"}}})
            )
            .is_err()
        );
    }

    #[test]
    fn malformed_objects_do_not_panic() {
        let junk = vec![
            json!(null),
            json!(1),
            json!({"kind": "RoleBinding"}),
            json!({"kind": "RoleBinding", "metadata": {"namespace": "ns"}, "subjects": "x", "roleRef": 3}),
            json!({"kind": "RoleBinding", "metadata": {"namespace": "ns"},
                   "subjects": [{"kind": "ServiceAccount", "name": "sa"}], "roleRef": 3}),
            json!({"kind": "ClusterRole", "metadata": {"name": "x"}, "rules": [1, {"verbs": "get"}],
                   "aggregationRule": {"clusterRoleSelectors": [null, 1]}}),
            json!({"kind": "ClusterRoleBinding", "subjects": [{"kind": "Group", "name": "system:authenticated"}],
                   "roleRef": {"kind": "ClusterRole", "name": "x"}}),
        ];
        let attrs = Attributes::resource(sa(), "get", "", "pods").in_namespace("ns");
        assert!(matches!(authorize(&attrs, &junk), Decision::Deny(_)));
        let _ = rules_review(&sa(), "ns", &junk);
        for o in &junk {
            let _ = aggregated_rules(o, &junk);
        }
        let _ = Attributes::from_request(sa(), "GET", "%zz/%", "a=%&;=&=%41");
        let _ = Attributes::from_self_subject_access_review(sa(), &json!(7));
    }
}
