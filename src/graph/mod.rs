//! Upgrade graphs: one directed graph per package channel, built once and queried many times.
//!
//! Nodes are the channel's entries (with the version and release of their bundle); edges point
//! from the version a user runs to the entry that may replace it (old → new) and are typed by
//! what declares them: `replaces`, `skips`, or `skipRange` (expanded against the versions present
//! in the channel). Edges naming bundles outside the channel are kept aside: they still apply to
//! a user running that bundle (OLM matches by name and version, not by catalog membership).

pub mod path;
pub mod render;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};

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
/// sort lowest.
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
            (Some(r), Some(s)) => match (semver::Prerelease::new(r), semver::Prerelease::new(s)) {
                (Ok(r), Ok(s)) => r.cmp(&s),
                _ => r.cmp(s),
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

/// An edge's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// What declares it.
    pub kind: EdgeKind,
    /// For skipRange edges, the range text.
    pub range: Option<String>,
}

/// One channel's upgrade graph.
#[derive(Debug)]
pub struct ChannelGraph<'a> {
    /// Package name.
    pub package: String,
    /// Channel name.
    pub channel: String,
    /// The channel blob.
    pub source: &'a Channel,
    /// Nodes and edges (old → new).
    pub graph: DiGraph<Entry, Edge>,
    /// Entry name → node.
    pub index: HashMap<String, NodeIndex>,
    /// Parsed skipRange per node (`None` when unset or invalid).
    pub ranges: Vec<Option<Range>>,
    /// The head by opm's rule.
    pub head: Option<NodeIndex>,
    /// OLM v0's channel order (`sortChannel`): from the head along `replaces`, skipped entries
    /// left out. Empty without a single head. A cycle ends the walk.
    pub v0_order: Vec<NodeIndex>,
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
        let nodes: Vec<NodeIndex> = graph.node_indices().collect();
        for &to in &nodes {
            let e = &entries[graph[to].entry];
            if let Some(&from) = index.get(&e.replaces) {
                graph.add_edge(
                    from,
                    to,
                    Edge {
                        kind: EdgeKind::Replaces,
                        range: None,
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
                            range: None,
                        },
                    );
                }
            }
            if let Some(r) = &ranges[to.index()] {
                for &from in &nodes {
                    if from != to
                        && let Some(v) = &graph[from].version
                        && r.contains(v)
                    {
                        graph.add_edge(
                            from,
                            to,
                            Edge {
                                kind: EdgeKind::SkipRange,
                                range: Some(e.skip_range.clone()),
                            },
                        );
                    }
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
            head,
            v0_order,
        }
    }

    /// The channel entry behind node `n`.
    pub fn entry(&self, n: NodeIndex) -> &'a ChannelEntry {
        &self.source.entries[self.graph[n].entry]
    }

    /// The node with `name`.
    /// Marks the entries named in `bundles` (the package's deprecated bundles).
    pub fn mark_deprecated(&mut self, bundles: &HashSet<&str>) {
        for n in self.graph.node_weights_mut() {
            n.deprecated = bundles.contains(n.name.as_str());
        }
    }

    pub fn node(&self, name: &str) -> Option<NodeIndex> {
        self.index.get(name).copied()
    }

    /// Nodes whose version equals `v` (by precedence).
    pub fn nodes_with_version(&self, v: &Version) -> Vec<NodeIndex> {
        self.graph
            .node_indices()
            .filter(|&n| {
                self.graph[n]
                    .version
                    .as_ref()
                    .is_some_and(|x| x.cmp_precedence(v) == Ordering::Equal)
            })
            .collect()
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
            .graph
            .edge_indices()
            .map(|e| {
                let (f, t) = g.graph.edge_endpoints(e).expect("edge");
                (
                    g.graph[f].name.clone(),
                    g.graph[t].name.clone(),
                    g.graph[e].kind,
                )
            })
            .collect();
        edges.sort();
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
