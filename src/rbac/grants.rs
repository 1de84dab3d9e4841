//! Who gets which rights from a set of objects: every binding resolved to its role's rules and
//! its subjects, as the RBAC authorizer resolves them (`pkg/registry/rbac/validation/rule.go ::
//! DefaultRuleResolver.VisitRulesFor, GetRoleReferenceRules`): a ClusterRoleBinding grants
//! everywhere, a RoleBinding in its namespace (to a Role of that namespace or a ClusterRole).
//! A binding to a role the objects do not hold binds an existing role of the cluster.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::rule::Rule;
use crate::fbc::node::{Node, Pos, Value as NodeValue};

/// Where rights apply.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase", tag = "scope", content = "namespace")]
pub enum Scope {
    /// Every namespace and the cluster-scoped resources (a ClusterRoleBinding).
    Cluster,
    /// One namespace (a RoleBinding).
    Namespace(String),
}

impl Scope {
    /// `cluster-wide` or `namespace <ns>`.
    pub fn describe(&self) -> String {
        match self {
            Scope::Cluster => "cluster-wide".to_string(),
            Scope::Namespace(ns) => format!("in namespace {ns}"),
        }
    }
}

/// `Kind name`, or `Kind ns/name` in a namespace: how subjects, roles and bindings are named
/// in messages and matched by name ([`largest_rule`]).
pub fn described(kind: &str, ns: &str, name: &str) -> String {
    if ns.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {ns}/{name}")
    }
}

/// A binding's subject (`rbacv1.Subject`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Subject {
    /// `ServiceAccount`, `User` or `Group`.
    pub kind: String,
    /// The name.
    pub name: String,
    /// A ServiceAccount's namespace.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

impl Subject {
    /// `ServiceAccount ns/name`, `Group name`, `User name`.
    pub fn describe(&self) -> String {
        described(&self.kind, &self.namespace, &self.name)
    }
}

/// A role a binding refers to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RoleRef {
    /// `Role` or `ClusterRole`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// A Role's namespace.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

impl RoleRef {
    /// `ClusterRole name` or `Role ns/name`.
    pub fn describe(&self) -> String {
        described(&self.kind, &self.namespace, &self.name)
    }
}

/// Where a rule was written: the file, its position, and the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The manifest.
    pub file: Arc<Path>,
    /// The rule's position in it.
    pub pos: Pos,
    /// The rule's field, e.g. `spec.install.spec.clusterPermissions[0].rules[3]`.
    pub path: String,
}

/// One rule granted to one subject through one binding.
#[derive(Debug, Clone)]
pub struct Grant {
    /// Who.
    pub subject: Subject,
    /// Where.
    pub scope: Scope,
    /// What.
    pub rule: Rule,
    /// Through which role.
    pub role: RoleRef,
    /// Through which binding (`ClusterRoleBinding name` or `RoleBinding ns/name`).
    pub binding: String,
    /// Where the rule was written, when known.
    pub origin: Option<Origin>,
}

/// A binding of a role that the objects do not hold: an existing role of the cluster.
#[derive(Debug, Clone)]
pub struct External {
    /// The bound role.
    pub role: RoleRef,
    /// The binding.
    pub binding: String,
    /// Where it applies.
    pub scope: Scope,
    /// Its subjects.
    pub subjects: Vec<Subject>,
    /// The binding's manifest, when known.
    pub origin: Option<Origin>,
}

/// A ClusterRole whose labels aggregate it into other ClusterRoles (`aggregate-to-*`).
#[derive(Debug, Clone)]
pub struct Aggregated {
    /// The ClusterRole.
    pub name: String,
    /// The label keys that aggregate it.
    pub labels: Vec<String>,
    /// Its rules.
    pub rules: Vec<Rule>,
    /// Its manifest, when known.
    pub origin: Option<Origin>,
}

/// Everything a set of objects grants.
#[derive(Debug, Clone, Default)]
pub struct Granted {
    /// The rules, by binding then rule order.
    pub grants: Vec<Grant>,
    /// Bindings of roles that are not among the objects.
    pub external: Vec<External>,
    /// ClusterRoles aggregated into others.
    pub aggregated: Vec<Aggregated>,
}

/// A role or binding as it was written in the bundle: where to point at.
#[derive(Debug, Clone)]
pub struct Source {
    /// The manifest.
    pub file: Arc<Path>,
    /// The field of the rules list (`spec.install.spec.permissions[0]` or ``).
    pub path: String,
    /// The object's position, for a binding.
    pub pos: Pos,
    /// Each rule and its position.
    pub rules: Vec<(Rule, Pos)>,
    /// What it is: a bundled object (kind and name), or a CSV permission (its service account).
    pub key: SourceKey,
}

/// What a [`Source`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKey {
    /// A manifest of this kind and name.
    Object(String, String),
    /// A CSV `permissions` (false) or `clusterPermissions` (true) entry for this ServiceAccount.
    Permission(bool, String),
}

fn field<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    match &n.value {
        NodeValue::Map(entries) => entries
            .iter()
            .rev()
            .find(|e| e.key == key)
            .map(|e| &e.value),
        _ => None,
    }
}

fn items(n: Option<&Node>) -> &[Node] {
    match n.map(|n| &n.value) {
        Some(NodeValue::Seq(v)) => v,
        _ => &[],
    }
}

fn node_rules(n: Option<&Node>) -> Vec<(Rule, Pos)> {
    items(n)
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(&r.to_json()).unwrap_or(Value::Null);
            (Rule::from_json(&v), r.pos)
        })
        .collect()
}

/// The sources of a bundle's RBAC: its CSV's `permissions` and `clusterPermissions` entries and
/// its Role/ClusterRole/RoleBinding/ClusterRoleBinding manifests.
pub fn sources(bundle: &crate::bundle::load::BundleDir) -> Vec<Source> {
    let mut out = Vec::new();
    if let Some((file, csv)) = bundle.csv() {
        let spec = field(csv, "spec")
            .and_then(|s| field(s, "install"))
            .and_then(|s| field(s, "spec"));
        for (key, cluster) in [("permissions", false), ("clusterPermissions", true)] {
            for (i, p) in items(spec.and_then(|s| field(s, key))).iter().enumerate() {
                let sa = field(p, "serviceAccountName")
                    .and_then(Node::as_str)
                    .unwrap_or_default()
                    .to_string();
                out.push(Source {
                    file: file.clone(),
                    path: format!("spec.install.spec.{key}[{i}]"),
                    pos: p.pos,
                    rules: node_rules(field(p, "rules")),
                    key: SourceKey::Permission(cluster, sa),
                });
            }
        }
    }
    for m in &bundle.manifests {
        for d in &m.docs {
            let kind = field(d, "kind").and_then(Node::as_str).unwrap_or_default();
            if !matches!(
                kind,
                "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
            ) {
                continue;
            }
            let name = field(d, "metadata")
                .and_then(|m| field(m, "name"))
                .and_then(Node::as_str)
                .unwrap_or_default();
            out.push(Source {
                file: m.path.clone(),
                path: String::new(),
                pos: d.pos,
                rules: node_rules(field(d, "rules")),
                key: SourceKey::Object(kind.to_string(), name.to_string()),
            });
        }
    }
    out
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn subjects_of(binding: &Value) -> Vec<Subject> {
    binding
        .get("subjects")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| Subject {
                    kind: str_at(s, "/kind").to_string(),
                    name: str_at(s, "/name").to_string(),
                    namespace: str_at(s, "/namespace").to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The sources by where they come from, looked up once per role or binding instead of scanned
/// (a CSV of 2,000 clusterPermissions entries has 4,000 of them).
struct Sources<'a> {
    objects: HashMap<(&'a str, &'a str), &'a Source>,
    permissions: HashMap<&'a str, Vec<&'a Source>>,
}

impl<'a> Sources<'a> {
    fn of(sources: &'a [Source]) -> Sources<'a> {
        let mut objects = HashMap::new();
        let mut permissions: HashMap<&str, Vec<&Source>> = HashMap::new();
        for s in sources {
            match &s.key {
                SourceKey::Object(kind, name) => {
                    // The first of a key, as a search in order finds it.
                    objects.entry((kind.as_str(), name.as_str())).or_insert(s);
                }
                SourceKey::Permission(_, sa) => permissions.entry(sa.as_str()).or_default().push(s),
            }
        }
        Sources {
            objects,
            permissions,
        }
    }

    /// Where the role or binding `kind` `name` was written: its manifest, else the CSV
    /// permissions entry of one of `subjects` whose rules begin `rules` (OLM may add its own
    /// rules after the CSV's).
    fn of_object(
        &self,
        kind: &str,
        name: &str,
        rules: &[Rule],
        subjects: &[Subject],
    ) -> Option<&'a Source> {
        if let Some(s) = self.objects.get(&(kind, name)) {
            return Some(s);
        }
        // In the sources' order: the first entry of any of the subjects.
        let mut found: Option<&'a Source> = None;
        for sub in subjects.iter().filter(|s| s.kind == "ServiceAccount") {
            for s in self
                .permissions
                .get(sub.name.as_str())
                .into_iter()
                .flatten()
            {
                let fits = s.rules.len() <= rules.len()
                    && s.rules.iter().zip(rules).all(|((a, _), b)| a == b);
                if fits && found.is_none_or(|f| std::ptr::from_ref(*s) < std::ptr::from_ref(f)) {
                    found = Some(s);
                }
            }
        }
        found
    }
}

/// Of the rules granted through `object` (a role as [`RoleRef::describe`] names it, or a
/// binding as [`Grant::binding`] does), the first with the longest lists: the one to point at
/// when the object's rules are too many to compare.
pub fn largest_rule<'g>(granted: &'g Granted, object: &str) -> Option<&'g Grant> {
    let mut best: Option<&Grant> = None;
    for g in granted
        .grants
        .iter()
        .filter(|g| g.binding == object || g.role.describe() == object)
    {
        if best.is_none_or(|b| g.rule.lists_len() > b.rule.lists_len()) {
            best = Some(g);
        }
    }
    best
}

/// What `objects` grant (Roles, ClusterRoles and their bindings; other kinds are ignored).
/// `sources` point each rule at where it was written.
pub fn granted(objects: &[Value], sources: &[Source]) -> Granted {
    let kind = |o: &Value| str_at(o, "/kind").to_string();
    let mut roles: BTreeMap<(String, String, String), &Value> = BTreeMap::new();
    for o in objects {
        let k = kind(o);
        if k == "Role" || k == "ClusterRole" {
            let ns = if k == "Role" {
                str_at(o, "/metadata/namespace")
            } else {
                ""
            };
            roles.insert(
                (k, ns.to_string(), str_at(o, "/metadata/name").to_string()),
                o,
            );
        }
    }
    let index = Sources::of(sources);
    let mut out = Granted::default();
    for o in objects {
        let k = kind(o);
        if k == "ClusterRole" {
            let labels: Vec<String> = o
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .map(|m| {
                    m.keys()
                        .filter(|k| k.starts_with("rbac.authorization.k8s.io/aggregate-to-"))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            if !labels.is_empty() {
                let name = str_at(o, "/metadata/name").to_string();
                let rules = Rule::of_role(o);
                let origin = index
                    .of_object("ClusterRole", &name, &rules, &[])
                    .map(|s| Origin {
                        file: s.file.clone(),
                        pos: s.pos,
                        path: "metadata.labels".to_string(),
                    });
                out.aggregated.push(Aggregated {
                    name,
                    labels,
                    rules,
                    origin,
                });
            }
            continue;
        }
        if k != "RoleBinding" && k != "ClusterRoleBinding" {
            continue;
        }
        let binding_ns = if k == "RoleBinding" {
            str_at(o, "/metadata/namespace")
        } else {
            ""
        };
        let binding_name = str_at(o, "/metadata/name");
        let binding = described(&k, binding_ns, binding_name);
        let scope = if binding_ns.is_empty() {
            Scope::Cluster
        } else {
            Scope::Namespace(binding_ns.to_string())
        };
        let ref_kind = str_at(o, "/roleRef/kind");
        let ref_name = str_at(o, "/roleRef/name");
        let role_ns = if ref_kind == "Role" { binding_ns } else { "" };
        let role = RoleRef {
            kind: ref_kind.to_string(),
            name: ref_name.to_string(),
            namespace: role_ns.to_string(),
        };
        let subjects = subjects_of(o);
        let key = (
            ref_kind.to_string(),
            role_ns.to_string(),
            ref_name.to_string(),
        );
        let Some(role_obj) = roles.get(&key) else {
            let origin = index.of_object(&k, binding_name, &[], &[]).map(|s| Origin {
                file: s.file.clone(),
                pos: s.pos,
                path: "roleRef".to_string(),
            });
            out.external.push(External {
                role,
                binding,
                scope,
                subjects,
                origin,
            });
            continue;
        };
        let sourced = super::aggregate::sourced(role_obj, objects);
        let own: Vec<Rule> = Rule::of_role(role_obj);
        // Each role's source looked up once for the binding, not once per rule and subject.
        let own_source = index.of_object(ref_kind, ref_name, &own, &subjects);
        let mut aggregated: HashMap<&str, Option<&Source>> = HashMap::new();
        for subject in &subjects {
            for (rule, from, j) in &sourced {
                let j = *j;
                let source = if from == ref_name {
                    own_source
                } else {
                    *aggregated
                        .entry(from.as_str())
                        .or_insert_with(|| index.of_object("ClusterRole", from, &[], &[]))
                };
                let origin = source.map(|s| match s.rules.get(j) {
                    Some((_, pos)) => Origin {
                        file: s.file.clone(),
                        pos: *pos,
                        path: if s.path.is_empty() {
                            format!("rules[{j}]")
                        } else {
                            format!("{}.rules[{j}]", s.path)
                        },
                    },
                    // A rule OLM added after the written ones.
                    None => Origin {
                        file: s.file.clone(),
                        pos: s.pos,
                        path: s.path.clone(),
                    },
                });
                out.grants.push(Grant {
                    subject: subject.clone(),
                    scope: scope.clone(),
                    rule: rule.clone(),
                    role: role.clone(),
                    binding: binding.clone(),
                    origin,
                });
            }
        }
    }
    out
}
