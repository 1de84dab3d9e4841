//! The upgrade edges to check and the path facts along them.
//!
//! A catalog's edges are every edge of every channel graph (replaces, skips, skipRange): that
//! is what OLM v1 may take, and OLM v0 takes the subset that does not land on a skipped entry.
//! An edge that appears in several channels is checked once. Without a catalog, a package's
//! bundle history gives the edges from the CSVs (`replaces`, `skips`, `olm.skipRange`), and for
//! packages published in semver mode also from version order within each channel.
//!
//! Path facts ([`History`]) are propagated over the edges to a fixpoint: stored versions as a
//! union over predecessors (some path may have stored them), deprecation marks as an
//! intersection (every path must have warned).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use petgraph::graph::NodeIndex;

use super::crdver::History;
use super::facts::Facts;
use super::{Options, check_bundle_after, check_edge};
use crate::diag::Severity::{Error, Info};
use crate::diag::{Finding, Subject, sort_findings};
use crate::fbc::decl::DeclarativeConfig;
use crate::graph::{CatalogGraphs, EdgeKind};
use crate::range::Range;

codes! {
    UNCHECKED = "EDGE001", Info, "Upgrade edges of a package were not checked: the contents of some of their bundles were not given (--bundles).";
    NOTHING_CHECKED = "EDGE002", Error, "No upgrade edge was checked although the catalog has some: no edge had the contents of both its bundles, so a pass would say nothing.";
}

/// One upgrade edge of a package: users of `from` may be moved to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The bundle users run.
    pub from: String,
    /// The bundle they are moved to.
    pub to: String,
    /// What declares the edge (in any channel).
    pub kinds: BTreeSet<EdgeKind>,
    /// The channels that have the edge.
    pub channels: BTreeSet<String>,
    /// Whether OLM v0 may take it (the target is not skipped in some channel having it).
    pub v0: bool,
}

/// A package's upgrade edges, split by whether both bundles' contents are at hand.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PackageEdges {
    /// The edges whose two bundles have contents, sorted by (from, to).
    pub edges: Vec<Edge>,
    /// The number of further edges (distinct pairs) naming a bundle without contents.
    pub unchecked: usize,
    /// The bundles without contents that those edges name.
    pub missing: BTreeSet<String>,
}

impl PackageEdges {
    /// Splits `edges` by whether `bundles` has both ends.
    pub fn split(edges: &[Edge], bundles: &BTreeMap<String, Facts<'_>>) -> Self {
        let mut out = PackageEdges::default();
        for e in edges {
            let missing: Vec<&String> = [&e.from, &e.to]
                .into_iter()
                .filter(|n| !bundles.contains_key(*n))
                .collect();
            if missing.is_empty() {
                out.edges.push(e.clone());
            } else {
                out.unchecked += 1;
                out.missing.extend(missing.into_iter().cloned());
            }
        }
        out
    }

    /// All edges, checked or not.
    pub fn total(&self) -> usize {
        self.edges.len() + self.unchecked
    }
}

/// Every edge of every channel of `cfg`, by package, sorted by (from, to).
///
/// The list is quadratic in the entries of a channel whose skipRanges cover everything below
/// them; [`catalog_package_edges`] keeps only the edges that can be checked.
pub fn catalog_edges(cfg: &DeclarativeConfig) -> BTreeMap<String, Vec<Edge>> {
    catalog_package_edges(&CatalogGraphs::build(cfg, None), None, &|_, _| true)
        .into_iter()
        .map(|(p, e)| (p, e.edges))
        .collect()
}

/// The edges of every channel of `graphs` (or of package `only`), by package: the edges between
/// two bundles for which `has(package, bundle)` holds in full, the others only counted (as
/// distinct pairs of 8 bytes each, deduplicated channel by channel, never as named edges), so
/// that a hostile catalog of universal skipRanges costs memory for the edges that are checked,
/// not for every pair.
pub fn catalog_package_edges(
    graphs: &CatalogGraphs<'_>,
    only: Option<&str>,
    has: &dyn Fn(&str, &str) -> bool,
) -> BTreeMap<String, PackageEdges> {
    let mut out = BTreeMap::new();
    for (pkg, channels) in &graphs.packages {
        if only.is_some_and(|p| p != pkg) {
            continue;
        }
        let mut edges: BTreeMap<(&str, &str), Edge> = BTreeMap::new();
        // Bundle name → a small id, for the unchecked pairs.
        let mut ids: HashMap<&str, u32> = HashMap::new();
        let mut unchecked: Vec<(u32, u32)> = Vec::new();
        let mut missing: BTreeSet<String> = BTreeSet::new();
        for (ch, g) in channels {
            let known: Vec<bool> = g
                .graph
                .node_indices()
                .map(|n| has(pkg, &g.graph[n].name))
                .collect();
            for n in g.graph.node_indices().filter(|n| !known[n.index()]) {
                missing.insert(g.graph[n].name.clone());
            }
            let mut visit = |a: NodeIndex, b: NodeIndex, kind: EdgeKind| {
                let (from, to) = (g.graph[a].name.as_str(), g.graph[b].name.as_str());
                if !(known[a.index()] && known[b.index()]) {
                    let next = ids.len() as u32;
                    let ia = *ids.entry(from).or_insert(next);
                    let next = ids.len() as u32;
                    let ib = *ids.entry(to).or_insert(next);
                    unchecked.push((ia, ib));
                    return;
                }
                let entry = edges.entry((from, to)).or_insert_with(|| Edge {
                    from: from.to_string(),
                    to: to.to_string(),
                    kinds: BTreeSet::new(),
                    channels: BTreeSet::new(),
                    v0: false,
                });
                entry.kinds.insert(kind);
                entry.channels.insert(ch.clone());
                entry.v0 |= !g.graph[b].skipped;
            };
            for e in g.graph.edge_indices() {
                if let Some((a, b)) = g.graph.edge_endpoints(e) {
                    visit(a, b, g.graph[e].kind);
                }
            }
            for to in g.graph.node_indices() {
                for from in g.range_sources(to) {
                    visit(from, to, EdgeKind::SkipRange);
                }
            }
            // Channels repeat each other's edges: keep the pairs distinct as they come.
            unchecked.sort_unstable();
            unchecked.dedup();
        }
        // Only bundles named by an unchecked edge count as missing.
        let named: HashSet<&str> = ids.keys().copied().collect();
        missing.retain(|m| named.contains(m.as_str()));
        out.insert(
            pkg.clone(),
            PackageEdges {
                edges: edges.into_values().collect(),
                unchecked: unchecked.len(),
                missing,
            },
        );
    }
    out
}

/// The edges of a package's bundle history, from the CSVs: `replaces`, `skips` and
/// `olm.skipRange` (against every other bundle's version); with `semver_mode`, also from each
/// bundle to the next higher version of each of its channels.
pub fn history_edges(bundles: &[Facts<'_>], semver_mode: bool) -> Vec<Edge> {
    let mut edges: BTreeMap<(String, String), Edge> = BTreeMap::new();
    let names: HashMap<&str, &Facts<'_>> = bundles.iter().map(|b| (b.name.as_str(), b)).collect();
    let mut add = |from: &str, to: &Facts<'_>, kind: EdgeKind, channels: &[String]| {
        if from == to.name || !names.contains_key(from) {
            return;
        }
        let e = edges
            .entry((from.to_string(), to.name.clone()))
            .or_insert_with(|| Edge {
                from: from.to_string(),
                to: to.name.clone(),
                kinds: BTreeSet::new(),
                channels: BTreeSet::new(),
                v0: true,
            });
        e.kinds.insert(kind);
        e.channels.extend(channels.iter().cloned());
    };
    for b in bundles {
        if let Some(r) = b.replaces {
            add(r, b, EdgeKind::Replaces, &b.channels);
        }
        for s in &b.skips {
            add(s, b, EdgeKind::Skips, &b.channels);
        }
        if let Some(r) = b.skip_range.and_then(|(t, _)| Range::parse(t).ok()) {
            for o in bundles {
                if o.version.as_ref().is_some_and(|v| r.contains(v)) {
                    add(&o.name, b, EdgeKind::SkipRange, &b.channels);
                }
            }
        }
    }
    if semver_mode {
        let mut by_channel: BTreeMap<&str, Vec<&Facts<'_>>> = BTreeMap::new();
        for b in bundles.iter().filter(|b| b.version.is_some()) {
            for c in &b.channels {
                by_channel.entry(c).or_default().push(b);
            }
        }
        for (c, mut list) in by_channel {
            list.sort_by(|a, b| a.version.cmp(&b.version));
            for w in list.windows(2) {
                add(&w[0].name, w[1], EdgeKind::Replaces, &[c.to_string()]);
            }
        }
    }
    edges.into_values().collect()
}

/// Reads a package directory in the community-operators layout: every `<version>/` bundle
/// directory below it (sorted by path), and whether its `ci.yaml` asks for semver-mode graphs
/// (`updateGraph: semver-mode`).
pub fn load_package(
    pkg: &std::path::Path,
) -> Result<(Vec<crate::bundle::load::BundleDir>, bool), String> {
    use crate::bundle::load::{load_bundle, package_bundle_dirs, str_at};
    let mut dirs = Vec::new();
    for p in package_bundle_dirs(pkg).map_err(|e| e.to_string())? {
        dirs.push(load_bundle(&p).map_err(|e| e.to_string())?);
    }
    if dirs.is_empty() {
        return Err(format!(
            "{}: no bundle directories (<version>/manifests and <version>/metadata) below it",
            pkg.display()
        ));
    }
    // ci.yaml is optional; one that is there but cannot be read or parsed is an error, not
    // a silent "not semver mode".
    let ci = pkg.join("ci.yaml");
    let semver = if std::fs::symlink_metadata(&ci).is_ok() {
        let text = crate::input::tree::Tree::new(pkg)
            .and_then(|t| t.check(&ci))
            .and_then(|()| crate::input::read_text(&ci))
            .map_err(|e| format!("{}: {e}", ci.display()))?;
        let mut docs = Vec::new();
        crate::fbc::yaml::parse_objects(&text, |d| docs.push(d))
            .map_err(|e| format!("{}:{e}", ci.display()))?;
        docs.first().and_then(|d| str_at(d, &["updateGraph"])) == Some("semver-mode")
    } else {
        false
    };
    Ok((dirs, semver))
}

/// The path facts at every bundle: what users arriving at it (and running it) may have.
pub fn histories(
    bundles: &BTreeMap<String, Facts<'_>>,
    edges: &[Edge],
) -> BTreeMap<String, History> {
    let edges: Vec<&Edge> = edges
        .iter()
        .filter(|e| bundles.contains_key(&e.from) && bundles.contains_key(&e.to))
        .collect();
    let own: BTreeMap<&str, History> = bundles
        .iter()
        .map(|(n, f)| (n.as_str(), History::own(f)))
        .collect();
    // Stored versions: union over predecessors, to a fixpoint.
    let mut hist: BTreeMap<&str, History> = own.clone();
    loop {
        let mut changed = false;
        for e in &edges {
            let from = hist[e.from.as_str()].stored.clone();
            if let Some(h) = hist.get_mut(e.to.as_str()) {
                changed |= h.union_stored(&from);
            }
        }
        if !changed {
            break;
        }
    }
    // Deprecation marks: own ∪ ⋂ predecessors; ⊤ (None) until a value flows in.
    type Marks = BTreeSet<(String, String)>;
    let marks = |h: &History| -> Marks {
        h.deprecated
            .iter()
            .flat_map(|(c, vs)| vs.iter().map(move |v| (c.clone(), v.clone())))
            .collect()
    };
    let mut preds: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &edges {
        preds
            .entry(e.to.as_str())
            .or_default()
            .push(e.from.as_str());
    }
    let mut dep: BTreeMap<&str, Option<Marks>> = own
        .iter()
        .map(|(n, h)| {
            (
                *n,
                if preds.contains_key(n) {
                    None
                } else {
                    Some(marks(h))
                },
            )
        })
        .collect();
    loop {
        let mut changed = false;
        for (n, ps) in &preds {
            let mut meet: Option<Marks> = None;
            for p in ps {
                if let Some(Some(m)) = dep.get(p) {
                    meet = Some(match meet {
                        None => m.clone(),
                        Some(acc) => acc.intersection(m).cloned().collect(),
                    });
                }
            }
            let Some(meet) = meet else { continue };
            let mut v = marks(&own[n]);
            v.extend(meet);
            if dep[n].as_ref() != Some(&v) {
                dep.insert(n, Some(v));
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    hist.into_iter()
        .map(|(n, mut h)| {
            let m = dep
                .get(n)
                .cloned()
                .flatten()
                .unwrap_or_else(|| marks(&own[n]));
            h.deprecated.clear();
            for (c, v) in m {
                h.deprecated.entry(c).or_default().insert(v);
            }
            (n.to_string(), h)
        })
        .collect()
}

/// What makes two edge findings the same problem (everything but the edge).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct FindingKey {
    code: &'static str,
    location: Option<crate::diag::Location>,
    path: Option<String>,
    message: String,
    v1_only: bool,
}

impl FindingKey {
    fn of(f: &Finding, v1_only: bool) -> Self {
        FindingKey {
            code: f.code,
            location: f.location.clone(),
            path: f.path.clone(),
            message: f.message.clone(),
            v1_only,
        }
    }
}

/// What checking a package's edges found.
#[derive(Debug, Default)]
pub struct Walked {
    /// Findings, policy applied, sorted.
    pub findings: Vec<Finding>,
    /// Edges checked.
    pub checked: usize,
    /// Edges not checked for want of bundle contents.
    pub unchecked: usize,
    /// Bundles checked on their own.
    pub bundles: usize,
}

impl Walked {
    /// Adds another package's results (findings are re-sorted by the caller).
    pub fn absorb(&mut self, other: Walked) {
        self.findings.extend(other.findings);
        self.checked += other.checked;
        self.unchecked += other.unchecked;
        self.bundles += other.bundles;
    }
}

/// The finding for a catalog check that checked no edge although the catalog has edges to
/// check (`w` summed over every package): without it such a run passes having checked nothing.
/// `given` are the bundles whose contents were given; `package` the one package checked, if any.
pub fn nothing_checked(
    w: &Walked,
    given: &[&str],
    package: Option<&str>,
    opts: &Options,
) -> Vec<Finding> {
    if w.checked > 0 || w.unchecked == 0 {
        return Vec::new();
    }
    let shown: Vec<&str> = given.iter().take(5).copied().collect();
    let more = given.len().saturating_sub(shown.len());
    let given_text = match given.len() {
        0 => "no bundle's contents were given".to_string(),
        n => format!(
            "contents were given for {n} bundle{} ({}{}), no two of them joined by an edge",
            if n == 1 { "" } else { "s" },
            shown.join(", "),
            if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            }
        ),
    };
    let mut f = Finding::new(
        &NOTHING_CHECKED,
        format!(
            "no upgrade edge was checked: each of the {} edges needs a bundle without contents; {given_text}",
            w.unchecked
        ),
    )
    .help("pass --bundles with the bundles at both ends of the edges (a bundle directory, a package directory of <version>/ bundle directories, a directory of such packages, or a map of bundle name to directory or image); the policy's severity for EDGE002 accepts bundles checked on their own");
    if let Some(p) = package {
        f = f.about(Subject::package(p));
    }
    let mut out = vec![f];
    opts.policy.apply(&mut out);
    out
}

/// Checks one package's bundle history (`dirs`, as [`load_package`] reads them): with the edges
/// the catalog's graphs have for the package when they have the package, else with
/// [`history_edges`]. Returns the package name (from the bundles' annotations, else
/// `fallback_name`), the results, and whether catalog edges were used.
pub fn check_history(
    dirs: &[crate::bundle::load::BundleDir],
    semver_mode: bool,
    catalog: Option<&CatalogGraphs<'_>>,
    fallback_name: &str,
    opts: &Options,
) -> (String, Walked, bool) {
    let facts: Vec<Facts<'_>> = dirs.iter().map(Facts::of).collect();
    let name = facts
        .iter()
        .map(|f| f.package.clone())
        .find(|p| !p.is_empty())
        .unwrap_or_else(|| fallback_name.to_string());
    let names: HashSet<&str> = facts.iter().map(|f| f.name.as_str()).collect();
    let from_catalog = catalog.and_then(|graphs| {
        catalog_package_edges(graphs, Some(&name), &|_, b| names.contains(b)).remove(&name)
    });
    let used = from_catalog.is_some();
    let from_csvs = (!used).then(|| history_edges(&facts, semver_mode));
    let by_name: BTreeMap<String, Facts<'_>> =
        facts.into_iter().map(|f| (f.name.clone(), f)).collect();
    let edges = match (from_catalog, from_csvs) {
        (Some(e), _) => e,
        (None, e) => PackageEdges::split(&e.unwrap_or_default(), &by_name),
    };
    let w = check_package_edges(&name, &by_name, &edges, opts);
    (name, w, used)
}

/// Checks every edge of one package whose bundles are in `bundles` (by CSV name), and every
/// bundle on its own.
pub fn check_package(
    package: &str,
    bundles: &BTreeMap<String, Facts<'_>>,
    edges: &[Edge],
    opts: &Options,
) -> Walked {
    check_package_edges(package, bundles, &PackageEdges::split(edges, bundles), opts)
}

/// [`check_package`] over edges already split by [`PackageEdges`].
pub fn check_package_edges(
    package: &str,
    bundles: &BTreeMap<String, Facts<'_>>,
    split: &PackageEdges,
    opts: &Options,
) -> Walked {
    let edges = &split.edges;
    let hist = histories(bundles, edges);
    let mut w = Walked::default();
    // Each bundle's checks ratchet CRV006 against the bundles users come from.
    let mut preds: BTreeMap<&str, Vec<&Facts<'_>>> = BTreeMap::new();
    for e in edges {
        if let (Some(a), true) = (bundles.get(&e.from), bundles.contains_key(&e.to)) {
            preds.entry(e.to.as_str()).or_default().push(a);
        }
    }
    for (name, f) in bundles {
        let before = preds.get(name.as_str()).map_or(&[][..], Vec::as_slice);
        w.findings.extend(check_bundle_after(f, before, opts));
        w.bundles += 1;
    }
    // The same problem reached from several old bundles (skipRange fans in) is one finding
    // naming every edge: (finding, v1 only) -> old bundles.
    let mut grouped: BTreeMap<(String, FindingKey), (Finding, bool, Vec<&str>)> = BTreeMap::new();
    for e in edges {
        let (Some(a), Some(b)) = (bundles.get(&e.from), bundles.get(&e.to)) else {
            continue; // split keeps only edges with both bundles
        };
        w.checked += 1;
        for f in check_edge(a, b, &hist[&e.from], opts) {
            let key = (e.to.clone(), FindingKey::of(&f, !e.v0));
            grouped
                .entry(key)
                .or_insert_with(|| (f, !e.v0, Vec::new()))
                .2
                .push(e.from.as_str());
        }
    }
    for ((to, _), (mut f, v1_only, froms)) in grouped {
        let shown = crate::text::and_more(&froms, 2);
        f.message = format!("{shown} -> {to}: {}", f.message);
        if v1_only {
            f.message
                .push_str(" (OLM v1 only: OLM v0 never lands on this skipped entry)");
        }
        w.findings.push(f);
    }
    w.unchecked = split.unchecked;
    let missing = &split.missing;
    if w.unchecked > 0 {
        let shown: Vec<&str> = missing.iter().map(String::as_str).take(5).collect();
        let more = missing.len().saturating_sub(shown.len());
        w.findings.push(
            Finding::new(
                &UNCHECKED,
                format!(
                    "{} of {} edges not checked: no contents for {} bundle{} ({}{})",
                    w.unchecked,
                    split.total(),
                    missing.len(),
                    if missing.len() == 1 { "" } else { "s" },
                    shown.join(", "),
                    if more > 0 { format!(", and {more} more") } else { String::new() }
                ),
            )
            .about(Subject::package(package))
            .help("pass --bundles with a directory holding the bundles, or a map of bundle name to directory or image"),
        );
    }
    opts.policy.apply(&mut w.findings);
    sort_findings(&mut w.findings);
    w
}
