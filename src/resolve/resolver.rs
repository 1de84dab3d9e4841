//! The model: a port of OLM's `resolver/resolver.go` (`Resolver.Resolve`,
//! `getSubscriptionVariables`, `getBundleVariables`, `addInvariants`, `sortBundles`,
//! `sortChannel`), `variable_types.go` (the variables and their texts) and the catalog order
//! of `cache/cache.go` (`sortableSnapshots.Less`).
//!
//! Where OLM's order is Go's map order (random between runs), a fixed order is taken: the
//! solver's input sorted by identifier, and, for a Subscription without a channel, the
//! entries of one CSV in several channels in the order the sorted channels put them.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::entry::{Entry, SourceKey, bundle_id};
use super::predicate::Predicate;
use super::requirement::dependencies;
use super::solver::{self, Constraint, Identifier, NotSatisfiable, SolveError, Variable};
use super::source::Snapshot;
use super::state::Subscription;

/// An entry: (snapshot, entry) positions in the resolver's snapshots.
pub type EntryRef = (usize, usize);

/// What a variable stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A bundle of a catalog (or an installed CSV).
    Bundle(EntryRef),
    /// A Subscription (by name).
    Subscription(String),
    /// One provider per API, or one bundle per package.
    Invariant,
}

/// A solver variable of the resolver (`BundleVariable` or `GenericVariable`).
#[derive(Debug, Clone)]
pub struct ResolverVariable {
    pub id: Identifier,
    pub constraints: Vec<Constraint>,
    pub kind: Kind,
    /// For a Subscription's candidate: the installed CSV it replaces.
    pub replaces: String,
}

impl Variable for ResolverVariable {
    fn identifier(&self) -> &Identifier {
        &self.id
    }
    fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }
}

/// A requirement of a bundle, with what was considered for it (for the explanation).
#[derive(Debug, Clone)]
pub struct Requirement {
    /// The bundle.
    pub subject: EntryRef,
    /// `bundle X requires an operator ...`.
    pub text: String,
    /// The candidates, in preference order.
    pub candidates: Vec<EntryRef>,
    /// Bundles of the same package and channel as a candidate (or of a channel with one)
    /// that do not satisfy the requirement.
    pub rejected: Vec<EntryRef>,
}

/// Why the namespace does not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// `constraints not satisfiable: ...`: the solver's conflict.
    NotSatisfiable(NotSatisfiable),
    /// Any other error, as OLM words it (`ErrorPreventedResolution`).
    Error(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotSatisfiable(n) => n.fmt(f),
            Failure::Error(e) => f.write_str(e),
        }
    }
}

/// `utilerrors.NewAggregate(errs).Error()`: one error as it is, several de-duplicated,
/// joined with `, ` in brackets.
pub fn aggregate(errs: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errs {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => one.to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// The resolver over the snapshots of one namespace's catalogs (the first namespace given
/// is the preferred one, where `@existing` is read).
pub struct Resolver<'s> {
    pub snapshots: &'s [Snapshot],
    /// The variables built so far, by identifier.
    pub variables: BTreeMap<Identifier, ResolverVariable>,
    /// `visited`: the variable built for an entry.
    visited: HashMap<EntryRef, Identifier>,
    /// Every requirement met while building.
    pub requirements: Vec<Requirement>,
    /// Subscription → the entries it considered (its candidates), in preference order.
    pub subscription_candidates: BTreeMap<String, Vec<EntryRef>>,
    /// Subscription → its installed entry.
    pub current: BTreeMap<String, EntryRef>,
}

/// The result of [`Resolver::resolve`]: the bundle variables chosen (not installed ones)
/// with what each replaces, or the failure.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Chosen catalog bundles: the entry and the CSV it replaces ("" for a new install).
    pub operators: Vec<(EntryRef, String)>,
    /// Every chosen variable's identifier, installed ones included, in solver input order.
    pub chosen: Vec<Identifier>,
}

impl<'s> Resolver<'s> {
    /// A resolver over `snapshots` (the `@existing` one among them).
    pub fn new(snapshots: &'s [Snapshot]) -> Resolver<'s> {
        Resolver {
            snapshots,
            variables: BTreeMap::new(),
            visited: HashMap::new(),
            requirements: Vec::new(),
            subscription_candidates: BTreeMap::new(),
            current: BTreeMap::new(),
        }
    }

    /// The entry at `r`.
    pub fn entry(&self, r: EntryRef) -> &'s Entry {
        &self.snapshots[r.0].entries[r.1]
    }

    fn snapshot_of(&self, key: &SourceKey) -> Option<usize> {
        self.snapshots.iter().position(|s| s.key == *key)
    }

    /// `newSortableSnapshots` + `sort.Sort`: the installed CSVs of the preferred namespace,
    /// then the preferred catalog, then priority (high first), then the preferred namespace,
    /// then name (then namespace, where OLM leaves the order to chance).
    fn sorted(&self, preferred: Option<&SourceKey>, preferred_ns: &str) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.snapshots.len()).collect();
        let preferred = preferred.filter(|k| !k.is_empty());
        order.sort_by(|&a, &b| {
            let (sa, sb) = (&self.snapshots[a], &self.snapshots[b]);
            let existing = |s: &Snapshot| s.key.is_virtual() && s.key.namespace == preferred_ns;
            let pref = |s: &Snapshot| preferred.is_some_and(|p| *p == s.key);
            existing(sb)
                .cmp(&existing(sa))
                .then(pref(sb).cmp(&pref(sa)))
                .then(sb.priority.cmp(&sa.priority))
                .then_with(|| {
                    if sa.key.namespace == sb.key.namespace {
                        std::cmp::Ordering::Equal
                    } else {
                        (sb.key.namespace == preferred_ns).cmp(&(sa.key.namespace == preferred_ns))
                    }
                })
                .then(sa.key.name.cmp(&sb.key.name))
                .then(sa.key.namespace.cmp(&sb.key.namespace))
        });
        order
    }

    /// `FindPreferred`.
    fn find_preferred(
        &self,
        preferred: Option<&SourceKey>,
        preferred_ns: &str,
        p: &Predicate,
    ) -> Vec<EntryRef> {
        let mut out = Vec::new();
        for s in self.sorted(preferred, preferred_ns) {
            for (i, e) in self.snapshots[s].entries.iter().enumerate() {
                if p.test(e) {
                    out.push((s, i));
                }
            }
        }
        out
    }

    /// `Catalog(key).Find(p)`: one catalog, or every catalog for an empty key.
    fn find_in(&self, key: &SourceKey, p: &mut dyn FnMut(&Entry) -> bool) -> Vec<EntryRef> {
        let snaps: Vec<usize> = if key.is_empty() {
            self.sorted(None, "")
        } else {
            self.snapshot_of(key).into_iter().collect()
        };
        let mut out = Vec::new();
        for s in snaps {
            for (i, e) in self.snapshots[s].entries.iter().enumerate() {
                if p(e) {
                    out.push((s, i));
                }
            }
        }
        out
    }

    /// `NewBundleVariableFromOperator`.
    fn bundle_variable(&self, r: EntryRef) -> ResolverVariable {
        let e = self.entry(r);
        let id = Identifier::from(e.id());
        let mut constraints = Vec::new();
        if e.source.catalog.is_virtual() && e.source.subscription.is_none() {
            constraints.push(Constraint::pretty(
                Constraint::Mandatory,
                format!(
                    "clusterserviceversion {} exists and is not referenced by a subscription",
                    e.name
                ),
            ));
        }
        if e.properties.iter().any(|p| p.type_ == "olm.deprecated") {
            constraints.push(Constraint::pretty(
                Constraint::Prohibited,
                format!("bundle {id} is deprecated"),
            ));
        }
        ResolverVariable {
            id,
            constraints,
            kind: Kind::Bundle(r),
            replaces: String::new(),
        }
    }

    /// `getBundleVariables`: the variables of `stack` and of everything they require,
    /// transitively; returns the identifiers of `stack`'s own entries.
    fn bundle_variables(
        &mut self,
        preferred_ns: &str,
        mut stack: Vec<EntryRef>,
    ) -> Result<Vec<Identifier>, String> {
        let mut errs = Vec::new();
        let errs = &mut errs;
        let initial: Vec<EntryRef> = stack.clone();
        while let Some(r) = stack.pop() {
            if self.visited.contains_key(&r) {
                continue;
            }
            let mut v = self.bundle_variable(r);
            self.visited.insert(r, v.id.clone());
            let e = self.entry(r);
            let preds = match dependencies(&e.properties) {
                Ok(p) => p,
                Err(err) => {
                    errs.push(err);
                    continue;
                }
            };
            for d in preds {
                // Every (catalog, package, channel) with at least one candidate, and every
                // installed CSV that is one.
                let mut sources: Vec<Predicate> = Vec::new();
                let mut seen = HashSet::new();
                for b in self.find_preferred(None, "", &d) {
                    let be = self.entry(b);
                    let si = &be.source;
                    let key = (
                        si.package.clone(),
                        si.channel.clone(),
                        si.catalog.clone(),
                        si.default_channel,
                        si.subscription.clone(),
                    );
                    if !seen.insert(key) {
                        continue;
                    }
                    sources.push(if si.catalog.is_virtual() {
                        Predicate::And(vec![
                            Predicate::CsvName(be.name.clone()),
                            Predicate::Catalog(si.catalog.clone()),
                        ])
                    } else {
                        Predicate::And(vec![
                            Predicate::Pkg(si.package.clone()),
                            Predicate::Channel(si.channel.clone()),
                            Predicate::Catalog(si.catalog.clone()),
                        ])
                    });
                }
                let source = Predicate::Or(sources);
                let considered =
                    self.find_preferred(Some(&e.source.catalog), preferred_ns, &source);
                let sorted = match sort_bundles(self, &considered) {
                    Ok(s) => s,
                    Err(err) => {
                        errs.push(err);
                        continue;
                    }
                };
                let mut ids = Vec::new();
                let mut candidates = Vec::new();
                let mut rejected = Vec::new();
                for b in sorted {
                    if d.test(self.entry(b)) {
                        let bv = self.bundle_variable(b);
                        ids.push(bv.id.clone());
                        self.variables.entry(bv.id.clone()).or_insert(bv);
                        candidates.push(b);
                        stack.push(b);
                    } else {
                        rejected.push(b);
                    }
                }
                let text = format!("bundle {} requires an operator {d}", e.name);
                v.constraints.push(Constraint::pretty(
                    Constraint::Dependency(ids),
                    text.clone(),
                ));
                self.requirements.push(Requirement {
                    subject: r,
                    text,
                    candidates,
                    rejected,
                });
            }
            self.variables.insert(v.id.clone(), v);
        }
        if !errs.is_empty() {
            return Err(aggregate(errs));
        }
        let mut ids = Vec::new();
        for r in initial {
            if let Some(id) = self.visited.get(&r)
                && !ids.contains(id)
            {
                ids.push(id.clone());
            }
        }
        Ok(ids)
    }

    /// `getSubscriptionVariables`.
    fn subscription_variables(
        &mut self,
        sub: &Subscription,
        current: Option<EntryRef>,
    ) -> Result<(), String> {
        let catalog = SourceKey::new(&sub.catalog, &sub.catalog_namespace);
        let (mut nall, mut npkg, mut nch, mut ncsv) = (0, 0, 0, 0);
        let pkg = Predicate::Pkg(sub.package.clone());
        let channel = Predicate::Channel(sub.channel.clone());
        let starting =
            (current.is_none() && !sub.starting_csv.is_empty()).then(|| sub.starting_csv.clone());
        let entries = self.find_in(&catalog, &mut |e: &Entry| {
            nall += 1;
            if !pkg.test(e) {
                return false;
            }
            npkg += 1;
            if !channel.test(e) {
                return false;
            }
            nch += 1;
            if starting.as_ref().is_some_and(|s| e.name != *s) {
                return false;
            }
            ncsv += 1;
            true
        });
        let invalid = if nall == 0 {
            Some(format!(
                "no operators found from catalog {} in namespace {} referenced by subscription {}",
                sub.catalog, sub.catalog_namespace, sub.name
            ))
        } else if npkg == 0 {
            Some(format!(
                "no operators found in package {} in the catalog referenced by subscription {}",
                sub.package, sub.name
            ))
        } else if nch == 0 {
            Some(format!(
                "no operators found in channel {} of package {} in the catalog referenced by subscription {}",
                sub.channel, sub.package, sub.name
            ))
        } else if ncsv == 0 {
            Some(format!(
                "no operators found with name {} in channel {} of package {} in the catalog referenced by subscription {}",
                sub.starting_csv, sub.channel, sub.package, sub.name
            ))
        } else {
            None
        };
        let sid = Identifier::from(format!("subscription:{}", sub.name));
        if let Some(reason) = invalid {
            self.variables.insert(
                sid.clone(),
                ResolverVariable {
                    id: sid,
                    constraints: vec![
                        Constraint::pretty(
                            Constraint::Mandatory,
                            format!("subscription {} exists", sub.name),
                        ),
                        Constraint::pretty(Constraint::Prohibited, reason),
                    ],
                    kind: Kind::Subscription(sub.name.clone()),
                    replaces: String::new(),
                },
            );
            return Ok(());
        }
        // The admitted entries in catalog order: each candidate's entries (one per channel of
        // its CSV when no channel is given) are these, by name, as OLM's second `Find` gives.
        let admitted = entries.clone();
        // Default channel first, then channel name (stable), each channel in replaces order.
        let mut entries = entries;
        entries.sort_by(|&a, &b| {
            let (ea, eb) = (self.entry(a), self.entry(b));
            eb.source
                .default_channel
                .cmp(&ea.source.default_channel)
                .then_with(|| {
                    if ea.source.default_channel == eb.source.default_channel {
                        ea.source.channel.cmp(&eb.source.channel)
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
        });
        let mut sorted = Vec::new();
        let mut start = 0;
        for i in 1..=entries.len() {
            if i == entries.len()
                || self.entry(entries[i]).source.channel
                    != self.entry(entries[start]).source.channel
            {
                sorted.extend(sort_channel(self, &entries[start..i])?);
                start = i;
            }
        }
        let cur = current.map(|c| self.entry(c));
        let filtered: Vec<EntryRef> = sorted
            .into_iter()
            .filter(|&r| {
                cur.is_none_or(|c| {
                    let e = self.entry(r);
                    c.version
                        .as_ref()
                        .is_some_and(|v| Predicate::SkipRangeIncludes(v.clone()).test(e))
                        || Predicate::Replaces(c.name.clone()).test(e)
                })
            })
            .collect();
        let mut candidates: Vec<Identifier> = Vec::new();
        let mut considered = Vec::new();
        for o in filtered {
            let name = self.entry(o).name.clone();
            // The entries of this CSV (one per channel when no channel is given), o's first.
            let mut stack: Vec<EntryRef> = admitted
                .iter()
                .copied()
                .filter(|&r| self.entry(r).name == name)
                .collect();
            stack.sort_by_key(|&r| r != o);
            stack.reverse(); // popped last first: o is built first
            let ids = self.bundle_variables(&sub.namespace, stack)?;
            if ids.is_empty() {
                return Err(format!(
                    "could not find any potential bundles for subscription: {}",
                    sub.package
                ));
            }
            for id in ids.into_iter().rev() {
                candidates.push(id);
            }
            considered.push(o);
        }
        let current_id = cur.map(|c| {
            Identifier::from(bundle_id(&c.name, "", &SourceKey::existing(&sub.namespace)))
        });
        for c in &candidates {
            if let (Some(cur), Some(cid)) = (cur, &current_id)
                && let Some(v) = self.variables.get_mut(c)
            {
                v.replaces = cur.name.clone();
                v.constraints.push(Constraint::conflict(cid.clone()));
            }
        }
        let mut deps = candidates.clone();
        if let Some(cid) = current_id {
            deps.push(cid);
        }
        let constraints = vec![
            Constraint::pretty(
                Constraint::Mandatory,
                format!("subscription {} exists", sub.name),
            ),
            if deps.is_empty() {
                Constraint::pretty(
                    Constraint::Dependency(Vec::new()),
                    format!(
                        "no operators found matching the criteria of subscription {}",
                        sub.name
                    ),
                )
            } else {
                let names: Vec<&str> = deps.iter().map(Identifier::as_str).collect();
                let req = match names.as_slice() {
                    [one] => one.to_string(),
                    [init @ .., last] => format!("at least one of {} or {last}", init.join(", ")),
                    [] => String::new(),
                };
                Constraint::pretty(
                    Constraint::Dependency(deps),
                    format!("subscription {} requires {req}", sub.name),
                )
            },
        ];
        self.subscription_candidates
            .insert(sub.name.clone(), considered);
        self.variables.insert(
            sid.clone(),
            ResolverVariable {
                id: sid,
                constraints,
                kind: Kind::Subscription(sub.name.clone()),
                replaces: String::new(),
            },
        );
        Ok(())
    }

    /// `addInvariants`: one provider per GVK, one bundle per package (providers sorted).
    fn add_invariants(&mut self) {
        let mut gvks: BTreeMap<(String, String, String), Vec<Identifier>> = BTreeMap::new();
        let mut packages: BTreeMap<String, Vec<Identifier>> = BTreeMap::new();
        for v in self.variables.values() {
            let Kind::Bundle(r) = v.kind else { continue };
            let e = self.entry(r);
            for p in &e.properties {
                match p.type_.as_str() {
                    "olm.gvk" => {
                        if let (Ok(g), Ok(ver), Ok(k)) =
                            (p.field("group"), p.field("version"), p.field("kind"))
                        {
                            gvks.entry((g.into(), ver.into(), k.into()))
                                .or_default()
                                .push(v.id.clone());
                        }
                    }
                    "olm.package" => {
                        if let (Ok(name), Ok(_)) = (p.field("packageName"), p.field("version")) {
                            packages.entry(name.into()).or_default().push(v.id.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
        for ((g, ver, k), ids) in gvks {
            let gvk = format!("{k} ({g}/{ver})");
            self.add_invariant(
                &gvk,
                ids,
                format!("there can be only one provider of {gvk}"),
                &format!("provide {gvk}"),
            );
        }
        for (pkg, ids) in packages {
            self.add_invariant(
                &pkg,
                ids,
                format!("there can be only one operator from package {pkg}"),
                &format!("originate from package {pkg}"),
            );
        }
    }

    /// `NewSingleAPIProviderVariable` / `NewSinglePackageInstanceVariable`: the variable
    /// `id`, mandatory with at most one of `ids` (sorted) when there are several, else
    /// without constraints.
    fn add_invariant(&mut self, id: &str, mut ids: Vec<Identifier>, mandatory: String, what: &str) {
        ids.sort();
        let constraints = if ids.len() <= 1 {
            Vec::new()
        } else {
            let names: Vec<&str> = ids.iter().map(Identifier::as_str).collect();
            let (init, last) = names.split_at(names.len() - 1);
            let msg = format!("{} and {} {what}", init.join(", "), last[0]);
            vec![
                Constraint::pretty(Constraint::Mandatory, mandatory),
                Constraint::pretty(Constraint::AtMost { n: 1, ids }, msg),
            ]
        };
        let id = Identifier::from(id);
        self.variables.insert(
            id.clone(),
            ResolverVariable {
                id,
                constraints,
                kind: Kind::Invariant,
                replaces: String::new(),
            },
        );
    }

    /// `Resolve(namespaces, subs)`: `namespace` is the preferred (first) namespace.
    pub fn resolve(&mut self, namespace: &str, subs: &[Subscription]) -> Result<Outcome, Failure> {
        let mut errs = Vec::new();
        let existing_key = SourceKey::existing(namespace);
        let existing: Vec<EntryRef> = self.find_in(&existing_key, &mut |_| true);
        if !existing.is_empty() {
            self.bundle_variables(namespace, existing)
                .map_err(Failure::Error)?;
        }
        let mut starting = HashSet::new();
        for sub in subs {
            let matches = self.find_in(&SourceKey::existing(&sub.namespace), &mut |e| {
                e.name == sub.installed_csv
            });
            if matches.len() > 1 {
                let names: Vec<&str> = matches
                    .iter()
                    .map(|&m| self.entry(m).name.as_str())
                    .collect();
                return Err(Failure::Error(format!(
                    "multiple name matches for status.installedCSV of subscription {}/{}: {}",
                    sub.namespace,
                    sub.name,
                    names.join(", ")
                )));
            }
            let current = matches.first().copied();
            if let Some(c) = current {
                self.current.insert(sub.name.clone(), c);
            } else if !sub.starting_csv.is_empty() {
                starting.insert(sub.starting_csv.clone());
            }
            if let Err(e) = self.subscription_variables(sub, current) {
                errs.push(e);
            }
        }
        self.add_invariants();
        if !errs.is_empty() {
            return Err(Failure::Error(aggregate(&errs)));
        }
        let input: Vec<&ResolverVariable> = self.variables.values().collect();
        let chosen = match solver::solve(&input) {
            Ok(c) => c,
            Err(SolveError::NotSatisfiable(n)) => return Err(Failure::NotSatisfiable(n)),
            Err(e) => return Err(Failure::Error(e.to_string())),
        };
        let mut operators = Vec::new();
        let mut ids = Vec::new();
        for v in &chosen {
            ids.push(v.id.clone());
            if let Kind::Bundle(r) = v.kind
                && !self.entry(r).source.catalog.is_virtual()
            {
                operators.push((r, v.replaces.clone()));
            }
        }
        Ok(Outcome {
            operators,
            chosen: ids,
        })
    }
}

/// One (package, channel, default) partition of a catalog's bundles.
type Partition = ((String, String, bool), Vec<EntryRef>);

/// `sortBundles`: partitioned by catalog (in the given order), then by (package, channel)
/// with the default channel first, then package, then channel; each channel in replaces
/// order.
fn sort_bundles(r: &Resolver<'_>, bundles: &[EntryRef]) -> Result<Vec<EntryRef>, String> {
    let mut catalogs: Vec<usize> = Vec::new();
    let mut parts: HashMap<usize, Vec<Partition>> = HashMap::new();
    for &b in bundles {
        let e = r.entry(b);
        let pc = (
            e.package().to_string(),
            e.channel().to_string(),
            e.source.default_channel,
        );
        if !catalogs.contains(&b.0) {
            catalogs.push(b.0);
        }
        let p = parts.entry(b.0).or_default();
        match p.iter_mut().find(|(k, _)| *k == pc) {
            Some((_, list)) => list.push(b),
            None => p.push((pc, vec![b])),
        }
    }
    let mut all = Vec::new();
    for c in catalogs {
        let mut p = parts.remove(&c).unwrap_or_default();
        p.sort_by(|(a, _), (b, _)| b.2.cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        for (_, list) in p {
            all.extend(sort_channel(r, &list)?);
        }
    }
    Ok(all)
}

/// `sortChannel`: the channel's one replacement chain from its head, skipped entries left
/// out; OLM's errors for no head, a cycle, or several chains.
fn sort_channel(r: &Resolver<'_>, bundles: &[EntryRef]) -> Result<Vec<EntryRef>, String> {
    let Some(&first) = bundles.first() else {
        return Ok(Vec::new());
    };
    let (package, channel) = (r.entry(first).package(), r.entry(first).channel());
    let mut lookup: HashMap<&str, EntryRef> = HashMap::new();
    for &b in bundles {
        lookup.insert(&r.entry(b).name, b);
    }
    let mut replaced_by: HashSet<EntryRef> = HashSet::new();
    let mut replaces: HashMap<EntryRef, EntryRef> = HashMap::new();
    let mut skipped: HashSet<&str> = HashSet::new();
    for &b in bundles {
        let e = r.entry(b);
        if !e.replaces.is_empty()
            && let Some(&x) = lookup.get(e.replaces.as_str())
        {
            replaced_by.insert(x);
            replaces.insert(b, x);
        }
        for s in &e.skips {
            if let Some(&x) = lookup.get(s.as_str()) {
                replaced_by.insert(x);
                skipped.insert(s);
            }
        }
    }
    let heads: Vec<EntryRef> = bundles
        .iter()
        .copied()
        .filter(|b| !replaced_by.contains(b))
        .collect();
    if heads.is_empty() {
        return Err(format!(
            "no channel heads (entries not replaced by another entry) found in channel \"{channel}\" of package \"{package}\""
        ));
    }
    let mut chains = Vec::new();
    for &head in &heads {
        let mut chain = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = head;
        loop {
            seen.insert(cur);
            if !skipped.contains(r.entry(cur).name.as_str()) {
                chain.push(cur);
            }
            let Some(&next) = replaces.get(&cur) else {
                break;
            };
            if seen.contains(&next) {
                return Err(format!(
                    "a cycle exists in the chain of replacement beginning with \"{}\" in channel \"{channel}\" of package \"{package}\"",
                    r.entry(head).name
                ));
            }
            cur = next;
        }
        chains.push(chain);
    }
    if chains.len() > 1 {
        let names: Vec<String> = chains
            .iter()
            .map(|c| match c.as_slice() {
                [] => "[]".to_string(),
                [one] => r.entry(*one).name.clone(),
                [a, .., z] => format!("{}...{}", r.entry(*a).name, r.entry(*z).name),
            })
            .collect();
        return Err(format!(
            "a unique replacement chain within a channel is required to determine the relative order between channel entries, but {} replacement chains were found in channel \"{channel}\" of package \"{package}\": {}",
            names.len(),
            names.join(", ")
        ));
    }
    Ok(chains.pop().unwrap_or_default())
}
