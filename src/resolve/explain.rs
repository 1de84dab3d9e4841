//! Why a namespace does not resolve, in words a person can act on: OLM's message (the
//! solver's conflict, as OLM writes it into the Subscriptions' `ResolutionFailed` condition),
//! and for each constraint of the minimal unsatisfiable set (every member needed: removing
//! any one gives a solution), what it means, the chain from a Subscription to it, every
//! candidate considered and why it is out, and what would fix it.

use std::collections::{BTreeMap, VecDeque};

use super::entry::Entry;
use super::resolver::{EntryRef, Kind, Resolver};
use super::solver::{AppliedConstraint, Constraint, Identifier, NotSatisfiable};

/// A candidate that was considered, and why it is out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The solver identifier (`catalog/namespace/channel/csv`).
    pub id: String,
    pub csv: String,
    pub version: String,
    pub why_out: String,
}

/// One constraint of the conflict, explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What the constraint is on: a CSV, a Subscription, or an invariant's API or package.
    pub subject: String,
    /// OLM's text of the constraint.
    pub constraint: String,
    /// What it means.
    pub means: String,
    /// From a Subscription to the constraint's subject (identifiers), when one leads there.
    pub chain: Vec<String>,
    /// The candidates considered.
    pub candidates: Vec<Candidate>,
    /// What would fix it.
    pub fix: Vec<String>,
}

/// The explanation of a failed resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// `constraints not satisfiable: ...`.
    pub olm_message: String,
    /// The minimal set, chain order (Subscriptions first, then what they lead to).
    pub items: Vec<Item>,
}

fn version(e: &Entry) -> String {
    e.package_version()
        .map(str::to_string)
        .or_else(|| e.version.as_ref().map(|v| v.to_string()))
        .unwrap_or_default()
}

/// The shortest path of dependency edges from a Subscription variable to `to`.
fn chain(r: &Resolver<'_>, to: &Identifier) -> Vec<String> {
    let mut prev: BTreeMap<Identifier, Option<Identifier>> = BTreeMap::new();
    let mut queue = VecDeque::new();
    for v in r.variables.values() {
        if matches!(v.kind, Kind::Subscription(_)) {
            prev.insert(v.id.clone(), None);
            queue.push_back(v.id.clone());
        }
    }
    while let Some(id) = queue.pop_front() {
        if id == *to {
            let mut path = vec![id.to_string()];
            let mut cur = id;
            while let Some(Some(p)) = prev.get(&cur) {
                path.push(p.to_string());
                cur = p.clone();
            }
            path.reverse();
            return path;
        }
        let Some(v) = r.variables.get(&id) else {
            continue;
        };
        for c in &v.constraints {
            if let Constraint::Dependency(ids) = c.inner() {
                for n in ids {
                    if !prev.contains_key(n) {
                        prev.insert(n.clone(), Some(id.clone()));
                        queue.push_back(n.clone());
                    }
                }
            }
        }
    }
    Vec::new()
}

/// Why `c` (a candidate of a dependency in the conflict) cannot be chosen, from the other
/// members of the conflict that name it.
fn why_out(r: &Resolver<'_>, core: &[AppliedConstraint], c: &Identifier) -> String {
    let mut reasons = Vec::new();
    for a in core {
        match a.constraint.inner() {
            Constraint::Prohibited if a.variable == *c => {
                reasons.push(a.to_string());
            }
            Constraint::Conflict(other) if a.variable == *c => {
                reasons.push(format!(
                    "it would replace the installed {other}, which must stay"
                ));
            }
            Constraint::Conflict(other) if other == c => {
                reasons.push(format!("it conflicts with {}", a.variable));
            }
            Constraint::AtMost { ids, .. } if ids.contains(c) => {
                let others: Vec<&str> = ids
                    .iter()
                    .filter(|i| *i != c)
                    .map(Identifier::as_str)
                    .collect();
                reasons.push(format!(
                    "{} (only one may be installed; the other: {})",
                    a,
                    others.join(", ")
                ));
            }
            Constraint::Dependency(_) if a.variable == *c => {
                let text = a.to_string();
                match text.split_once(" requires an operator ") {
                    Some((_, what)) => reasons.push(format!(
                        "it requires an operator {what}, and that cannot be met"
                    )),
                    None => reasons.push(format!("its requirement cannot be met: {text}")),
                }
            }
            _ => {}
        }
    }
    if reasons.is_empty() {
        if let Some(v) = r.variables.get(c)
            && let Kind::Bundle(x) = v.kind
            && r.entry(x).source.catalog.is_virtual()
        {
            return "installed, and replacing or keeping it conflicts with the rest".into();
        }
        return "choosing it leaves another member of this conflict unmet".into();
    }
    reasons.join("; ")
}

fn candidate(r: &Resolver<'_>, x: EntryRef, why: String) -> Candidate {
    let e = r.entry(x);
    Candidate {
        id: e.id(),
        csv: e.name.clone(),
        version: version(e),
        why_out: why,
    }
}

/// The explanation of `n` over the resolver that produced it.
pub fn explain(r: &Resolver<'_>, n: &NotSatisfiable) -> Explanation {
    let core = &n.0;
    let mut items: Vec<(usize, Item)> = Vec::new();
    for a in core {
        let subject = r.variables.get(&a.variable);
        let chain = chain(r, &a.variable);
        let subject_name = match subject.map(|v| &v.kind) {
            Some(Kind::Bundle(x)) => r.entry(*x).name.clone(),
            Some(Kind::Subscription(name)) => name.clone(),
            _ => a.variable.to_string(),
        };
        let mut item = Item {
            subject: subject_name,
            constraint: a.to_string(),
            means: String::new(),
            chain: chain.clone(),
            candidates: Vec::new(),
            fix: Vec::new(),
        };
        match (subject.map(|v| &v.kind), a.constraint.inner()) {
            (Some(Kind::Subscription(name)), Constraint::Mandatory) => {
                item.means = format!("the Subscription {name} must be satisfied");
            }
            (Some(Kind::Subscription(name)), Constraint::Prohibited) => {
                item.means = format!(
                    "the Subscription {name} names nothing its catalog has: {}",
                    a
                );
                item.fix.push(format!(
                    "check spec.source, spec.sourceNamespace, spec.name, spec.channel and spec.startingCSV of Subscription {name} against the catalog (olmctl catalog ls)"
                ));
            }
            (Some(Kind::Subscription(name)), Constraint::Dependency(ids)) => {
                item.means = format!(
                    "the Subscription {name} needs one of its {} candidate(s)",
                    ids.len()
                );
                for id in ids {
                    if let Some(v) = r.variables.get(id)
                        && let Kind::Bundle(x) = v.kind
                    {
                        item.candidates.push(candidate(r, x, why_out(r, core, id)));
                    }
                }
                if ids.is_empty() {
                    item.fix.push(format!(
                        "no bundle of the catalog upgrades the installed CSV of {name}: check the channel's replaces/skips/skipRange"
                    ));
                }
            }
            (Some(Kind::Bundle(x)), Constraint::Mandatory) => {
                let e = r.entry(*x);
                item.means = format!(
                    "{} is installed in the namespace and no Subscription references it, so OLM keeps it as it is",
                    e.name
                );
                item.fix.push(format!(
                    "delete the orphaned CSV (kubectl delete csv {} -n {}) or create a Subscription whose status.installedCSV is it",
                    e.name, e.source.catalog.namespace
                ));
            }
            (Some(Kind::Bundle(x)), Constraint::Prohibited) => {
                let e = r.entry(*x);
                item.means = format!(
                    "{} carries the olm.deprecated property: OLM never installs it",
                    e.name
                );
                item.fix.push("choose another version or channel".into());
            }
            (Some(Kind::Bundle(x)), Constraint::Conflict(other)) => {
                item.means = format!(
                    "{} would replace the installed {other}; both cannot be in the namespace",
                    r.entry(*x).name
                );
            }
            (Some(Kind::Bundle(x)), Constraint::Dependency(ids)) => {
                let e = r.entry(*x);
                let q = r
                    .requirements
                    .iter()
                    .find(|q| q.subject == *x && q.text == item.constraint);
                item.means = if ids.is_empty() {
                    format!(
                        "{} has a requirement that nothing in the catalogs read satisfies",
                        e.name
                    )
                } else {
                    format!(
                        "{} has a requirement none of whose {} candidate(s) can be installed",
                        e.name,
                        ids.len()
                    )
                };
                for id in ids {
                    if let Some(v) = r.variables.get(id)
                        && let Kind::Bundle(c) = v.kind
                    {
                        item.candidates.push(candidate(r, c, why_out(r, core, id)));
                    }
                }
                if let Some(q) = q {
                    for &rej in &q.rejected {
                        item.candidates.push(candidate(
                            r,
                            rej,
                            "does not satisfy the requirement (its version or properties)".into(),
                        ));
                    }
                    if ids.is_empty() {
                        let what = q.text.split(" requires an operator ").nth(1).unwrap_or("");
                        item.fix.push(format!(
                            "add a catalog (a CatalogSource in the namespace or the global namespace) with a bundle {what}"
                        ));
                    }
                }
            }
            (Some(Kind::Invariant), Constraint::AtMost { ids, .. }) => {
                item.means = format!(
                    "only one of {} may be installed in the namespace",
                    ids.iter()
                        .map(Identifier::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                item.fix.push(
                    "uninstall one of them, or subscribe in another namespace (another OperatorGroup)".into(),
                );
            }
            (Some(Kind::Invariant), Constraint::Mandatory) => {
                item.means =
                    "an invariant of the namespace: one provider per API, one operator per package"
                        .into();
            }
            _ => item.means = a.to_string(),
        }
        let rank = if chain.is_empty() {
            usize::MAX
        } else {
            chain.len()
        };
        items.push((rank, item));
    }
    items.sort_by_key(|(rank, _)| *rank);
    Explanation {
        olm_message: n.to_string(),
        items: items.into_iter().map(|(_, i)| i).collect(),
    }
}
