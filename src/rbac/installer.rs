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

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::rule::{Request, Rule, allows, breakdown, guess_resource, rule_covers};

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
        /// The rules.
        rules: Vec<Rule>,
        /// The rules broken down (`BreakdownRule`), as the check compares them.
        atoms: Vec<Rule>,
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

/// A rendered object's kind as group and resource, namespace and name.
fn key(o: &Value) -> (String, String, String, String) {
    (
        group_of(str_at(o, "/apiVersion")).to_string(),
        guess_resource(str_at(o, "/kind")),
        str_at(o, "/metadata/namespace").to_string(),
        str_at(o, "/metadata/name").to_string(),
    )
}

/// Every need to install `objects` (and to delete the objects of `old` they do not have).
pub fn needs(objects: &[Value], old: &[Value], opts: &Options) -> Vec<Need> {
    let mut out = Vec::new();
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
    let rules_of = |kind: &str, ns: &str, name: &str| {
        objects
            .iter()
            .find(|o| {
                str_at(o, "/kind") == kind
                    && str_at(o, "/metadata/name") == name
                    && (kind == "ClusterRole" || str_at(o, "/metadata/namespace") == ns)
            })
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
                    atoms: rules.iter().flat_map(breakdown).collect(),
                    rules,
                    object: format!("{kind} {name}"),
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
                        atoms: rules.iter().flat_map(breakdown).collect(),
                        rules,
                        object: format!("{kind} {name}"),
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

/// The rules in force: cluster-wide ones, and each namespace's Role.
struct Held<'a> {
    cluster: Vec<&'a Rule>,
    namespaced: BTreeMap<&'a str, Vec<&'a Rule>>,
}

impl<'a> Held<'a> {
    fn of(rules: impl Iterator<Item = &'a (Slot, Rule)>) -> Held<'a> {
        let mut h = Held {
            cluster: Vec::new(),
            namespaced: BTreeMap::new(),
        };
        for (slot, r) in rules {
            match slot {
                Slot::Manage | Slot::Grant => h.cluster.push(r),
                Slot::Role(ns) => h.namespaced.entry(ns.as_str()).or_default().push(r),
            }
        }
        h
    }

    /// The rules that apply in `ns` (empty: cluster scope).
    fn in_scope(&self, ns: &str) -> impl Iterator<Item = &&'a Rule> {
        let local = if ns.is_empty() {
            None
        } else {
            self.namespaced.get(ns)
        };
        self.cluster.iter().chain(local.into_iter().flatten())
    }

    /// Whether these rules help with `need` at all (allow its request, or cover part of it).
    fn touches(&self, need: &Need) -> bool {
        match need {
            Need::Allow(req) => self.in_scope(&req.namespace).any(|r| allows(r, req)),
            Need::Hold {
                namespace,
                atoms,
                or,
                ..
            } => self
                .in_scope(namespace)
                .any(|r| allows(r, or) || atoms.iter().any(|a| rule_covers(r, a))),
        }
    }

    /// Whether these rules meet `need`: cluster rules count everywhere, a Role's in its
    /// namespace.
    fn meet(&self, need: &Need) -> bool {
        match need {
            Need::Allow(req) => self.in_scope(&req.namespace).any(|r| allows(r, req)),
            Need::Hold {
                namespace,
                atoms,
                or,
                ..
            } => {
                self.in_scope(namespace).any(|r| allows(r, or))
                    || atoms
                        .iter()
                        .all(|a| self.in_scope(namespace).any(|o| rule_covers(o, a)))
            }
        }
    }
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
            if !grant.iter().any(|(s, g)| *s == slot && g == r) {
                grant.push((slot.clone(), r.clone()));
            }
        }
    }
    // Management rules first: the bundle's own (often broader) rules are needed anyway.
    let count = manage.len();
    manage.extend(grant);
    (manage, count)
}

/// Drops each rule the others make unnecessary, management rules first, then the granted
/// rules from the last.
fn minimise(
    mut rules: Vec<(Slot, Rule)>,
    needs: &[Need],
    manage_count: usize,
) -> Vec<(Slot, Rule)> {
    let mut keep = vec![true; rules.len()];
    let order: Vec<usize> = (0..manage_count)
        .chain((manage_count..rules.len()).rev())
        .collect();
    for i in order {
        // Every need is met with the rules kept so far; without rule `i` only the needs it
        // helps with can fail.
        let one = Held::of(std::iter::once(&rules[i]));
        let touched: Vec<&Need> = needs.iter().filter(|n| one.touches(n)).collect();
        keep[i] = false;
        let held = Held::of(rules.iter().zip(&keep).filter(|(_, k)| **k).map(|(r, _)| r));
        if !touched.iter().all(|n| held.meet(n)) {
            keep[i] = true;
        }
    }
    let mut i = 0;
    rules.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    rules
}

/// Merges rules of one slot that differ only in their resources (no names).
fn merge(rules: Vec<Rule>) -> Vec<Rule> {
    let mut out: Vec<Rule> = Vec::new();
    for r in rules {
        if r.resource_names.is_empty()
            && r.non_resource_urls.is_empty()
            && let Some(m) = out.iter_mut().find(|m| {
                m.resource_names.is_empty()
                    && m.non_resource_urls.is_empty()
                    && m.api_groups == r.api_groups
                    && m.verbs == r.verbs
            })
        {
            for res in r.resources {
                if !m.resources.contains(&res) {
                    m.resources.push(res);
                }
            }
            continue;
        }
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
pub fn installer_rbac(objects: &[Value], old: &[Value], opts: &Options) -> Vec<Value> {
    let needs = needs(objects, old, opts);
    let (cands, manage_count) = candidates(&needs);
    let kept = minimise(cands, &needs, manage_count);
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
    out
}
