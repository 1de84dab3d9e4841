//! Upgrade graphs: one directed graph per package channel, built once and queried many times.
//!
//! Nodes are the channel's entries (with the version and release of their bundle); edges point
//! from the version a user runs to the entry that may replace it (old → new) and are typed by
//! what declares them: `replaces`, `skips`, or `skipRange` (expanded against the versions present
//! in the channel). Edges naming bundles outside the channel are kept aside: they still apply to
//! a user running that bundle (OLM matches by name and version, not by catalog membership).

pub mod html;
pub mod path;
pub mod render;
mod succ;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::OnceLock;

use petgraph::graph::{DiGraph, NodeIndex};
use semver::Version;
use serde::Serialize;

use crate::fbc::decl::{Channel, ChannelEntry, DeclarativeConfig};
use crate::model::Index;
use crate::model::chain::{Head, heads};
use crate::range::Range;

/// A bundle's version and release, when known.
pub type VersionInfo = (Option<Version>, Option<String>);

/// What declares an upgrade edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EdgeKind {
    /// The successor's `replaces` names the predecessor.
    Replaces,
    /// The successor's `skips` names the predecessor.
    Skips,
    /// The successor's `skipRange` contains the predecessor's version.
    SkipRange,
}

impl EdgeKind {
    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Replaces => "replaces",
            EdgeKind::Skips => "skips",
            EdgeKind::SkipRange => "skipRange",
        }
    }
}

/// A channel entry as a graph node.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Bundle name.
    pub name: String,
    /// The bundle's version, if its `olm.package` property is valid.
    pub version: Option<Version>,
    /// The bundle's release, if any.
    pub release: Option<String>,
    /// Named in another entry's `skips` (OLM v0 never lands on it).
    pub skipped: bool,
    /// Deprecated by the package's `olm.deprecations` (OLM v1 picks it last).
    pub deprecated: bool,
    /// Index into the channel's entries.
    pub entry: usize,
}

/// Compares bundles as operator-registry's `Bundle.Compare`: version by semver precedence, then
/// release (a bundle with a release sorts above the same version without one). Unknown versions
/// sort lowest. A total order, whatever the input.
pub fn compare_versions(
    a: (Option<&Version>, Option<&str>),
    b: (Option<&Version>, Option<&str>),
) -> Ordering {
    match (a.0, b.0) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => x.cmp_precedence(y).then_with(|| match (a.1, b.1) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            // Releases that do not parse (a validation error) sort above those that do, by
            // text among themselves: mixing the two orders would not be a total order.
            (Some(r), Some(s)) => match (semver::Prerelease::new(r), semver::Prerelease::new(s)) {
                (Ok(r), Ok(s)) => r.cmp(&s),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => r.cmp(s),
            },
        }),
    }
}

impl Entry {
    /// This entry's (version, release) for [`compare_versions`].
    pub fn key(&self) -> (Option<&Version>, Option<&str>) {
        (self.version.as_ref(), self.release.as_deref())
    }

    /// The version for display (`?` when unknown).
    pub fn version_str(&self) -> String {
        match (&self.version, &self.release) {
            (Some(v), Some(r)) => format!("{v} (release {r})"),
            (Some(v), None) => v.to_string(),
            (None, _) => "?".into(),
        }
    }
}

/// A next hop: the entry picked and the edge taken.
pub type Hop = (NodeIndex, EdgeKind);

/// An edge's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// What declares it: `replaces` or `skips` (skipRange edges are not stored pairwise, see
    /// [`ChannelGraph::covered`]).
    pub kind: EdgeKind,
}

/// One channel's upgrade graph.
///
/// Edges declared by name (`replaces`, `skips`) are petgraph edges: there are at most as many
/// as the channel's text names. Edges declared by a `skipRange` are not: a range such as
/// `>=0.0.0` on every entry would make them quadratic in the number of entries. Each range is
/// kept as the runs of [`ChannelGraph::by_version`] it contains, and the questions asked of the
/// graph (next hop, paths, lint) are answered from those runs; [`ChannelGraph::edges`]
/// enumerates every pair for the few callers that need each one.
#[derive(Debug)]
pub struct ChannelGraph<'a> {
    /// Package name.
    pub package: String,
    /// Channel name.
    pub channel: String,
    /// The channel blob.
    pub source: &'a Channel,
    /// Nodes and the edges declared by name (old → new).
    pub graph: DiGraph<Entry, Edge>,
    /// Entry name → node.
    pub index: HashMap<String, NodeIndex>,
    /// Parsed skipRange per node (`None` when unset or invalid).
    pub ranges: Vec<Option<Range>>,
    /// The nodes with a known version, ascending by version precedence (build metadata
    /// ignored, as ranges compare), then by name.
    pub by_version: Vec<NodeIndex>,
    /// Each node's position in [`ChannelGraph::by_version`].
    version_pos: Vec<Option<usize>>,
    /// Per node, the runs of [`ChannelGraph::by_version`] its skipRange contains (the node
    /// itself included when the range admits its own version).
    covered: Vec<Vec<std::ops::Range<usize>>>,
    /// The head by opm's rule.
    pub head: Option<NodeIndex>,
    /// OLM v0's channel order (`sortChannel`): from the head along `replaces`, skipped entries
    /// left out. Empty without a single head. A cycle ends the walk.
    pub v0_order: Vec<NodeIndex>,
    /// Next-hop tables (OLM v0, v1), built on first use.
    hops: [OnceLock<Vec<Option<Hop>>>; 2],
    /// Where the path from every node ends (OLM v0, v1), built on first use.
    outcomes: [OnceLock<Vec<path::Outcome>>; 2],
}

impl<'a> ChannelGraph<'a> {
    /// Builds the graph of `channel`, taking versions from `versions` (bundle name → version
    /// and release).
    pub fn build(channel: &'a Channel, versions: &HashMap<&str, VersionInfo>) -> Self {
        let entries = &channel.entries;
        let skipped: HashSet<&str> = entries
            .iter()
            .flat_map(|e| e.skips.iter().map(String::as_str))
            .collect();
        let mut graph = DiGraph::with_capacity(entries.len(), entries.len() * 2);
        let mut index = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            if index.contains_key(&e.name) {
                continue; // duplicate entries are a validation error; the first one counts
            }
            let (version, release) = versions.get(e.name.as_str()).cloned().unwrap_or_default();
            let n = graph.add_node(Entry {
                name: e.name.clone(),
                version,
                release,
                skipped: skipped.contains(e.name.as_str()),
                deprecated: false,
                entry: i,
            });
            index.insert(e.name.clone(), n);
        }
        let ranges: Vec<Option<Range>> = graph
            .node_indices()
            .map(|n| {
                let e = &entries[graph[n].entry];
                (!e.skip_range.is_empty())
                    .then(|| Range::parse(&e.skip_range).ok())
                    .flatten()
            })
            .collect();
        let mut by_version: Vec<NodeIndex> = graph
            .node_indices()
            .filter(|&n| graph[n].version.is_some())
            .collect();
        by_version.sort_by(|&a, &b| {
            let (va, vb) = (&graph[a].version, &graph[b].version);
            let (Some(va), Some(vb)) = (va, vb) else {
                return Ordering::Equal;
            };
            va.cmp_precedence(vb)
                .then_with(|| graph[a].name.cmp(&graph[b].name))
        });
        let mut version_pos = vec![None; graph.node_count()];
        for (i, &n) in by_version.iter().enumerate() {
            version_pos[n.index()] = Some(i);
        }
        let sorted: Vec<&Version> = by_version
            .iter()
            .filter_map(|&n| graph[n].version.as_ref())
            .collect();
        let covered = ranges
            .iter()
            .map(|r| r.as_ref().map(|r| r.runs(&sorted)).unwrap_or_default())
            .collect();
        let nodes: Vec<NodeIndex> = graph.node_indices().collect();
        for &to in &nodes {
            let e = &entries[graph[to].entry];
            if let Some(&from) = index.get(&e.replaces) {
                graph.add_edge(
                    from,
                    to,
                    Edge {
                        kind: EdgeKind::Replaces,
                    },
                );
            }
            for s in &e.skips {
                if let Some(&from) = index.get(s) {
                    graph.add_edge(
                        from,
                        to,
                        Edge {
                            kind: EdgeKind::Skips,
                        },
                    );
                }
            }
        }
        let head = match heads(entries) {
            Head::One(h) => index.get(h).copied(),
            _ => None,
        };
        let mut v0_order = Vec::new();
        if let Some(h) = head {
            let mut seen = HashSet::new();
            let mut cur = h;
            while seen.insert(cur) {
                if !graph[cur].skipped {
                    v0_order.push(cur);
                }
                match index.get(&entries[graph[cur].entry].replaces) {
                    Some(&next) => cur = next,
                    None => break,
                }
            }
        }
        ChannelGraph {
            package: channel.package.clone(),
            channel: channel.name.clone(),
            source: channel,
            graph,
            index,
            ranges,
            by_version,
            version_pos,
            covered,
            head,
            v0_order,
            hops: Default::default(),
            outcomes: Default::default(),
        }
    }

    /// The channel entry behind node `n`.
    pub fn entry(&self, n: NodeIndex) -> &'a ChannelEntry {
        &self.source.entries[self.graph[n].entry]
    }

    /// Marks the entries named in `bundles` (the package's deprecated bundles).
    pub fn mark_deprecated(&mut self, bundles: &HashSet<&str>) {
        for n in self.graph.node_weights_mut() {
            n.deprecated = bundles.contains(n.name.as_str());
        }
        // OLM v1 picks deprecated bundles last: its tables depend on the marks.
        self.hops[1] = OnceLock::new();
        self.outcomes[1] = OnceLock::new();
    }

    /// The node with `name`.
    pub fn node(&self, name: &str) -> Option<NodeIndex> {
        self.index.get(name).copied()
    }

    /// The node `installed` is, when it is an entry of this channel with the same version and
    /// release (what [`Installed::of`] gives).
    pub fn node_of(&self, installed: &Installed) -> Option<NodeIndex> {
        let n = self.node(installed.name.as_deref()?)?;
        let e = &self.graph[n];
        (e.version == installed.version && e.release == installed.release).then_some(n)
    }

    /// Nodes whose version equals `v` (by precedence).
    pub fn nodes_with_version(&self, v: &Version) -> Vec<NodeIndex> {
        let key = |n: &NodeIndex| self.graph[*n].version.as_ref();
        let lo = self
            .by_version
            .partition_point(|n| key(n).is_some_and(|x| x.cmp_precedence(v).is_lt()));
        let hi = self
            .by_version
            .partition_point(|n| key(n).is_some_and(|x| x.cmp_precedence(v).is_le()));
        let mut out = self.by_version[lo..hi].to_vec();
        out.sort();
        out
    }

    /// The runs of [`ChannelGraph::by_version`] that `to`'s skipRange contains.
    pub fn covered(&self, to: NodeIndex) -> &[std::ops::Range<usize>] {
        &self.covered[to.index()]
    }

    /// Whether `to`'s skipRange contains the version of `from` (another entry).
    pub fn covers(&self, to: NodeIndex, from: NodeIndex) -> bool {
        let Some(p) = self.version_pos[from.index()] else {
            return false;
        };
        let runs = &self.covered[to.index()];
        let i = runs.partition_point(|r| r.end <= p);
        from != to && runs.get(i).is_some_and(|r| r.start <= p)
    }

    /// The entries `to`'s skipRange contains (`to` itself left out), ascending by version.
    pub fn range_sources(&self, to: NodeIndex) -> impl Iterator<Item = NodeIndex> + '_ {
        self.covered[to.index()]
            .iter()
            .flat_map(|r| self.by_version[r.clone()].iter().copied())
            .filter(move |&n| n != to)
    }

    /// How `to` may replace a user running entry `from`: the strongest edge between them
    /// (`replaces` over `skips` over `skipRange`).
    pub fn edge_kind(&self, from: NodeIndex, to: NodeIndex) -> Option<EdgeKind> {
        let named = self
            .graph
            .edges_connecting(from, to)
            .map(|e| e.weight().kind)
            .min();
        named.or_else(|| self.covers(to, from).then_some(EdgeKind::SkipRange))
    }

    /// Whether an edge of `kind` leads from `from` to `to`.
    pub fn has_edge(&self, from: NodeIndex, to: NodeIndex, kind: EdgeKind) -> bool {
        match kind {
            EdgeKind::SkipRange => self.covers(to, from),
            _ => self
                .graph
                .edges_connecting(from, to)
                .any(|e| e.weight().kind == kind),
        }
    }

    /// Every edge, skipRange edges one per pair, sorted by (from, to, kind) node index. Its
    /// length can be quadratic in the number of entries: use it only where each edge is needed
    /// on its own (upgrade-safety checks compare the two bundles of every edge).
    pub fn edges(&self) -> Vec<(NodeIndex, NodeIndex, EdgeKind)> {
        let mut out: Vec<(NodeIndex, NodeIndex, EdgeKind)> = self
            .graph
            .edge_indices()
            .filter_map(|e| {
                let (a, b) = self.graph.edge_endpoints(e)?;
                Some((a, b, self.graph[e].kind))
            })
            .collect();
        for to in self.graph.node_indices() {
            out.extend(
                self.range_sources(to)
                    .map(|from| (from, to, EdgeKind::SkipRange)),
            );
        }
        out.sort();
        out
    }

    /// Every entry with an edge from `from` (named or by skipRange), sorted, once each;
    /// `O(entries)`.
    pub fn successors(&self, from: NodeIndex) -> Vec<NodeIndex> {
        let mut out: Vec<NodeIndex> = self
            .graph
            .neighbors(from)
            .chain(
                self.graph
                    .node_indices()
                    .filter(|&to| self.covers(to, from)),
            )
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The number of skipRange pairs, without enumerating them.
    pub fn range_edge_count(&self) -> usize {
        self.graph
            .node_indices()
            .map(|to| {
                let n: usize = self.covered[to.index()].iter().map(|r| r.len()).sum();
                n - usize::from(self.covers_itself(to))
            })
            .sum()
    }

    /// Whether `n`'s skipRange admits its own version.
    fn covers_itself(&self, n: NodeIndex) -> bool {
        let Some(p) = self.version_pos[n.index()] else {
            return false;
        };
        self.covered[n.index()]
            .iter()
            .any(|r| r.start <= p && p < r.end)
    }

    /// The entry OLM picks next for a user running entry `n`, with the edge it takes (see
    /// [`path::next_hop`]): from a table built once per channel and semantics in near-linear
    /// time.
    pub fn next(&self, n: NodeIndex, sem: path::Semantics) -> Option<(NodeIndex, EdgeKind)> {
        let i = sem as usize;
        self.hops[i].get_or_init(|| succ::table(self, sem))[n.index()]
    }

    /// Where the path from every entry ends under `sem` (see [`path::outcomes`]).
    pub(crate) fn outcome_cache(&self, sem: path::Semantics) -> &OnceLock<Vec<path::Outcome>> {
        &self.outcomes[sem as usize]
    }

    /// How entry `n` may replace a user running `installed`, if it may: the strongest edge kind
    /// (`replaces` over `skips` over `skipRange`). This is the successor predicate OLM v0 and v1
    /// share; it works for installed bundles that are not in the catalog.
    pub fn successor_edge(&self, n: NodeIndex, installed: &Installed) -> Option<EdgeKind> {
        let e = self.entry(n);
        if let Some(name) = &installed.name {
            if e.name == *name {
                return None;
            }
            if e.replaces == *name {
                return Some(EdgeKind::Replaces);
            }
            if e.skips.iter().any(|s| s == name) {
                return Some(EdgeKind::Skips);
            }
        }
        if let (Some(v), Some(r)) = (&installed.version, &self.ranges[n.index()])
            && r.contains(v)
        {
            return Some(EdgeKind::SkipRange);
        }
        None
    }
}

/// What a user runs: a bundle name and/or version (either may be unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// CSV name.
    pub name: Option<String>,
    /// Version.
    pub version: Option<Version>,
    /// Release.
    pub release: Option<String>,
}

impl Installed {
    /// The installed bundle as node `n` of `g`.
    pub fn of(g: &ChannelGraph<'_>, n: NodeIndex) -> Self {
        let e = &g.graph[n];
        Installed {
            name: Some(e.name.clone()),
            version: e.version.clone(),
            release: e.release.clone(),
        }
    }
}

/// Every channel graph of a catalog, by package then channel (both sorted).
pub struct CatalogGraphs<'a> {
    /// Package → channel → graph.
    pub packages: BTreeMap<String, BTreeMap<String, ChannelGraph<'a>>>,
    /// Package → default channel.
    pub default_channels: BTreeMap<String, String>,
}

/// Bundle versions of one package: name → (version, release).
pub fn package_versions<'a>(view: &crate::model::PackageView<'a>) -> HashMap<&'a str, VersionInfo> {
    view.bundles
        .iter()
        .map(|(name, bs)| {
            let v = bs[0]
                .properties
                .iter()
                .find_map(|p| p.as_package())
                .map(|(_, v, r)| (Version::parse(v).ok(), r.map(str::to_string)))
                .unwrap_or_default();
            (*name, v)
        })
        .collect()
}

impl<'a> CatalogGraphs<'a> {
    /// Builds the graphs of every channel of `cfg` (optionally one package).
    pub fn build(cfg: &'a DeclarativeConfig, only_package: Option<&str>) -> Self {
        let idx = Index::new(cfg);
        let mut packages = BTreeMap::new();
        let mut default_channels = BTreeMap::new();
        for (name, view) in &idx.packages {
            if only_package.is_some_and(|p| p != *name) {
                continue;
            }
            if let Some(p) = view.package() {
                default_channels.insert(name.to_string(), p.default_channel.clone());
            }
            let versions = package_versions(view);
            let deprecated: HashSet<&str> = view
                .deprecations
                .iter()
                .flat_map(|d| &d.entries)
                .filter(|e| e.reference.schema == "olm.bundle")
                .map(|e| e.reference.name.as_str())
                .collect();
            let channels = view
                .channels
                .iter()
                .map(|(c, blobs)| {
                    let mut g = ChannelGraph::build(blobs[0], &versions);
                    g.mark_deprecated(&deprecated);
                    (c.to_string(), g)
                })
                .collect();
            packages.insert(name.to_string(), channels);
        }
        CatalogGraphs {
            packages,
            default_channels,
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Small channel builders for graph tests.
    use super::*;
    use crate::fbc::decl::{Channel, ChannelEntry, Src};
    use crate::fbc::node::Pos;

    /// `(name, version, replaces, skips, skipRange)` rows.
    pub type Row<'a> = (&'a str, &'a str, &'a str, &'a [&'a str], &'a str);

    /// A channel and its version map from rows.
    pub fn channel(rows: &[Row<'_>]) -> (Channel, HashMap<String, VersionInfo>) {
        let entries = rows
            .iter()
            .map(|(n, _, r, s, sr)| ChannelEntry {
                name: n.to_string(),
                replaces: r.to_string(),
                skips: s.iter().map(|x| x.to_string()).collect(),
                skip_range: sr.to_string(),
                pos: Pos::default(),
                skip_range_pos: Pos::default(),
            })
            .collect();
        let versions = rows
            .iter()
            .map(|(n, v, ..)| (n.to_string(), (Version::parse(v).ok(), None)))
            .collect();
        let ch = Channel {
            package: "p".into(),
            name: "stable".into(),
            entries,
            properties: Vec::new(),
            src: Src {
                file: std::sync::Arc::from(std::path::Path::new("t.yaml")),
                pos: Pos::default(),
            },
        };
        (ch, versions)
    }

    /// Borrowed view of a version map for [`ChannelGraph::build`].
    pub fn borrow(m: &HashMap<String, VersionInfo>) -> HashMap<&str, VersionInfo> {
        m.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    #[test]
    fn edges_are_typed_and_skip_ranges_expanded() {
        let (ch, v) = channel(&[
            ("a", "1.0.0", "", &[], ""),
            ("b", "1.1.0", "a", &[], ""),
            ("c", "1.2.0", "b", &["a"], ">=1.0.0 <1.2.0"),
        ]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        let mut edges: Vec<(String, String, EdgeKind)> = g
            .edges()
            .into_iter()
            .map(|(f, t, k)| (g.graph[f].name.clone(), g.graph[t].name.clone(), k))
            .collect();
        edges.sort();
        // Only the named edges are petgraph edges; the range is two runs-worth of pairs.
        assert_eq!(g.graph.edge_count(), 3);
        assert_eq!(g.range_edge_count(), 2);
        let (a, c) = (g.node("a").expect("a"), g.node("c").expect("c"));
        assert_eq!(g.edge_kind(a, c), Some(EdgeKind::Skips));
        assert!(g.has_edge(a, c, EdgeKind::SkipRange));
        assert!(!g.has_edge(c, c, EdgeKind::SkipRange));
        assert_eq!(
            edges,
            vec![
                ("a".into(), "b".into(), EdgeKind::Replaces),
                ("a".into(), "c".into(), EdgeKind::Skips),
                ("a".into(), "c".into(), EdgeKind::SkipRange),
                ("b".into(), "c".into(), EdgeKind::Replaces),
                ("b".into(), "c".into(), EdgeKind::SkipRange),
            ]
        );
        assert_eq!(g.head, g.node("c"));
        // a is skipped: v0 drops it from the order.
        let order: Vec<&str> = g
            .v0_order
            .iter()
            .map(|&n| g.graph[n].name.as_str())
            .collect();
        assert_eq!(order, vec!["c", "b"]);
    }

    #[test]
    fn release_orders_above_plain_version() {
        let v = Version::parse("1.0.0").expect("v");
        assert_eq!(
            compare_versions((Some(&v), Some("1")), (Some(&v), None)),
            Ordering::Greater
        );
        assert_eq!(
            compare_versions((Some(&v), Some("2")), (Some(&v), Some("10"))),
            Ordering::Less
        );
        let pre = Version::parse("1.0.0-rc.1").expect("v");
        assert_eq!(
            compare_versions((Some(&pre), None), (Some(&v), None)),
            Ordering::Less
        );
    }
}
