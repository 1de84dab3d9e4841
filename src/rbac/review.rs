//! The review a cluster admin needs before installing or upgrading a bundle: each right that
//! matters, flagged with a stable code. Each check is one function below; the severities are
//! the defaults (a namespaced right is one level lower than the same right cluster-wide).

use std::collections::BTreeSet;

use super::grants::{External, Grant, Granted, Origin, Scope};
use super::rule::{Request, Rule, allows};
use crate::diag::Severity::{Error, Info, Warning};
use crate::diag::{Finding, Location, Severity, Subject};

codes! {
    FULL_AUTHORITY = "PERM001", Error, "A rule grants every verb on every resource of every API group (or every non-resource URL): the subject can do anything a cluster admin can.";
    WILDCARD = "PERM002", Warning, "A rule uses a wildcard (`*`) in its verbs, resources or API groups: it grants rights that do not exist yet, and more than the operator can name.";
    ESCALATION_VERBS = "PERM003", Error, "A rule allows `escalate`, `bind` or `impersonate`: the subject can grant itself or act with rights it was not given.";
    SECRETS = "PERM004", Warning, "A rule allows reading Secrets (get, list or watch): every credential stored there, cluster-wide when bound by a ClusterRoleBinding.";
    RBAC_WRITE = "PERM005", Warning, "A rule allows writing RBAC objects (Roles, ClusterRoles and their bindings).";
    ADMISSION_WRITE = "PERM006", Warning, "A rule allows writing admission webhook configurations, admission policies or APIServices: the subject can intercept or serve other APIs' requests.";
    CRD_WRITE = "PERM007", Warning, "A rule allows writing CustomResourceDefinitions beyond the bundle's own (no resourceNames, or other names).";
    EXISTING_ROLE = "PERM008", Warning, "A binding binds a role the bundle does not ship (an existing role of the cluster, such as system:kube-scheduler): its rights are whatever that role holds on the cluster.";
    CLUSTER_WIDE = "PERM009", Info, "A subject gets rights cluster-wide (a ClusterRoleBinding): its namespaced rights apply in every namespace.";
    SENSITIVE_SUBRESOURCE = "PERM010", Warning, "A rule allows a sensitive subresource: pods/exec, pods/attach, pods/portforward, serviceaccounts/token, nodes/proxy or certificate approval.";
    FOREIGN_SUBJECT = "PERM011", Warning, "A binding's subject is not one of the bundle's ServiceAccounts in the install namespace (a user, a group, or another namespace's ServiceAccount).";
    AGGREGATED = "PERM012", Warning, "A ClusterRole carries an aggregate-to-* label: its rules are added to other ClusterRoles (admin, edit, view) and so to everyone bound to them.";
}

/// What the review needs to know besides the grants.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The bundle's own CRD names (`<plural>.<group>`).
    pub own_crds: Vec<String>,
    /// The ServiceAccounts the bundle runs as (names, in `namespace`).
    pub service_accounts: Vec<String>,
    /// The install namespace.
    pub namespace: String,
    /// The subject of every finding (package and bundle).
    pub subject: Subject,
}

fn location(o: Option<&Origin>) -> (Option<Location>, Option<String>) {
    match o {
        Some(o) => (
            Some(Location::new(o.file.clone(), o.pos.line, o.pos.col)),
            (!o.path.is_empty()).then(|| o.path.clone()),
        ),
        None => (None, None),
    }
}

fn probe(rule: &Rule, verbs: &[&str], group: &str, resources: &[&str]) -> Vec<(String, String)> {
    let mut hits = Vec::new();
    for r in resources {
        let (res, sub) = r.split_once('/').unwrap_or((r, ""));
        for v in verbs {
            let mut req = Request::resource(v, group, res);
            req.subresource = sub.to_string();
            if allows(rule, &req) {
                hits.push(((*v).to_string(), (*r).to_string()));
            }
        }
    }
    hits
}

/// [`probe`], and for a rule limited by `resourceNames` the requests for those names: the
/// hits with the names they are limited to (empty: any name).
fn probe_named(
    rule: &Rule,
    verbs: &[&str],
    group: &str,
    resources: &[&str],
) -> Vec<(String, String, Vec<String>)> {
    let mut hits: Vec<(String, String, Vec<String>)> = probe(rule, verbs, group, resources)
        .into_iter()
        .map(|(v, r)| (v, r, Vec::new()))
        .collect();
    for r in resources {
        let (res, sub) = r.split_once('/').unwrap_or((r, ""));
        for v in verbs {
            if hits.iter().any(|(hv, hr, _)| hv == v && hr == r) {
                continue;
            }
            let names: Vec<String> = rule
                .resource_names
                .iter()
                .filter(|n| {
                    let mut req = Request::resource(v, group, res).named(n);
                    req.subresource = sub.to_string();
                    allows(rule, &req)
                })
                .cloned()
                .collect();
            if !names.is_empty() {
                hits.push(((*v).to_string(), (*r).to_string(), names));
            }
        }
    }
    hits
}

/// `bind, escalate on clusterroles named admin, edit`: [`hits_text`] of named hits.
fn named_hits_text(hits: &[(String, String, Vec<String>)]) -> String {
    let plain: Vec<(String, String)> = hits
        .iter()
        .map(|(v, r, _)| (v.clone(), r.clone()))
        .collect();
    let names: BTreeSet<&str> = hits
        .iter()
        .flat_map(|(_, _, n)| n.iter().map(String::as_str))
        .collect();
    let any_name = hits.iter().any(|(_, _, n)| n.is_empty());
    let mut text = hits_text(&plain);
    if !names.is_empty() && !any_name {
        text.push_str(" named ");
        text.push_str(&names.into_iter().collect::<Vec<_>>().join(", "));
    }
    text
}

/// `get, list on secrets`: the verbs and resources of probe hits.
fn hits_text(hits: &[(String, String)]) -> String {
    let verbs: BTreeSet<&str> = hits.iter().map(|(v, _)| v.as_str()).collect();
    let resources: BTreeSet<&str> = hits.iter().map(|(_, r)| r.as_str()).collect();
    format!(
        "{} on {}",
        verbs.into_iter().collect::<Vec<_>>().join(", "),
        resources.into_iter().collect::<Vec<_>>().join(", ")
    )
}

fn lower(sev: Severity, scope: &Scope) -> Severity {
    match (scope, sev) {
        (Scope::Cluster, s) => s,
        (Scope::Namespace(_), Error) => Warning,
        (Scope::Namespace(_), _) => Info,
    }
}

const WRITE: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];

/// The findings of one granted rule: (code, severity, what).
fn rule_findings(g: &Grant, cx: &Context) -> Vec<(&'static crate::diag::Code, Severity, String)> {
    let r = &g.rule;
    let mut out = Vec::new();
    let star = |v: &[String]| v.iter().any(|s| s == "*");
    let full = star(&r.verbs)
        && ((star(&r.api_groups) && star(&r.resources)) || star(&r.non_resource_urls));
    if full {
        out.push((
            &FULL_AUTHORITY,
            lower(Error, &g.scope),
            "every verb on everything".to_string(),
        ));
        return out;
    }
    let mut wild = Vec::new();
    for (field, v) in [
        ("verbs", &r.verbs),
        ("resources", &r.resources),
        ("apiGroups", &r.api_groups),
        ("nonResourceURLs", &r.non_resource_urls),
    ] {
        if v.iter().any(|s| s.contains('*')) {
            wild.push(field);
        }
    }
    if !wild.is_empty() {
        out.push((
            &WILDCARD,
            lower(Warning, &g.scope),
            format!("a wildcard in {}", wild.join(", ")),
        ));
    }
    // Limited by resourceNames, each is still an escalation: `bind` on the admin ClusterRole
    // grants all of admin.
    let mut escalation = probe_named(
        r,
        &["escalate", "bind"],
        "rbac.authorization.k8s.io",
        &["roles", "clusterroles"],
    );
    escalation.extend(probe_named(
        r,
        &["impersonate"],
        "",
        &["users", "groups", "serviceaccounts"],
    ));
    escalation.extend(probe_named(
        r,
        &["impersonate"],
        "authentication.k8s.io",
        &["userextras/scopes", "uids"],
    ));
    if !escalation.is_empty() {
        out.push((
            &ESCALATION_VERBS,
            lower(Error, &g.scope),
            named_hits_text(&escalation),
        ));
    }
    let secrets = probe(r, &["get", "list", "watch"], "", &["secrets"]);
    if !secrets.is_empty() {
        out.push((&SECRETS, lower(Warning, &g.scope), hits_text(&secrets)));
    }
    let rbac = probe(
        r,
        WRITE,
        "rbac.authorization.k8s.io",
        &[
            "roles",
            "clusterroles",
            "rolebindings",
            "clusterrolebindings",
        ],
    );
    if !rbac.is_empty() {
        out.push((&RBAC_WRITE, lower(Warning, &g.scope), hits_text(&rbac)));
    }
    // Cluster-scoped kinds: a RoleBinding cannot grant them.
    if g.scope == Scope::Cluster {
        let mut admission = probe(
            r,
            WRITE,
            "admissionregistration.k8s.io",
            &[
                "validatingwebhookconfigurations",
                "mutatingwebhookconfigurations",
                "validatingadmissionpolicies",
                "validatingadmissionpolicybindings",
                "mutatingadmissionpolicies",
                "mutatingadmissionpolicybindings",
            ],
        );
        admission.extend(probe(r, WRITE, "apiregistration.k8s.io", &["apiservices"]));
        if !admission.is_empty() {
            out.push((&ADMISSION_WRITE, Warning, hits_text(&admission)));
        }
        let crds = probe(
            r,
            WRITE,
            "apiextensions.k8s.io",
            &["customresourcedefinitions"],
        );
        let own_only = !r.resource_names.is_empty()
            && r.resource_names.iter().all(|n| cx.own_crds.contains(n));
        if !crds.is_empty() && !own_only {
            let names = if r.resource_names.is_empty() {
                "any CRD".to_string()
            } else {
                let other: Vec<&str> = r
                    .resource_names
                    .iter()
                    .filter(|n| !cx.own_crds.contains(n))
                    .map(String::as_str)
                    .collect();
                format!("CRDs {}", other.join(", "))
            };
            let verbs: BTreeSet<&str> = crds.iter().map(|(v, _)| v.as_str()).collect();
            let verbs: Vec<&str> = verbs.into_iter().collect();
            out.push((
                &CRD_WRITE,
                Warning,
                format!("{} on {names}", verbs.join(", ")),
            ));
        }
    }
    let mut sensitive = probe(
        r,
        &["create", "get"],
        "",
        &["pods/exec", "pods/attach", "pods/portforward"],
    );
    sensitive.extend(probe(r, &["create"], "", &["serviceaccounts/token"]));
    sensitive.extend(probe(r, &["get", "create"], "", &["nodes/proxy"]));
    sensitive.extend(probe(
        r,
        &["update", "patch"],
        "certificates.k8s.io",
        &["certificatesigningrequests/approval"],
    ));
    sensitive.extend(probe(r, &["approve"], "certificates.k8s.io", &["signers"]));
    if !sensitive.is_empty() {
        out.push((
            &SENSITIVE_SUBRESOURCE,
            lower(Warning, &g.scope),
            hits_text(&sensitive),
        ));
    }
    out
}

/// Reviews what `granted` gives: one finding per flagged rule and code, per binding of an
/// existing role, per foreign subject, per aggregated ClusterRole, and one per subject that
/// gets rights cluster-wide. `keep` selects the grants and `keep_external` the bindings of
/// existing roles to review (all, or those an upgrade adds).
pub fn review(
    granted: &Granted,
    cx: &Context,
    keep: &dyn Fn(&Grant) -> bool,
    keep_external: &dyn Fn(&External) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let finding = |code: &'static crate::diag::Code,
                   severity: Severity,
                   message: String,
                   origin: Option<&Origin>,
                   help: Option<&str>| {
        let (location, path) = location(origin);
        Finding {
            code: code.code,
            severity,
            message,
            location,
            subject: cx.subject.clone(),
            path,
            help: help.map(str::to_string),
            notes: Vec::new(),
        }
    };
    let mut foreign = BTreeSet::new();
    let mut cluster_wide = BTreeSet::new();
    for g in granted.grants.iter().filter(|g| keep(g)) {
        let who = g.subject.describe();
        for (code, sev, what) in rule_findings(g, cx) {
            out.push(finding(
                code,
                sev,
                format!(
                    "{who} {}: {what} ({})",
                    g.scope.describe(),
                    g.role.describe()
                ),
                g.origin.as_ref(),
                None,
            ));
        }
        if g.scope == Scope::Cluster && cluster_wide.insert(who.clone()) {
            out.push(finding(
                &CLUSTER_WIDE,
                Info,
                format!("{who} gets rights cluster-wide through {}", g.binding),
                g.origin.as_ref(),
                Some("under OLM v1 (and a v0 AllNamespaces OperatorGroup) the CSV's namespaced permissions become ClusterRoles"),
            ));
        }
        let ours = g.subject.kind == "ServiceAccount"
            && g.subject.namespace == cx.namespace
            && cx.service_accounts.contains(&g.subject.name);
        if !ours && foreign.insert((who.clone(), g.binding.clone())) {
            out.push(finding(
                &FOREIGN_SUBJECT,
                Warning,
                format!(
                    "{} grants rights to {who}, not to one of the bundle's ServiceAccounts",
                    g.binding
                ),
                g.origin.as_ref(),
                None,
            ));
        }
    }
    for e in granted.external.iter().filter(|e| keep_external(e)) {
        let who: Vec<String> = e.subjects.iter().map(|s| s.describe()).collect();
        let sev = if e.role.name == "cluster-admin" && e.scope == Scope::Cluster {
            Error
        } else {
            Warning
        };
        out.push(finding(
            &EXISTING_ROLE,
            sev,
            format!(
                "{} binds the existing {} (not in the bundle) to {} {}",
                e.binding,
                e.role.describe(),
                who.join(", "),
                e.scope.describe()
            ),
            e.origin.as_ref(),
            Some("read that role on the target cluster: its rules are not part of the bundle"),
        ));
    }
    for a in &granted.aggregated {
        out.push(finding(
            &AGGREGATED,
            Warning,
            format!(
                "ClusterRole {} is aggregated into other roles by {} ({} rules)",
                a.name,
                a.labels.join(", "),
                a.rules.len()
            ),
            a.origin.as_ref(),
            None,
        ));
    }
    out.sort_by(|a, b| {
        let loc = |f: &Finding| {
            f.location
                .as_ref()
                .map(|l| (l.file.to_path_buf(), l.line, l.column))
        };
        (loc(a), a.code, &a.message).cmp(&(loc(b), b.code, &b.message))
    });
    out.dedup_by(|a, b| a.code == b.code && a.message == b.message && a.location == b.location);
    out
}

impl Context {
    /// The context of `bundle` installed in `namespace`, from its manifests as JSON
    /// (`objects`, [`super::v0::bundle_objects`]): its CRDs, the ServiceAccounts of its CSV's
    /// permissions and deployments, and its package and CSV names as the subject.
    pub fn of_bundle(
        bundle: &crate::bundle::load::BundleDir,
        objects: &[serde_json::Value],
        namespace: &str,
    ) -> Context {
        let s = |v: &serde_json::Value, p: &str| {
            v.pointer(p)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let list = |v: Option<&serde_json::Value>, key: &str| {
            v.and_then(|v| v.get(key))
                .and_then(serde_json::Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let mut cx = Context {
            namespace: namespace.to_string(),
            ..Context::default()
        };
        for o in objects {
            match s(o, "/kind").as_str() {
                "CustomResourceDefinition" => cx.own_crds.push(s(o, "/metadata/name")),
                "ClusterServiceVersion" => {
                    cx.subject.bundle = Some(s(o, "/metadata/name"));
                    let spec = o.pointer("/spec/install/spec");
                    let sas = list(spec, "permissions")
                        .iter()
                        .chain(&list(spec, "clusterPermissions"))
                        .map(|p| s(p, "/serviceAccountName"))
                        .chain(
                            list(spec, "deployments")
                                .iter()
                                .map(|d| s(d, "/spec/template/spec/serviceAccountName")),
                        )
                        .map(|sa| {
                            if sa.is_empty() {
                                "default".to_string()
                            } else {
                                sa
                            }
                        })
                        .collect::<Vec<_>>();
                    cx.service_accounts.extend(sas);
                }
                _ => {}
            }
        }
        cx.subject.package = bundle
            .annotation(crate::bundle::load::keys::PACKAGE)
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        cx.own_crds.sort();
        cx.service_accounts.sort();
        cx.service_accounts.dedup();
        cx
    }
}
