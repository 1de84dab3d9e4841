//! `olmctl catalog diff OLD NEW`: what a catalog pull request changes, per package, in the terms
//! a reviewer asks about: versions added and removed, bundles whose content changed, channels,
//! upgrade edges (replaces, skips, and the entries a skipRange covers), head moves, the default
//! channel, and deprecations. Everything is sorted, so the same pair gives the same report.
//!
//! - [`render`]: text, JSON and Markdown (a pull-request comment).

pub mod render;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::fbc::decl::{Bundle, DeclarativeConfig};
use crate::graph::{CatalogGraphs, ChannelGraph};
use crate::model::{Index, PackageView};

/// A bundle named with its version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct BundleRef {
    /// The bundle (CSV) name.
    pub name: String,
    /// Its `olm.package` version.
    pub version: String,
}

/// A bundle present on both sides whose content differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundleChange {
    /// The bundle name.
    pub name: String,
    /// What differs: `image`, `relatedImages`, or a property type (e.g. `olm.csv.metadata`).
    pub changed: Vec<String>,
}

/// An upgrade edge: users of `from` may move to `to`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    /// The entry upgraded from.
    pub from: String,
    /// The entry upgraded to.
    pub to: String,
    /// `replaces`, `skips` or `skipRange`.
    pub kind: &'static str,
    /// The skipRange of `to`, for a `skipRange` edge (one edge per entry it covers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
}

/// A change of one value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Moved {
    /// Before.
    pub old: String,
    /// After.
    pub new: String,
}

/// What changed in a channel present on both sides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChannelDiff {
    /// The channel.
    pub name: String,
    /// The head moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<Moved>,
    /// Entries added.
    pub entries_added: Vec<String>,
    /// Entries removed.
    pub entries_removed: Vec<String>,
    /// Edges added.
    pub edges_added: Vec<Edge>,
    /// Edges removed.
    pub edges_removed: Vec<Edge>,
}

/// A channel only one side has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChannelRef {
    /// The channel.
    pub name: String,
    /// Its head (empty when it has none or several).
    pub head: String,
    /// How many entries it has.
    pub entries: usize,
}

/// A deprecation entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Deprecation {
    /// `olm.package`, `olm.channel` or `olm.bundle`.
    pub schema: String,
    /// The channel or bundle (empty for the package).
    pub name: String,
    /// The message.
    pub message: String,
}

/// Whether a package is new, gone, or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Only in NEW.
    Added,
    /// Only in OLD.
    Removed,
    /// In both, different.
    Changed,
}

/// What changed in one package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageDiff {
    /// The package.
    pub name: String,
    /// Added, removed or changed.
    pub status: Status,
    /// The default channel moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_channel: Option<Moved>,
    /// Bundles only in NEW.
    pub bundles_added: Vec<BundleRef>,
    /// Bundles only in OLD.
    pub bundles_removed: Vec<BundleRef>,
    /// Bundles in both with different content.
    pub bundles_changed: Vec<BundleChange>,
    /// Channels only in NEW.
    pub channels_added: Vec<ChannelRef>,
    /// Channels only in OLD.
    pub channels_removed: Vec<ChannelRef>,
    /// Channels in both that changed.
    pub channels: Vec<ChannelDiff>,
    /// Deprecations only in NEW.
    pub deprecations_added: Vec<Deprecation>,
    /// Deprecations only in OLD.
    pub deprecations_removed: Vec<Deprecation>,
}

impl PackageDiff {
    fn is_empty(&self) -> bool {
        self.default_channel.is_none()
            && self.bundles_added.is_empty()
            && self.bundles_removed.is_empty()
            && self.bundles_changed.is_empty()
            && self.channels_added.is_empty()
            && self.channels_removed.is_empty()
            && self.channels.is_empty()
            && self.deprecations_added.is_empty()
            && self.deprecations_removed.is_empty()
    }
}

/// The difference between two catalogs: the packages that differ, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CatalogDiff {
    /// Changed, added and removed packages.
    pub packages: Vec<PackageDiff>,
}

impl CatalogDiff {
    /// Whether the catalogs are the same in every respect the diff looks at.
    pub fn is_empty(&self) -> bool {
        self.packages.is_empty()
    }
}

fn version_of(b: &Bundle) -> String {
    b.properties
        .iter()
        .find_map(|p| p.as_package())
        .map(|(_, v, _)| v.to_string())
        .unwrap_or_default()
}

fn bundles<'a>(view: Option<&PackageView<'a>>) -> BTreeMap<&'a str, &'a Bundle> {
    view.map(|v| v.bundles.iter().map(|(n, bs)| (*n, bs[0])).collect())
        .unwrap_or_default()
}

/// What differs between two versions of a bundle.
fn bundle_changes(old: &Bundle, new: &Bundle) -> Vec<String> {
    let mut out = Vec::new();
    if old.image != new.image {
        out.push("image".to_string());
    }
    let images = |b: &Bundle| -> Vec<(String, String)> {
        b.related_images
            .iter()
            .map(|r| (r.name.clone(), r.image.clone()))
            .collect()
    };
    if images(old) != images(new) {
        out.push("relatedImages".to_string());
    }
    let props = |b: &Bundle| -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for p in &b.properties {
            m.entry(p.type_.clone())
                .or_default()
                .push(p.value.to_json());
        }
        m
    };
    let (po, pn) = (props(old), props(new));
    let types: BTreeSet<&String> = po.keys().chain(pn.keys()).collect();
    for t in types {
        if po.get(t) != pn.get(t) {
            out.push(t.clone());
        }
    }
    out
}

/// The head of a channel (empty unless it has exactly one).
pub fn head(g: &ChannelGraph<'_>) -> String {
    g.head.map(|h| g.graph[h].name.clone()).unwrap_or_default()
}

/// The upgrade edges of a channel: `replaces` and `skips` as its entries name them, and one
/// edge per entry a skipRange covers (the graph's coverage, as paths and lint read it).
pub fn edges(g: &ChannelGraph<'_>) -> BTreeSet<Edge> {
    let mut out = BTreeSet::new();
    for e in &g.source.entries {
        if !e.replaces.is_empty() {
            out.insert(Edge {
                from: e.replaces.clone(),
                to: e.name.clone(),
                kind: "replaces",
                range: None,
            });
        }
        for s in &e.skips {
            out.insert(Edge {
                from: s.clone(),
                to: e.name.clone(),
                kind: "skips",
                range: None,
            });
        }
    }
    for n in g.graph.node_indices() {
        if g.ranges[n.index()].is_none() {
            continue;
        }
        for m in g.range_sources(n) {
            out.insert(Edge {
                from: g.graph[m].name.clone(),
                to: g.graph[n].name.clone(),
                kind: "skipRange",
                range: Some(g.entry(n).skip_range.clone()),
            });
        }
    }
    out
}

fn deprecations(view: Option<&PackageView<'_>>) -> BTreeSet<Deprecation> {
    view.map(|v| {
        v.deprecations
            .iter()
            .flat_map(|d| &d.entries)
            .map(|e| Deprecation {
                schema: e.reference.schema.clone(),
                name: e.reference.name.clone(),
                message: e.message.clone(),
            })
            .collect()
    })
    .unwrap_or_default()
}

fn minus<T: Ord + Clone>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> Vec<T> {
    a.difference(b).cloned().collect()
}

fn channel_ref(name: &str, g: &ChannelGraph<'_>) -> ChannelRef {
    ChannelRef {
        name: name.to_string(),
        head: head(g),
        entries: g.source.entries.len(),
    }
}

/// A package's channel graphs.
type Channels<'g, 'a> = Option<&'g BTreeMap<String, ChannelGraph<'a>>>;

fn package(
    name: &str,
    (old, new): (Option<&PackageView<'_>>, Option<&PackageView<'_>>),
    (oc, nc): (Channels<'_, '_>, Channels<'_, '_>),
) -> PackageDiff {
    let status = match (old, new) {
        (None, _) => Status::Added,
        (_, None) => Status::Removed,
        _ => Status::Changed,
    };
    let default = |v: Option<&PackageView<'_>>| {
        v.and_then(|v| v.package())
            .map(|p| p.default_channel.clone())
    };
    let default_channel = match (default(old), default(new)) {
        (Some(o), Some(n)) if o != n => Some(Moved { old: o, new: n }),
        _ => None,
    };
    let (ob, nb) = (bundles(old), bundles(new));
    let r = |b: &Bundle| BundleRef {
        name: b.name.clone(),
        version: version_of(b),
    };
    let bundles_added = nb
        .iter()
        .filter(|(n, _)| !ob.contains_key(*n))
        .map(|(_, b)| r(b))
        .collect();
    let bundles_removed = ob
        .iter()
        .filter(|(n, _)| !nb.contains_key(*n))
        .map(|(_, b)| r(b))
        .collect();
    let bundles_changed = ob
        .iter()
        .filter_map(|(n, o)| {
            let changed = bundle_changes(o, nb.get(n)?);
            (!changed.is_empty()).then(|| BundleChange {
                name: n.to_string(),
                changed,
            })
        })
        .collect();
    let none = BTreeMap::new();
    let (oc, nc) = (oc.unwrap_or(&none), nc.unwrap_or(&none));
    let channels_added = nc
        .iter()
        .filter(|(n, _)| !oc.contains_key(*n))
        .map(|(n, c)| channel_ref(n, c))
        .collect();
    let channels_removed = oc
        .iter()
        .filter(|(n, _)| !nc.contains_key(*n))
        .map(|(n, c)| channel_ref(n, c))
        .collect();
    let mut chans = Vec::new();
    for (n, o) in oc {
        let Some(c) = nc.get(n) else {
            continue;
        };
        let names = |g: &ChannelGraph<'_>| -> BTreeSet<String> {
            g.source.entries.iter().map(|e| e.name.clone()).collect()
        };
        let (oe, ne) = (names(o), names(c));
        let (oedges, nedges) = (edges(o), edges(c));
        let (oh, nh) = (head(o), head(c));
        let d = ChannelDiff {
            name: n.to_string(),
            head: (oh != nh).then_some(Moved { old: oh, new: nh }),
            entries_added: minus(&ne, &oe),
            entries_removed: minus(&oe, &ne),
            edges_added: minus(&nedges, &oedges),
            edges_removed: minus(&oedges, &nedges),
        };
        if d != (ChannelDiff {
            name: n.to_string(),
            ..ChannelDiff::default()
        }) {
            chans.push(d);
        }
    }
    let (od, nd) = (deprecations(old), deprecations(new));
    PackageDiff {
        name: name.to_string(),
        status,
        default_channel,
        bundles_added,
        bundles_removed,
        bundles_changed,
        channels_added,
        channels_removed,
        channels: chans,
        deprecations_added: minus(&nd, &od),
        deprecations_removed: minus(&od, &nd),
    }
}

/// Compares two catalogs, given their channel graphs ([`CatalogGraphs::build`] of each, which
/// `check-upgrades` and the HTML page use too).
pub fn diff(
    old: &DeclarativeConfig,
    new: &DeclarativeConfig,
    og: &CatalogGraphs<'_>,
    ng: &CatalogGraphs<'_>,
) -> CatalogDiff {
    let (oi, ni) = (Index::new(old), Index::new(new));
    let names: BTreeSet<&str> = oi
        .packages
        .keys()
        .chain(ni.packages.keys())
        .copied()
        .collect();
    let packages = names
        .into_iter()
        .map(|n| {
            package(
                n,
                (oi.packages.get(n), ni.packages.get(n)),
                (og.packages.get(n), ng.packages.get(n)),
            )
        })
        .filter(|p| p.status != Status::Changed || !p.is_empty())
        .collect();
    CatalogDiff { packages }
}
