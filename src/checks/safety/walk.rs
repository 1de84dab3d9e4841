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

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::crdver::History;
use super::facts::Facts;
use super::{Options, check_bundle, check_edge};
use crate::diag::Severity::Info;
use crate::diag::{Finding, Subject, sort_findings};
use crate::fbc::decl::DeclarativeConfig;
use crate::graph::{CatalogGraphs, EdgeKind};
use crate::range::Range;

codes! {
    UNCHECKED = "EDGE001", Info, "Upgrade edges of a package were not checked: the contents of some of their bundles were not given (--bundles).";
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

/// Every edge of every channel of `cfg`, by package, sorted by (from, to).
pub fn catalog_edges(cfg: &DeclarativeConfig) -> BTreeMap<String, Vec<Edge>> {
    let graphs = CatalogGraphs::build(cfg, None);
    let mut out = BTreeMap::new();
    for (pkg, channels) in &graphs.packages {
        let mut edges: BTreeMap<(String, String), Edge> = BTreeMap::new();
        for (ch, g) in channels {
            for e in g.graph.edge_indices() {
                let Some((a, b)) = g.graph.edge_endpoints(e) else {
                    continue;
                };
                let (from, to) = (g.graph[a].name.clone(), g.graph[b].name.clone());
                let entry = edges
                    .entry((from.clone(), to.clone()))
                    .or_insert_with(|| Edge {
                        from,
                        to,
                        kinds: BTreeSet::new(),
                        channels: BTreeSet::new(),
                        v0: false,
                    });
                entry.kinds.insert(g.graph[e].kind);
                entry.channels.insert(ch.clone());
                entry.v0 |= !g.graph[b].skipped;
            }
        }
        out.insert(pkg.clone(), edges.into_values().collect());
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
    use crate::bundle::load::{bundle_root, load_bundle, str_at};
    let rd = std::fs::read_dir(pkg).map_err(|e| format!("{}: {e}", pkg.display()))?;
    let mut paths: Vec<std::path::PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut dirs = Vec::new();
    for p in paths.iter().filter(|p| bundle_root(p).is_some()) {
        dirs.push(load_bundle(p).map_err(|e| e.to_string())?);
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
        let text = crate::input::read_text(&ci).map_err(|e| format!("{}: {e}", ci.display()))?;
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

/// Checks one package's bundle history (`dirs`, as [`load_package`] reads them): with the edges
/// `catalog` has for the package (taken out of the map), else with [`history_edges`]. Returns the
/// package name (from the bundles' annotations, else `fallback_name`), the results, and whether
/// catalog edges were used.
pub fn check_history(
    dirs: &[crate::bundle::load::BundleDir],
    semver_mode: bool,
    catalog: &mut BTreeMap<String, Vec<Edge>>,
    fallback_name: &str,
    opts: &Options,
) -> (String, Walked, bool) {
    let facts: Vec<Facts<'_>> = dirs.iter().map(Facts::of).collect();
    let name = facts
        .iter()
        .map(|f| f.package.clone())
        .find(|p| !p.is_empty())
        .unwrap_or_else(|| fallback_name.to_string());
    let (edges, from_catalog) = match catalog.remove(&name) {
        Some(e) => (e, true),
        None => (history_edges(&facts, semver_mode), false),
    };
    let by_name: BTreeMap<String, Facts<'_>> =
        facts.into_iter().map(|f| (f.name.clone(), f)).collect();
    let w = check_package(&name, &by_name, &edges, opts);
    (name, w, from_catalog)
}

/// Checks every edge of one package whose bundles are in `bundles` (by CSV name), and every
/// bundle on its own.
pub fn check_package(
    package: &str,
    bundles: &BTreeMap<String, Facts<'_>>,
    edges: &[Edge],
    opts: &Options,
) -> Walked {
    let hist = histories(bundles, edges);
    let mut w = Walked::default();
    for f in bundles.values() {
        w.findings.extend(check_bundle(f, opts));
        w.bundles += 1;
    }
    let mut missing: BTreeSet<&str> = BTreeSet::new();
    // The same problem reached from several old bundles (skipRange fans in) is one finding
    // naming every edge: (finding, v1 only) -> old bundles.
    let mut grouped: BTreeMap<(String, FindingKey), (Finding, bool, Vec<&str>)> = BTreeMap::new();
    for e in edges {
        let (Some(a), Some(b)) = (bundles.get(&e.from), bundles.get(&e.to)) else {
            w.unchecked += 1;
            missing.extend(
                [&e.from, &e.to]
                    .into_iter()
                    .filter(|n| !bundles.contains_key(*n))
                    .map(String::as_str),
            );
            continue;
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
        let shown = if froms.len() <= 4 {
            froms.join(", ")
        } else {
            format!("{} and {} more", froms[..3].join(", "), froms.len() - 3)
        };
        f.message = format!("{shown} -> {to}: {}", f.message);
        if v1_only {
            f.message
                .push_str(" (OLM v1 only: OLM v0 never lands on this skipped entry)");
        }
        w.findings.push(f);
    }
    if w.unchecked > 0 {
        let shown: Vec<&str> = missing.iter().copied().take(5).collect();
        let more = missing.len().saturating_sub(shown.len());
        w.findings.push(
            Finding::new(
                &UNCHECKED,
                format!(
                    "{} of {} edges not checked: no contents for {} bundle{} ({}{})",
                    w.unchecked,
                    edges.len(),
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
