//! The installer ServiceAccount's RBAC for operator-controller up to v1.10, where
//! `spec.serviceAccount` is honoured and operator-controller installs, upgrades and deletes a
//! bundle's objects as that ServiceAccount.
//!
//! What it must be allowed is what v1.10's RBAC preflight asks of it
//! (`internal/operator-controller/authorization/rbac.go :: rbacPreAuthorizer.PreAuthorize,
//! asAuthorizationAttributesRecordsForUser, escalationChecker.checkEscalation`;
//! `applier/helm.go :: extManagementPerms`):
//!
//! - `get`, `patch`, `update`, `delete` on each object by name, in its namespace;
//! - `create` on each kind once per namespace it has objects in;
//! - `list` and `watch` on each kind cluster-wide (the Helm runtime's caches);
//! - `update` on `clusterextensions/finalizers` of the ClusterExtension;
//! - Kubernetes' escalation check on every Role, ClusterRole and binding it writes
//!   (`k8s.io/kubernetes/pkg/registry/rbac/escalation_check.go :: EscalationAllowed,
//!   RoleEscalationAuthorized, BindingAuthorized`; `pkg/registry/rbac/validation/rule.go ::
//!   ConfirmNoEscalation`): it must hold every rule of each role it creates, in the role's
//!   namespace (RoleEscalationAuthorized cannot help: a create request has no name, so an
//!   `escalate` limited by resourceNames never matches), and for a binding either hold the
//!   bound role's rules or have `bind` on that role by name (what it gets for roles the bundle
//!   does not ship, whose rules it cannot know).
//!
//! An upgrade also deletes the objects the old bundle had and the new one has not (Helm's
//! upgrade deletes what left the release), so with an old bundle those names get `delete`.
//!
//! The rules are derived, then every rule that the others make unnecessary is dropped (RBAC is
//! monotone, so what remains is minimal: dropping any one rule fails some request).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Value, json};

use super::rule::{Request, Rule, allows, allows_named, guess_resource};
use super::scope::Scopes;

/// Why the RBAC could not be derived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The rules an object grants overlap too much to compare: one comparison went past
    /// [`super::cover::MAX_STEPS`], or all of them past [`MAX_COVER_WORK`].
    TooComplex {
        /// The Role, ClusterRole or binding (`ClusterRole x`, `Role ns/x`).
        object: String,
        /// Where its rule with the longest lists was written, and that rule, once found
        /// ([`Error::locate`]).
        origin: Option<Box<(super::grants::Origin, Rule)>>,
    },
}

impl Error {
    /// The error, pointing at the rule with the longest lists among those `objects` grant
    /// through the object (`sources`: the bundle's, [`super::grants::sources`]), its file
    /// named relative to the bundle's directory `root` (which may be a pulled image's copy).
    pub fn locate(
        self,
        objects: &[Value],
        sources: &[super::grants::Source],
        root: &std::path::Path,
    ) -> Error {
        match self {
            Error::TooComplex { object, .. } => {
                let granted = super::grants::granted(objects, sources);
                let origin = super::grants::largest_rule(&granted, &object).and_then(|g| {
                    let mut o = g.origin.clone()?;
                    if let Ok(rel) = o.file.strip_prefix(root) {
                        o.file = rel.into();
                    }
                    Some(Box::new((o, g.rule.clone())))
                });
                Error::TooComplex { object, origin }
            }
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::TooComplex { object, origin } => {
                if let Some(b) = origin {
                    let (o, rule) = &**b;
                    let shown = rule.compact_cut(160);
                    write!(
                        f,
                        "{}:{}: {}: {} (its rule with the longest lists: {})",
                        crate::text::esc(&o.file.display().to_string()),
                        o.pos.line,
                        crate::text::esc(&o.path),
                        crate::text::esc(object),
                        crate::text::esc(&shown),
                    )?;
                } else {
                    write!(f, "{}", crate::text::esc(object))?;
                }
                write!(
                    f,
                    " has rules that overlap each other, or overlap the rules that would cover them, in too many ways to compare (olmctl compares at most {} combinations at once and {MAX_COVER_WORK} rules in all); merge the rules that overlap",
                    super::cover::MAX_STEPS
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// What to derive the RBAC for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The ClusterExtension's `spec.namespace` (where the ServiceAccount lives).
    pub namespace: String,
    /// The installer ServiceAccount's name.
    pub service_account: String,
    /// The ClusterExtension's name.
    pub extension: String,
}

impl Options {
    /// Checks the names as the API server checks them ([`crate::names`]), so that the objects
    /// hold exactly them: the namespace is a label, the ServiceAccount and the ClusterExtension
    /// subdomains, and the extension is also the value of the `olmctl.dev/installer-for` label.
    /// `what` says where each came from: the namespace, the ServiceAccount, the extension.
    pub fn check(&self, what: [&str; 3]) -> Result<(), crate::names::InvalidName> {
        use crate::names::{Rule, check};
        // The extension first: the ServiceAccount's name may be made from it.
        check(Rule::Label, what[0], &self.namespace)?;
        check(Rule::Subdomain, what[2], &self.extension)?;
        check(
            Rule::LabelValue,
            format!(
                "{} (the value of the label olmctl.dev/installer-for)",
                what[2]
            ),
            &self.extension,
        )?;
        check(Rule::Subdomain, what[1], &self.service_account)
    }
}

/// One thing the installer must be able to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// A request (its namespace empty for cluster scope).
    Allow(Request),
    /// Holding these rules in this namespace (empty: cluster-wide), to write a role or binding
    /// that grants them (`ConfirmNoEscalation`).
    Hold {
        /// The namespace.
        namespace: String,
        /// The rules (compared as the check compares their breakdown: [`super::cover`]).
        rules: Vec<Rule>,
        /// The object that grants them (`ClusterRole x`).
        object: String,
        /// The request that makes holding them unnecessary: `escalate` on the role (a create
        /// names none), or `bind` on the bound role by name.
        or: Request,
    },
}

/// Where a rule goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Slot {
    /// The ClusterRole managing the bundle's objects.
    Manage,
    /// The ClusterRole holding what the bundle grants cluster-wide.
    Grant,
    /// The Role in a namespace.
    Role(String),
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A rendered object's kind as group and resource, the namespace of a request about it (none
/// for a cluster-scoped kind, whatever its `metadata.namespace`) and its name.
fn key(o: &Value, scopes: &Scopes) -> (String, String, String, String) {
    (
        group_of(str_at(o, "/apiVersion")).to_string(),
        guess_resource(str_at(o, "/kind")),
        scopes.request_namespace(o).to_string(),
        str_at(o, "/metadata/name").to_string(),
    )
}

/// Every need to install `objects` (and to delete the objects of `old` they do not have).
/// A request's scope is its resource's ([`Scopes`]): a webhook configuration rendered with a
/// namespace is still created at cluster scope, so a Role cannot grant it.
pub fn needs(objects: &[Value], old: &[Value], opts: &Options) -> Vec<Need> {
    let mut out = Vec::new();
    let mut scopes = Scopes::of(old);
    scopes.extend(Scopes::of(objects));
    let key = |o: &Value| key(o, &scopes);
    let mut gvrs: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for o in objects {
        let (g, r, ns, name) = key(o);
        for v in ["get", "patch", "update", "delete"] {
            out.push(Need::Allow(
                Request::resource(v, &g, &r).named(&name).in_namespace(&ns),
            ));
        }
        gvrs.entry((g, r)).or_default().insert(ns);
    }
    let current: BTreeSet<_> = objects.iter().map(key).collect();
    for o in old {
        let k = key(o);
        if !current.contains(&k) {
            let (g, r, ns, name) = k;
            out.push(Need::Allow(
                Request::resource("delete", &g, &r)
                    .named(&name)
                    .in_namespace(&ns),
            ));
        }
    }
    for ((g, r), namespaces) in &gvrs {
        for ns in namespaces {
            out.push(Need::Allow(
                Request::resource("create", g, r).in_namespace(ns),
            ));
        }
        for v in ["list", "watch"] {
            out.push(Need::Allow(Request::resource(v, g, r)));
        }
    }
    out.push(Need::Allow(
        Request::resource(
            "update",
            "olm.operatorframework.io",
            "clusterextensions/finalizers",
        )
        .named(&opts.extension),
    ));
    // The escalation check (escalationChecker.checkEscalation).
    let mut roles: HashMap<(&str, &str, &str), &Value> = HashMap::new();
    for o in objects {
        let kind = str_at(o, "/kind");
        if kind == "Role" || kind == "ClusterRole" {
            let ns = if kind == "Role" {
                str_at(o, "/metadata/namespace")
            } else {
                ""
            };
            // The first of a name, as a search in order finds it.
            roles
                .entry((kind, ns, str_at(o, "/metadata/name")))
                .or_insert(o);
        }
    }
    let rules_of = |kind: &str, ns: &str, name: &str| {
        let ns = if kind == "ClusterRole" { "" } else { ns };
        roles
            .get(&(kind, ns, name))
            .map(|o| super::aggregate::rules(o, objects))
    };
    for o in objects {
        let kind = str_at(o, "/kind");
        let ns = if kind.starts_with("Cluster") {
            ""
        } else {
            str_at(o, "/metadata/namespace")
        };
        let name = str_at(o, "/metadata/name");
        match kind {
            "Role" | "ClusterRole" => {
                if kind == "ClusterRole" && o.get("aggregationRule").is_some_and(Value::is_object) {
                    // An aggregationRule needs full authority unless the role may be escalated
                    // (checkClusterRoleEscalation); escalate is the smaller grant.
                    out.push(Need::Allow(Request::resource(
                        "escalate",
                        "rbac.authorization.k8s.io",
                        "clusterroles",
                    )));
                    continue;
                }
                let rules = Rule::of_role(o);
                out.push(Need::Hold {
                    namespace: ns.to_string(),
                    rules,
                    object: super::grants::described(kind, ns, name),
                    or: Request::resource(
                        "escalate",
                        "rbac.authorization.k8s.io",
                        if kind == "Role" {
                            "roles"
                        } else {
                            "clusterroles"
                        },
                    )
                    .in_namespace(ns),
                });
            }
            "RoleBinding" | "ClusterRoleBinding" => {
                let ref_kind = str_at(o, "/roleRef/kind");
                let ref_name = str_at(o, "/roleRef/name");
                let bind = Request::resource(
                    "bind",
                    "rbac.authorization.k8s.io",
                    if ref_kind == "Role" {
                        "roles"
                    } else {
                        "clusterroles"
                    },
                )
                .named(ref_name)
                .in_namespace(ns);
                match rules_of(ref_kind, ns, ref_name) {
                    Some(rules) => out.push(Need::Hold {
                        namespace: ns.to_string(),
                        rules,
                        object: super::grants::described(kind, ns, name),
                        or: bind,
                    }),
                    None => out.push(Need::Allow(bind)),
                }
            }
            _ => {}
        }
    }
    out
}

/// The candidate rules: what each need asks, in its slot; the management rules first, and how
/// many they are.
fn candidates(needs: &[Need]) -> (Vec<(Slot, Rule)>, usize) {
    let mut manage: Vec<(Slot, Rule)> = Vec::new();
    let order = |v: &BTreeSet<String>| {
        let rank = |s: &str| {
            [
                "create", "get", "list", "watch", "update", "patch", "delete", "bind", "escalate",
            ]
            .iter()
            .position(|x| *x == s)
            .unwrap_or(99)
        };
        let mut v: Vec<&str> = v.iter().map(String::as_str).collect();
        v.sort_by_key(|s| (rank(s), *s));
        v.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    // The verbs each name needs, then names grouped by the verbs they need.
    let mut per_name: BTreeMap<(Slot, String, String, String), BTreeSet<String>> = BTreeMap::new();
    let mut plain: BTreeMap<(Slot, String, String), BTreeSet<String>> = BTreeMap::new();
    for n in needs {
        let Need::Allow(req) = n else { continue };
        let slot = if req.namespace.is_empty() {
            Slot::Manage
        } else {
            Slot::Role(req.namespace.clone())
        };
        if req.name.is_empty() {
            plain
                .entry((slot, req.api_group.clone(), req.resource.clone()))
                .or_default()
                .insert(req.verb.clone());
        } else {
            per_name
                .entry((
                    slot,
                    req.api_group.clone(),
                    req.resource.clone(),
                    req.name.clone(),
                ))
                .or_default()
                .insert(req.verb.clone());
        }
    }
    let mut named: BTreeMap<(Slot, String, String, Vec<String>), BTreeSet<String>> =
        BTreeMap::new();
    for ((slot, g, r, name), verbs) in per_name {
        named
            .entry((slot, g, r, order(&verbs)))
            .or_default()
            .insert(name);
    }
    for ((slot, g, r), verbs) in &plain {
        manage.push((
            slot.clone(),
            Rule {
                api_groups: vec![g.clone()],
                resources: vec![r.clone()],
                verbs: order(verbs),
                ..Rule::default()
            },
        ));
    }
    for ((slot, g, r, verbs), names) in &named {
        manage.push((
            slot.clone(),
            Rule {
                api_groups: vec![g.clone()],
                resources: vec![r.clone()],
                resource_names: names.iter().cloned().collect(),
                verbs: verbs.clone(),
                ..Rule::default()
            },
        ));
    }
    let mut grant: Vec<(Slot, Rule)> = Vec::new();
    let mut granted: HashSet<(Slot, Rule)> = HashSet::new();
    for n in needs {
        let Need::Hold {
            namespace, rules, ..
        } = n
        else {
            continue;
        };
        let slot = if namespace.is_empty() {
            Slot::Grant
        } else {
            Slot::Role(namespace.clone())
        };
        for r in rules {
            if granted.insert((slot.clone(), r.clone())) {
                grant.push((slot.clone(), r.clone()));
            }
        }
    }
    // Management rules first: the bundle's own (often broader) rules are needed anyway.
    let count = manage.len();
    manage.extend(grant);
    (manage, count)
}

/// Where a rule of `slot` applies: cluster-wide rules in every namespace, a Role in its own.
fn applies(slot: &Slot, namespace: &str) -> bool {
    match slot {
        Slot::Manage | Slot::Grant => true,
        Slot::Role(ns) => !namespace.is_empty() && ns == namespace,
    }
}

/// (group, resource) pairs a rule is looked up by at most; a rule with more (or a wildcard
/// group or resource, or URLs) is looked at for every need.
const MAX_PAIRS: usize = 4096;

/// The candidates by the (group, resource) pairs they name, and by the names of those that
/// are limited to names, so that a need is compared with the few rules that can touch it, not
/// with all of them (a bundle of 2,000 objects of one kind has 2,000 named needs).
struct Index<'a> {
    /// Rules without names, by (group, resource).
    exact: HashMap<(&'a str, &'a str), Vec<usize>>,
    /// Rules limited to names, by (group, resource, name).
    named: HashMap<(&'a str, &'a str, &'a str), Vec<usize>>,
    /// Rules with a wildcard group or resource, URLs, or more than [`MAX_PAIRS`] keys.
    wide: Vec<usize>,
}

/// The keys a rule of these lists is looked up by: (group, resource) pairs, times its names.
fn keys(r: &Rule) -> usize {
    r.api_groups
        .len()
        .saturating_mul(r.resources.len())
        .saturating_mul(r.resource_names.len().max(1))
}

impl<'a> Index<'a> {
    fn of(rules: &'a [(Slot, Rule)]) -> Index<'a> {
        let mut ix = Index {
            exact: HashMap::new(),
            named: HashMap::new(),
            wide: Vec::new(),
        };
        for (i, (_, r)) in rules.iter().enumerate() {
            let wide = !r.non_resource_urls.is_empty()
                || r.api_groups.iter().any(|g| g == "*")
                || r.resources.iter().any(|x| x.starts_with('*'))
                || keys(r) > MAX_PAIRS;
            if wide {
                ix.wide.push(i);
                continue;
            }
            for g in &r.api_groups {
                for res in &r.resources {
                    if r.resource_names.is_empty() {
                        ix.exact.entry((g, res)).or_default().push(i);
                    }
                    for n in &r.resource_names {
                        ix.named.entry((g, res, n)).or_default().push(i);
                    }
                }
            }
        }
        ix
    }

    /// The candidates that may touch `need` (a superset; sorted, without repeats): those
    /// without names on its group and resource, those limited to one of its names (a request
    /// without a name, and a rule without names, only the former).
    fn near<'n>(&self, need: &'n Need, all: usize) -> Vec<usize> {
        let mut wanted: Vec<(&'n str, String, &'n str)> = Vec::new();
        let mut request = |r: &'n Request| {
            let combined = if r.subresource.is_empty() {
                r.resource.clone()
            } else {
                format!("{}/{}", r.resource, r.subresource)
            };
            wanted.push((r.api_group.as_str(), combined, r.name.as_str()));
        };
        match need {
            Need::Allow(req) => request(req),
            Need::Hold { rules, or, .. } => {
                request(or);
                let many = rules.iter().map(keys).fold(0usize, usize::saturating_add);
                if many > MAX_PAIRS {
                    return (0..all).collect();
                }
                for r in rules {
                    for g in &r.api_groups {
                        for res in &r.resources {
                            if r.resource_names.is_empty() {
                                wanted.push((g.as_str(), res.clone(), ""));
                            }
                            for n in &r.resource_names {
                                wanted.push((g.as_str(), res.clone(), n.as_str()));
                            }
                        }
                    }
                }
            }
        }
        let mut out: Vec<usize> = self.wide.clone();
        for (g, r, n) in &wanted {
            if let Some(ids) = self.exact.get(&(*g, r.as_str())) {
                out.extend(ids);
            }
            if !n.is_empty()
                && let Some(ids) = self.named.get(&(*g, r.as_str(), *n))
            {
                out.extend(ids);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The namespace a need is about (empty: cluster scope).
fn need_namespace(need: &Need) -> &str {
    match need {
        Need::Allow(req) => &req.namespace,
        Need::Hold { namespace, .. } => namespace,
    }
}

/// The candidates, with their long `resourceNames` lists in sets (a management rule may name
/// every object of a kind: thousands).
struct Rules<'a> {
    rules: &'a [(Slot, Rule)],
    names: Vec<Option<HashSet<&'a str>>>,
}

impl<'a> Rules<'a> {
    fn of(rules: &'a [(Slot, Rule)]) -> Rules<'a> {
        let names = rules
            .iter()
            .map(|(_, r)| {
                (r.resource_names.len() > 16)
                    .then(|| r.resource_names.iter().map(String::as_str).collect())
            })
            .collect();
        Rules { rules, names }
    }

    /// `allows` of rule `i`.
    fn allows(&self, i: usize, req: &Request) -> bool {
        let rule = &self.rules[i].1;
        match &self.names[i] {
            Some(set) => allows_named(rule, req, &|n| set.contains(n)),
            None => allows(rule, req),
        }
    }
}

/// Cover work (candidates compared with a rule, times the lists of the rule) one minimisation
/// may do, and so the candidates it lists for the rules: about 13 times what the most
/// demanding of the 340 fixture bundles needs (opendatahub-operator 3.5.0: between 50,000 and
/// 75,000), and a bound in time and memory on roles of thousands of rules that all overlap
/// each other, where each rule meets every other (work that grows as the square of the
/// rules: 2,000 such rules need more than this).
pub const MAX_COVER_WORK: u64 = 1_000_000;

/// What holding one role's or binding's rules needs, rule by rule: the candidates that allow
/// the request that makes holding unnecessary (`or`), the candidates that touch each rule, and
/// whether the kept ones cover it (known once asked; dropping a rule can only uncover the
/// rules it touches, so only those are asked again).
struct Holding {
    or_by: Vec<usize>,
    owners: Vec<Vec<usize>>,
    /// The rules each candidate touches (the inverse of `owners`), the rules it is a copy of
    /// first.
    touching: HashMap<usize, Vec<usize>>,
    covered: Vec<Option<bool>>,
    /// The rules not known to be covered.
    pending: BTreeSet<usize>,
}

/// Candidates by the values of one of their lists: those that name a value, and those that
/// match every value (a wildcard; for names, a rule without names).
#[derive(Default)]
struct Lookup<'a> {
    any: Vec<usize>,
    by: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Lookup<'a> {
    /// Files candidate `j` under its `values` that some rule asks for, or as matching any.
    fn add(
        &mut self,
        j: usize,
        values: &'a [String],
        wildcard: impl Fn(&str) -> bool,
        wanted: &HashSet<&str>,
    ) {
        if values.iter().any(|v| wildcard(v)) {
            self.any.push(j);
            return;
        }
        let mut mine: Vec<&str> = values
            .iter()
            .map(String::as_str)
            .filter(|v| wanted.contains(v))
            .collect();
        mine.sort_unstable();
        mine.dedup();
        for v in mine {
            self.by.entry(v).or_default().push(j);
        }
    }

    /// How many candidates [`Lookup::list`] would go through for `values`.
    fn cost(&self, values: &[String]) -> usize {
        values
            .iter()
            .map(|v| self.by.get(v.as_str()).map_or(0, Vec::len))
            .fold(self.any.len(), usize::saturating_add)
    }

    /// The candidates for `values`, sorted, without repeats.
    fn list(&self, values: &[String]) -> Vec<usize> {
        let mut out = self.any.clone();
        for v in values {
            out.extend(self.by.get(v.as_str()).into_iter().flatten());
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A rule's groups (0), resources (1) or names (2).
fn list_of(x: &Rule, k: usize) -> &[String] {
    match k {
        0 => &x.api_groups,
        1 => &x.resources,
        _ => &x.resource_names,
    }
}

/// The cheapest of `lookups` (by group, resource, name) for rule `x`: which, and its cost; none
/// for a URL rule (any candidate may touch its resource part, only nameless ones its URLs).
fn pick<'l>(lookups: [&'l Lookup<'l>; 3], x: &Rule) -> Option<(&'l Lookup<'l>, usize, usize)> {
    if !x.non_resource_urls.is_empty() {
        return None;
    }
    lookups
        .into_iter()
        .enumerate()
        .map(|(k, l)| (l, k, l.cost(list_of(x, k))))
        .min_by_key(|(_, _, c)| *c)
}

/// Charges `units` of work; past [`MAX_COVER_WORK`] the minimisation gives up.
fn charge(work: &mut u64, units: usize) -> Result<(), super::cover::TooManySteps> {
    *work = work.saturating_add(units as u64);
    if *work > MAX_COVER_WORK {
        return Err(super::cover::TooManySteps);
    }
    Ok(())
}

impl Holding {
    fn of(
        view: &Rules<'_>,
        need: &Need,
        near: &[usize],
        work: &mut u64,
    ) -> Result<Option<Holding>, super::cover::TooManySteps> {
        let Need::Hold { rules, or, .. } = need else {
            return Ok(None);
        };
        // A rule is touched only by candidates on one of its groups, one of its resources and
        // (limited to names) one of its names, or on every one (a wildcard, no names): the
        // candidates are looked up by whichever of the three lists fewest for that rule, not
        // each compared with each rule.
        let mut by_group = Lookup::default();
        let mut by_resource = Lookup::default();
        let mut by_name = Lookup::default();
        let wanted = |f: fn(&Rule) -> &Vec<String>| -> HashSet<&str> {
            rules
                .iter()
                .flat_map(|x| f(x).iter().map(String::as_str))
                .collect()
        };
        let (groups, resources, names) = (
            wanted(|x| &x.api_groups),
            wanted(|x| &x.resources),
            wanted(|x| &x.resource_names),
        );
        for &j in near {
            let r = &view.rules[j].1;
            by_group.add(j, &r.api_groups, |g| g == "*", &groups);
            by_resource.add(j, &r.resources, |x| x.starts_with('*'), &resources);
            match &view.names[j] {
                _ if r.resource_names.is_empty() => by_name.any.push(j),
                // A long list (a management rule naming every object of a kind): only the
                // names these rules have are looked up in it.
                Some(set) => {
                    for n in names.iter().filter(|n| set.contains(*n)) {
                        by_name.by.entry(n).or_default().push(j);
                    }
                }
                None => by_name.add(j, &r.resource_names, |_| false, &names),
            }
        }
        let lookups = [&by_group, &by_resource, &by_name];
        let picks: Vec<_> = rules.iter().map(|x| pick(lookups, x)).collect();
        // What listing the candidates of every rule costs, charged before anything is listed.
        let listed = picks
            .iter()
            .map(|p| p.map_or(near.len(), |(_, _, c)| c))
            .fold(0usize, usize::saturating_add);
        charge(work, listed)?;
        let mut owners: Vec<Vec<usize>> = Vec::with_capacity(rules.len());
        for (x, p) in rules.iter().zip(picks) {
            let mut maybe = match p {
                Some((l, k, _)) => l.list(list_of(x, k)),
                None => near.to_vec(),
            };
            maybe.retain(|&j| super::cover::touches(&view.rules[j].1, x));
            owners.push(maybe);
        }
        let mut touching: HashMap<usize, Vec<usize>> = HashMap::new();
        for (k, o) in owners.iter().enumerate() {
            for &j in o {
                touching.entry(j).or_default().push(k);
            }
        }
        // The rules a candidate is a copy of go first in its list.
        let mut same: HashMap<&Rule, Vec<usize>> = HashMap::new();
        for (k, x) in rules.iter().enumerate() {
            same.entry(x).or_default().push(k);
        }
        for (&j, ks) in touching.iter_mut() {
            if let Some(copies) = same.get(&view.rules[j].1) {
                let rest: Vec<usize> = ks.iter().copied().filter(|k| !copies.contains(k)).collect();
                *ks = copies
                    .iter()
                    .copied()
                    .filter(|k| ks.contains(k))
                    .chain(rest)
                    .collect();
            }
        }
        Ok(Some(Holding {
            or_by: near
                .iter()
                .copied()
                .filter(|&j| view.allows(j, or))
                .collect(),
            owners,
            touching,
            covered: vec![None; rules.len()],
            pending: (0..rules.len()).collect(),
        }))
    }

    /// Whether the kept owners cover rule `k`.
    fn cover(
        &self,
        k: usize,
        x: &Rule,
        all: &[(Slot, Rule)],
        keep: &[bool],
        work: &mut u64,
    ) -> Result<bool, super::cover::TooManySteps> {
        let owners: Vec<&Rule> = self.owners[k]
            .iter()
            .filter(|&&j| keep[j])
            .map(|&j| &all[j].1)
            .collect();
        let lists = x.lists_len();
        // One kept owner that covers the whole rule (most often its copy, which goes first)
        // answers it, for the work of comparing their lists.
        let copies = owners.iter().filter(|o| **o == x);
        for o in copies.chain(owners.iter().filter(|o| **o != x)) {
            charge(work, lists.saturating_add(o.lists_len()))?;
            if super::cover::covers_whole(o, x) {
                return Ok(true);
            }
        }
        charge(work, owners.len().max(1).saturating_mul(lists.max(1)))?;
        super::cover::covered(&owners, x)
    }

    /// Whether the need is met once rule `i` is dropped (`keep[i]` already false): the
    /// coverage of the rules `i` touches is worked out again into `fresh` (the rule it copies
    /// first: the one most likely uncovered), the rules not known to be covered are asked.
    fn met_without(
        &mut self,
        i: usize,
        rules: &[Rule],
        all: &[(Slot, Rule)],
        keep: &[bool],
        fresh: &mut Vec<(usize, bool)>,
        work: &mut u64,
    ) -> Result<bool, super::cover::TooManySteps> {
        if self.or_by.iter().any(|&j| keep[j]) {
            return Ok(true);
        }
        let mine: Vec<usize> = self.touching.get(&i).cloned().unwrap_or_default();
        charge(work, mine.len())?;
        for &k in &mine {
            let v = self.cover(k, &rules[k], all, keep, work)?;
            fresh.push((k, v));
            if !v {
                return Ok(false);
            }
        }
        // The others are as they were: known, or asked now once (rule `i` does not touch them).
        let unknown: Vec<usize> = self
            .pending
            .iter()
            .copied()
            .filter(|k| !mine.contains(k))
            .collect();
        for k in unknown {
            if self.covered[k] == Some(false) {
                return Ok(false);
            }
            let v = self.cover(k, &rules[k], all, keep, work)?;
            self.covered[k] = Some(v);
            if v {
                self.pending.remove(&k);
            } else {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Rule `i` is dropped: what was found without it holds, and what was known of the other
    /// rules it touched no longer does.
    fn dropped(&mut self, i: usize, fresh: &[(usize, bool)]) {
        for &k in self.touching.get(&i).into_iter().flatten() {
            self.covered[k] = None;
            self.pending.insert(k);
        }
        for &(k, v) in fresh {
            self.covered[k] = Some(v);
            if v {
                self.pending.remove(&k);
            }
        }
    }
}

fn too_complex(need: &Need) -> Error {
    Error::TooComplex {
        origin: None,
        object: match need {
            Need::Hold { object, .. } => object.clone(),
            Need::Allow(_) => String::new(),
        },
    }
}

/// Drops each rule the others make unnecessary, management rules first, then the granted
/// rules from the last. Every need is met with the rules kept so far, so without rule `i`
/// only the needs it touches can fail, and only the rules that touch a need can meet it: each
/// need is compared with the rules near it ([`Index`]), never with all of them.
fn minimise(
    rules: Vec<(Slot, Rule)>,
    needs: &[Need],
    manage_count: usize,
) -> Result<Vec<(Slot, Rule)>, Error> {
    let view = Rules::of(&rules);
    let index = Index::of(&rules);
    let mut work: u64 = 0;
    let mut near: Vec<Vec<usize>> = Vec::with_capacity(needs.len());
    let mut holds: Vec<Option<Holding>> = Vec::with_capacity(needs.len());
    for n in needs {
        let ns = need_namespace(n);
        let maybe: Vec<usize> = index
            .near(n, rules.len())
            .into_iter()
            .filter(|&i| applies(&rules[i].0, ns))
            .collect();
        match n {
            Need::Allow(req) => {
                near.push(maybe.into_iter().filter(|&i| view.allows(i, req)).collect());
                holds.push(None);
            }
            Need::Hold { .. } => {
                // The rules that touch it are those that allow its request or touch one of
                // its rules: Holding finds them rule by rule.
                let h = Holding::of(&view, n, &maybe, &mut work)
                    .map_err(|_| too_complex(n))?
                    .expect("a Hold need");
                let mut ids: Vec<usize> = h.or_by.clone();
                ids.extend(h.touching.keys());
                ids.sort_unstable();
                ids.dedup();
                near.push(ids);
                holds.push(Some(h));
            }
        }
    }
    let mut touched: Vec<Vec<usize>> = vec![Vec::new(); rules.len()];
    for (n, ids) in near.iter().enumerate() {
        for &i in ids {
            touched[i].push(n);
        }
    }
    let mut keep = vec![true; rules.len()];
    // How many kept rules touch each need: a request stays allowed while one is left.
    let mut left: Vec<usize> = near.iter().map(Vec::len).collect();
    let order: Vec<usize> = (0..manage_count)
        .chain((manage_count..rules.len()).rev())
        .collect();
    for i in order {
        keep[i] = false;
        let mut needed = false;
        // What the needs would know of their rules without rule `i`.
        let mut known: HashMap<usize, Vec<(usize, bool)>> = HashMap::new();
        for &n in &touched[i] {
            let met = match (&needs[n], holds[n].as_mut()) {
                (
                    Need::Hold {
                        rules: held,
                        object,
                        ..
                    },
                    Some(h),
                ) => {
                    let mut fresh = Vec::new();
                    let met = h
                        .met_without(i, held, view.rules, &keep, &mut fresh, &mut work)
                        .map_err(|_| Error::TooComplex {
                            origin: None,
                            object: object.clone(),
                        })?;
                    known.insert(n, fresh);
                    met
                }
                _ => left[n] > 1,
            };
            if !met {
                needed = true;
                break;
            }
        }
        if needed {
            keep[i] = true;
            continue;
        }
        for &n in &touched[i] {
            left[n] -= 1;
        }
        for &n in &touched[i] {
            let fresh = known.get(&n).map(Vec::as_slice).unwrap_or_default();
            if let Some(h) = holds[n].as_mut() {
                h.dropped(i, fresh);
            }
        }
    }
    drop(view);
    Ok(rules
        .into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect())
}

/// Merges rules of one slot that differ only in their resources (no names), into the first of
/// them.
fn merge(rules: Vec<Rule>) -> Vec<Rule> {
    let mut out: Vec<Rule> = Vec::new();
    let mut at: HashMap<(Vec<String>, Vec<String>), usize> = HashMap::new();
    let mut has: Vec<HashSet<String>> = Vec::new();
    for r in rules {
        if r.resource_names.is_empty() && r.non_resource_urls.is_empty() {
            let key = (r.api_groups.clone(), r.verbs.clone());
            if let Some(&m) = at.get(&key) {
                for res in r.resources {
                    if has[m].insert(res.clone()) {
                        out[m].resources.push(res);
                    }
                }
                continue;
            }
            at.insert(key, out.len());
        }
        has.push(r.resources.iter().cloned().collect());
        out.push(r);
    }
    out
}

fn labels(opts: &Options) -> Value {
    json!({
        "app.kubernetes.io/managed-by": "olmctl",
        "olmctl.dev/installer-for": opts.extension,
    })
}

fn role(kind: &str, name: &str, ns: &str, rules: &[Rule], opts: &Options) -> Value {
    let rules = Value::Array(rules.iter().map(Rule::to_json).collect());
    super::make::role(kind, name, ns, rules, Some(&labels(opts)))
}

fn binding(kind: &str, name: &str, ns: &str, role: (&str, &str), opts: &Options) -> Value {
    let sa = (opts.service_account.as_str(), opts.namespace.as_str());
    super::make::binding(kind, name, ns, role, sa, Some(&labels(opts)))
}

/// The installer's RBAC for `objects` (operator-controller's rendering of the bundle; `old`:
/// the installed bundle's, for an upgrade): its ServiceAccount, then the ClusterRole
/// `<sa>-clusterrole` managing cluster-wide (bound by `<sa>-binding`), the ClusterRole
/// `<sa>-rbac-clusterrole` holding what the bundle grants cluster-wide (`<sa>-rbac-binding`),
/// and a Role `<sa>-role` with its RoleBinding `<sa>-binding` in each namespace that needs one.
/// Roles left without rules are not written. Names follow operator-controller's v1.10 sample
/// (`config/samples/olm_v1_clusterextension.yaml`).
pub fn installer_rbac(
    objects: &[Value],
    old: &[Value],
    opts: &Options,
) -> Result<Vec<Value>, Error> {
    let needs = needs(objects, old, opts);
    let (cands, manage_count) = candidates(&needs);
    let kept = minimise(cands, &needs, manage_count)?;
    let sa = &opts.service_account;
    let mut by_slot: BTreeMap<Slot, Vec<Rule>> = BTreeMap::new();
    for (s, r) in kept {
        by_slot.entry(s).or_default().push(r);
    }
    let mut out = vec![json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": sa, "namespace": opts.namespace, "labels": labels(opts)},
    })];
    for (slot, rules) in by_slot {
        let rules = merge(rules);
        let (kind, role_name, binding_name, ns) = match &slot {
            Slot::Manage => ("ClusterRole", "clusterrole", "binding", ""),
            Slot::Grant => ("ClusterRole", "rbac-clusterrole", "rbac-binding", ""),
            Slot::Role(ns) => ("Role", "role", "binding", ns.as_str()),
        };
        let name = format!("{sa}-{role_name}");
        out.push(role(kind, &name, ns, &rules, opts));
        out.push(binding(
            &format!("{kind}Binding"),
            &format!("{sa}-{binding_name}"),
            ns,
            (kind, &name),
            opts,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::rule::{breakdown, rule_covers};
    use proptest::prelude::*;

    /// The minimisation as it was first written, kept as the reference: every rule dropped in
    /// turn, every need checked against every kept rule, holding compared on the breakdown.
    fn reference(rules: &[(Slot, Rule)], needs: &[Need], manage_count: usize) -> Vec<(Slot, Rule)> {
        let in_scope = |kept: &[&(Slot, Rule)], ns: &str| -> Vec<Rule> {
            kept.iter()
                .filter(|(s, _)| applies(s, ns))
                .map(|(_, r)| r.clone())
                .collect()
        };
        let meet = |kept: &[&(Slot, Rule)], n: &Need| match n {
            Need::Allow(req) => in_scope(kept, &req.namespace)
                .iter()
                .any(|r| allows(r, req)),
            Need::Hold {
                namespace,
                rules,
                or,
                ..
            } => {
                let held = in_scope(kept, namespace);
                held.iter().any(|r| allows(r, or))
                    || rules
                        .iter()
                        .flat_map(breakdown)
                        .all(|a| held.iter().any(|o| rule_covers(o, &a)))
            }
        };
        let mut keep = vec![true; rules.len()];
        let order: Vec<usize> = (0..manage_count)
            .chain((manage_count..rules.len()).rev())
            .collect();
        for i in order {
            let one = [&rules[i]];
            let touched: Vec<&Need> = needs
                .iter()
                .filter(|n| {
                    let ns = need_namespace(n);
                    in_scope(&one, ns).iter().any(|r| match n {
                        Need::Allow(req) => allows(r, req),
                        Need::Hold { rules, or, .. } => {
                            allows(r, or)
                                || rules.iter().flat_map(breakdown).any(|a| rule_covers(r, &a))
                        }
                    })
                })
                .collect();
            keep[i] = false;
            let kept: Vec<&(Slot, Rule)> = rules
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(r, _)| r)
                .collect();
            if !touched.iter().all(|n| meet(&kept, n)) {
                keep[i] = true;
            }
        }
        rules
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(r, _)| r.clone())
            .collect()
    }

    fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(prop::sample::select(pool), 1..3)
            .prop_map(|v| v.into_iter().map(str::to_string).collect())
    }

    fn rule() -> impl Strategy<Value = Value> {
        (
            pick(&["", "apps", "*"]),
            pick(&[
                "configmaps",
                "deployments",
                "*",
                "roles",
                "deployments/status",
                "*/status",
            ]),
            prop_oneof![2 => Just(Vec::new()), 1 => pick(&["a", "b"])],
            pick(&["get", "list", "create", "*", "delete"]),
        )
            .prop_map(|(g, r, n, v)| {
                let mut o = json!({"apiGroups": g, "resources": r, "verbs": v});
                if !n.is_empty() {
                    o["resourceNames"] = json!(n);
                }
                o
            })
    }

    /// Rendered objects: roles, bindings (to them, or to roles the objects do not hold) and
    /// plain objects, in two namespaces and cluster-wide.
    fn object() -> impl Strategy<Value = Value> {
        let ns = prop::sample::select(&["", "ops", "apps"][..]);
        let name = prop::sample::select(&["a", "b", "c"][..]);
        (0..5u8, ns, name, prop::collection::vec(rule(), 1..3)).prop_map(|(k, ns, name, rules)| {
            match k {
                0 => json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": name}, "rules": rules}),
                1 => json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                    "metadata": {"name": name, "namespace": if ns.is_empty() { "ops" } else { ns }}, "rules": rules}),
                2 => json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": name}, "roleRef": {"kind": "ClusterRole", "name": name}}),
                3 => json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": name, "namespace": if ns.is_empty() { "apps" } else { ns }},
                    "roleRef": {"kind": if ns == "apps" { "ClusterRole" } else { "Role" }, "name": name}}),
                _ => json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": if ns.is_empty() { "ops" } else { ns }}}),
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

        /// The indexed minimisation keeps exactly the rules the reference keeps.
        #[test]
        fn minimise_keeps_what_the_reference_keeps(objects in prop::collection::vec(object(), 1..8)) {
            let opts = Options { namespace: "ops".into(), service_account: "sa".into(), extension: "ext".into() };
            let needs = needs(&objects, &[], &opts);
            let (cands, manage_count) = candidates(&needs);
            let want = reference(&cands, &needs, manage_count);
            prop_assert_eq!(minimise(cands, &needs, manage_count).unwrap(), want);
        }
    }

    #[test]
    fn names_are_checked_as_the_api_server_checks_them() {
        let ok = Options {
            namespace: "ops".into(),
            service_account: "ext-installer".into(),
            extension: "ext".into(),
        };
        let what = [
            "--install-namespace",
            "--service-account",
            "--cluster-extension",
        ];
        assert!(ok.check(what).is_ok());
        let mut bad = ok.clone();
        bad.extension = "ext\n---\nkind: ClusterRoleBinding".into();
        assert!(
            bad.check(what)
                .unwrap_err()
                .to_string()
                .starts_with("--cluster-extension \"ext\\n---")
        );
        let mut long = ok.clone();
        long.extension = "e".repeat(64);
        let e = long.check(what).unwrap_err().to_string();
        assert!(
            e.contains("olmctl.dev/installer-for")
                && e.contains("must be no more than 63 characters"),
            "{e}"
        );
        let mut ns = ok;
        ns.namespace = "a.b".into();
        assert_eq!(
            ns.check(what).unwrap_err().to_string(),
            "--install-namespace \"a.b\": must not contain dots"
        );
    }
}
