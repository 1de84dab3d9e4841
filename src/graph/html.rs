//! `catalog graph --format html`: one self-contained page (scripts, styles and data inline; a
//! Content-Security-Policy that forbids any fetch) that draws each channel's upgrade graph with
//! versions laid out by semver, lets a reader pick a package, search, and click a version to see
//! its properties and the OLM v0 and v1 paths from it to the head.
//!
//! A package opens on its overview: every version of the package (`Package::versions`, newest
//! first) a row, every channel a lane, each channel's edges in its lane and the edges from
//! bundles of other channels (`Channel::outside`) across lanes (see `drawOverview` in
//! `report.js`). One channel alone is an arc diagram: entries newest first down a column,
//! `replaces` arcs on the right, `skips` arcs on the left, and each skipRange as a bracket
//! beside the entries it covers, so a package of a hundred versions stays legible. The script
//! is `report.js`, the styles `report.css`; no library.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::path::{Semantics, Stop, resolve};
use super::render::named_edges;
use super::{
    CatalogGraphs, ChannelGraph, EdgeKind, Installed, VersionInfo, compare_versions,
    package_versions,
};
use crate::fbc::decl::DeclarativeConfig;
use crate::model::PackageView;

/// Property values longer than this are cut in the page (the full catalog is in the files).
pub const VALUE_CHARS: usize = 400;

/// How a part compares with the old catalog, in a diff page (absent elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    /// Only in the new catalog.
    Added,
    /// Only in the old one.
    Removed,
}

fn status(in_old: bool, in_new: bool, diff: bool) -> Option<Status> {
    match (diff, in_old, in_new) {
        (true, false, true) => Some(Status::Added),
        (true, true, false) => Some(Status::Removed),
        _ => None,
    }
}

#[derive(Serialize)]
struct Node {
    name: String,
    version: Option<String>,
    skipped: bool,
    deprecated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

#[derive(Serialize)]
struct Edge {
    from: String,
    to: String,
    kind: EdgeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

#[derive(Serialize)]
struct Range {
    /// Index (in `nodes`) of the entry with the skipRange.
    to: usize,
    range: String,
    /// Inclusive runs of `nodes` positions it covers.
    runs: Vec<(usize, usize)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

#[derive(Serialize)]
struct Path {
    /// The entries passed through, first the start.
    hops: Vec<String>,
    /// `head`, `noUpgrade` or `loop`.
    stop: Stop,
}

#[derive(Serialize)]
struct Channel {
    name: String,
    head: Option<String>,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    ranges: Vec<Range>,
    /// Edges whose older end is not an entry of this channel (a `replaces` or `skips` naming a
    /// bundle of another channel, or none): the overview draws them across lanes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    outside: Vec<Edge>,
    /// The channel's `olm.deprecations` message, when it is deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated: Option<String>,
    /// Per entry: the paths under OLM v0 and v1 (in the new catalog when both have it).
    paths: BTreeMap<String, [Path; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

#[derive(Serialize)]
struct Bundle {
    image: String,
    properties: Vec<(String, String)>,
    /// The bundle's `olm.deprecations` message, when it is deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated: Option<String>,
}

#[derive(Serialize)]
struct Package {
    name: String,
    #[serde(rename = "defaultChannel")]
    default_channel: Option<String>,
    channels: Vec<Channel>,
    bundles: BTreeMap<String, Bundle>,
    /// Every version of the package (channel entries and bundles), newest first by semver: the
    /// rows of the overview. Each is (name, version).
    versions: Vec<(String, Option<String>)>,
    /// The package's `olm.deprecations` message, when it is deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated: Option<String>,
    /// In a diff page: what changed, one line each (empty when nothing did).
    changes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

#[derive(Serialize)]
struct Doc<'a> {
    title: &'a str,
    diff: bool,
    packages: Vec<Package>,
}

fn cut(s: String) -> String {
    if s.chars().count() <= VALUE_CHARS {
        return s;
    }
    let mut t: String = s.chars().take(VALUE_CHARS).collect();
    t.push('…');
    t
}

/// Inclusive runs of consecutive positions.
fn runs(mut positions: Vec<usize>) -> Vec<(usize, usize)> {
    positions.sort_unstable();
    positions.dedup();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for p in positions {
        match out.last_mut() {
            Some((_, b)) if *b + 1 == p => *b = p,
            _ => out.push((p, p)),
        }
    }
    out
}

type Graph<'g, 'a> = &'g ChannelGraph<'a>;

/// A skipRange as drawn: the entry's position, the range, the runs it covers.
type RangeKey = (usize, String, Vec<(usize, usize)>);

/// One channel drawn from the new catalog's graph, the old one's, or both (a diff: entries,
/// edges and ranges of either side, marked by where they are).
fn channel(old: Option<Graph<'_, '_>>, new: Option<Graph<'_, '_>>, diff: bool) -> Option<Channel> {
    let main = new.or(old)?;
    // Entries of both sides, the new side's marks first, newest first by semver.
    let mut entries: Vec<(&super::Entry, bool, bool)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for g in [new, old].into_iter().flatten() {
        for n in g.graph.node_indices() {
            let e = &g.graph[n];
            if seen.insert(e.name.as_str()) {
                let in_old = old.is_some_and(|o| o.node(&e.name).is_some());
                let in_new = new.is_some_and(|o| o.node(&e.name).is_some());
                entries.push((e, in_old, in_new));
            }
        }
    }
    entries.sort_by(|a, b| {
        compare_versions(b.0.key(), a.0.key()).then_with(|| a.0.name.cmp(&b.0.name))
    });
    let pos: BTreeMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, (e, ..))| (e.name.as_str(), i))
        .collect();
    let nodes = entries
        .iter()
        .map(|(e, in_old, in_new)| Node {
            name: e.name.clone(),
            version: e.version.as_ref().map(|v| v.to_string()),
            skipped: e.skipped,
            deprecated: e.deprecated,
            status: status(*in_old, *in_new, diff),
        })
        .collect();
    // Edges and ranges of each side, keyed so both sides' copies meet.
    let mut edges: BTreeMap<(String, String, EdgeKind), (bool, bool)> = BTreeMap::new();
    let mut outside: BTreeMap<(String, String, EdgeKind), (bool, bool)> = BTreeMap::new();
    let mut ranges: BTreeMap<RangeKey, (bool, bool)> = BTreeMap::new();
    for (g, is_new) in [(old, false), (new, true)] {
        let Some(g) = g else { continue };
        for e in named_edges(g) {
            let slot = edges.entry((e.from, e.to, e.kind)).or_default();
            if is_new { slot.1 = true } else { slot.0 = true }
        }
        for (from, to, kind) in outside_edges(g) {
            let slot = outside.entry((from, to, kind)).or_default();
            if is_new { slot.1 = true } else { slot.0 = true }
        }
        for n in g.graph.node_indices() {
            if g.ranges[n.index()].is_none() {
                continue;
            }
            let covered: Vec<usize> = g
                .range_sources(n)
                .filter_map(|m| pos.get(g.graph[m].name.as_str()).copied())
                .collect();
            let key = (
                pos[g.graph[n].name.as_str()],
                g.entry(n).skip_range.clone(),
                runs(covered),
            );
            let slot = ranges.entry(key).or_default();
            if is_new { slot.1 = true } else { slot.0 = true }
        }
    }
    let paths = main
        .graph
        .node_indices()
        .map(|n| {
            let path = |sem| {
                let p = resolve(main, Installed::of(main, n), sem, None);
                let mut hops = vec![p.from.clone()];
                hops.extend(p.hops.into_iter().map(|h| h.to));
                Path { hops, stop: p.stop }
            };
            (
                main.graph[n].name.clone(),
                [path(Semantics::V0), path(Semantics::V1)],
            )
        })
        .collect();
    let edge_list = |m: BTreeMap<(String, String, EdgeKind), (bool, bool)>| -> Vec<Edge> {
        m.into_iter()
            .map(|((from, to, kind), (o, n))| Edge {
                from,
                to,
                kind,
                status: status(o, n, diff),
            })
            .collect()
    };
    Some(Channel {
        name: main.channel.clone(),
        head: main.head.map(|h| main.graph[h].name.clone()),
        nodes,
        edges: edge_list(edges),
        outside: edge_list(outside),
        deprecated: None,
        ranges: ranges
            .into_iter()
            .map(|((to, range, runs), (o, n))| Range {
                to,
                range,
                runs,
                status: status(o, n, diff),
            })
            .collect(),
        paths,
        status: status(old.is_some(), new.is_some(), diff),
    })
}

/// The `replaces` and `skips` of `g`'s entries that name no entry of `g` (older end first).
fn outside_edges(g: Graph<'_, '_>) -> Vec<(String, String, EdgeKind)> {
    let mut out = Vec::new();
    for n in g.graph.node_indices() {
        let e = g.entry(n);
        let to = &g.graph[n].name;
        let named = std::iter::once((&e.replaces, EdgeKind::Replaces))
            .chain(e.skips.iter().map(|s| (s, EdgeKind::Skips)));
        for (from, kind) in named {
            if !from.is_empty() && g.node(from).is_none() {
                out.push((from.clone(), to.clone(), kind));
            }
        }
    }
    out
}

/// The message of the `olm.deprecations` entry of `view` for `schema` and `name` (empty for
/// the package), if any.
fn deprecation(view: Option<&PackageView<'_>>, schema: &str, name: &str) -> Option<String> {
    view?
        .deprecations
        .iter()
        .flat_map(|d| &d.entries)
        .find(|e| e.reference.schema == schema && e.reference.name == name)
        .map(|e| cut(e.message.clone()))
}

fn bundles(view: Option<&PackageView<'_>>, into: &mut BTreeMap<String, Bundle>) {
    let Some(v) = view else {
        return;
    };
    for (n, bs) in &v.bundles {
        let b = bs[0];
        into.entry(n.to_string()).or_insert_with(|| Bundle {
            image: b.image.clone(),
            properties: b
                .properties
                .iter()
                .map(|p| (p.type_.clone(), cut(p.value.to_json())))
                .collect(),
            deprecated: deprecation(Some(v), "olm.bundle", n),
        });
    }
}

/// Every version of a package, newest first (then by name): the entries of its channels on
/// either side and its bundles (versions from `idx`, as the graphs take them).
fn versions<'g>(
    chans: impl Iterator<Item = &'g ChannelGraph<'g>>,
    views: [Option<&PackageView<'_>>; 2],
) -> Vec<(String, Option<String>)> {
    let mut all: BTreeMap<String, VersionInfo> = BTreeMap::new();
    for g in chans {
        for e in g.graph.node_weights() {
            all.entry(e.name.clone())
                .or_insert_with(|| (e.version.clone(), e.release.clone()));
        }
    }
    for v in views.into_iter().flatten() {
        for (name, info) in package_versions(v) {
            all.entry(name.to_string()).or_insert(info);
        }
    }
    let mut rows: Vec<(String, VersionInfo)> = all.into_iter().collect();
    rows.sort_by(|(an, a), (bn, b)| {
        compare_versions(
            (b.0.as_ref(), b.1.as_deref()),
            (a.0.as_ref(), a.1.as_deref()),
        )
        .then_with(|| an.cmp(bn))
    });
    rows.into_iter()
        .map(|(n, (v, _))| (n, v.map(|v| v.to_string())))
        .collect()
}

/// The page's data: every package of `new` (and, in a diff, of `old`) with its channels and
/// bundles.
fn doc<'a>(
    old: Option<(&DeclarativeConfig, &CatalogGraphs<'_>)>,
    new: (&DeclarativeConfig, &CatalogGraphs<'_>),
    changes: &BTreeMap<String, Vec<String>>,
    title: &'a str,
) -> Doc<'a> {
    let diff = old.is_some();
    let empty = BTreeMap::new();
    let new_idx = crate::model::Index::new(new.0);
    let old_idx = old.map(|(cfg, _)| crate::model::Index::new(cfg));
    let mut names: std::collections::BTreeSet<&String> = new.1.packages.keys().collect();
    if let Some((_, og)) = old {
        names.extend(og.packages.keys());
    }
    let packages = names
        .into_iter()
        .map(|name| {
            let oc = old.and_then(|(_, g)| g.packages.get(name));
            let nc = new.1.packages.get(name);
            let mut chans: std::collections::BTreeSet<&String> =
                nc.map(|c| c.keys().collect()).unwrap_or_default();
            chans.extend(oc.unwrap_or(&empty).keys());
            let nv = new_idx.packages.get(name.as_str());
            let ov = old_idx.as_ref().and_then(|i| i.packages.get(name.as_str()));
            let mut bs = BTreeMap::new();
            bundles(nv, &mut bs);
            bundles(ov, &mut bs);
            let graphs = [nc, oc].into_iter().flatten().flat_map(|m| m.values());
            let dep = |schema: &str, n: &str| {
                deprecation(nv, schema, n).or_else(|| deprecation(ov, schema, n))
            };
            Package {
                name: name.clone(),
                default_channel: new
                    .1
                    .default_channels
                    .get(name)
                    .or_else(|| old.and_then(|(_, g)| g.default_channels.get(name)))
                    .cloned(),
                channels: chans
                    .into_iter()
                    .filter_map(|c| {
                        let mut ch =
                            channel(oc.and_then(|m| m.get(c)), nc.and_then(|m| m.get(c)), diff)?;
                        ch.deprecated = dep("olm.channel", c);
                        Some(ch)
                    })
                    .collect(),
                bundles: bs,
                versions: versions(graphs, [nv, ov]),
                deprecated: dep("olm.package", ""),
                changes: changes.get(name).cloned().unwrap_or_default(),
                status: status(oc.is_some(), nc.is_some(), diff),
            }
        })
        .collect();
    Doc {
        title,
        diff,
        packages,
    }
}

pub use crate::text::html_escape as escape;

/// JSON that is safe inside a `<script>` element: `</` and `<!--` cannot close or open
/// anything (`\/` and `\u003c` are the same JSON strings).
fn script_json(v: &impl Serialize) -> io::Result<String> {
    let s = serde_json::to_string(v).map_err(io::Error::other)?;
    Ok(s.replace("</", "<\\/").replace("<!--", "\\u003c!--"))
}

/// Writes the page for `graphs`.
pub fn html(
    cfg: &DeclarativeConfig,
    graphs: &CatalogGraphs<'_>,
    title: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    page(&doc(None, (cfg, graphs), &BTreeMap::new(), title), out)
}

/// Writes the diff page: both catalogs' graphs in one, what only the new one has in green, what
/// only the old one had in red, and each package's changes (`changes`, package → lines).
pub fn diff_html(
    old: (&DeclarativeConfig, &CatalogGraphs<'_>),
    new: (&DeclarativeConfig, &CatalogGraphs<'_>),
    changes: &BTreeMap<String, Vec<String>>,
    title: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    page(&doc(Some(old), new, changes, title), out)
}

fn page(d: &Doc<'_>, out: &mut dyn Write) -> io::Result<()> {
    let title = d.title;
    let data = script_json(d)?;
    write!(
        out,
        concat!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n",
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ",
            "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
            "<title>{title}</title>\n<style>\n{css}</style></head>\n<body>\n",
            "<header><h1>{title}</h1>\n",
            "<label>Package <select id=\"package\"></select></label>\n",
            "<label>Channel <select id=\"channel\"></select></label>\n",
            "<input id=\"search\" type=\"search\" placeholder=\"Search packages and versions\">\n",
            "<span id=\"legend\"><span class=\"k replaces\">replaces</span> ",
            "<span class=\"k skips\">skips</span> <span class=\"k range\">skipRange</span> ",
            "<span class=\"k head\">head</span> <span class=\"k skipped\">skipped</span> ",
            "<span class=\"k deprecated\">deprecated</span>{diff_legend}</span></header>\n",
            "<main><div id=\"graph\"></div><aside id=\"details\">",
            "<p>Click a version to see its properties and its upgrade paths.</p></aside></main>\n",
            "<script type=\"application/json\" id=\"data\">{data}</script>\n",
            "<script>\n{js}</script>\n</body></html>\n"
        ),
        title = escape(title),
        diff_legend = if d.diff {
            " <span class=\"k added\">added</span> <span class=\"k removed\">removed</span>"
        } else {
            ""
        },
        css = include_str!("report.css"),
        data = data,
        js = include_str!("report.js"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The overview's data: every version of the package newest first (an entry of two
    /// channels once, a bundle of no channel too), edges from outside a channel, and the
    /// package, channel and bundle deprecations.
    #[test]
    fn overview_data_lists_versions_outside_edges_and_deprecations() {
        let bundle = |n: &str, v: &str| {
            format!(
                "---\nschema: olm.bundle\npackage: foo\nname: {n}\nimage: q.io/f:{v}\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: {v}}}\n"
            )
        };
        let text = [
            "---\nschema: olm.package\nname: foo\ndefaultChannel: fast\n".to_string(),
            bundle("a", "1.0.0"),
            bundle("b", "1.1.0"),
            bundle("c", "1.10.0"),
            bundle("lone", "0.9.0"),
            "---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n- name: c\n  replaces: b\n".into(),
            "---\nschema: olm.channel\npackage: foo\nname: old\nentries:\n- name: a\n- name: b\n  replaces: a\n".into(),
            "---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {schema: olm.package}\n  message: gone\n- reference: {schema: olm.channel, name: old}\n  message: use fast\n- reference: {schema: olm.bundle, name: a}\n  message: broken\n".into(),
        ]
        .concat();
        let mut cfg = DeclarativeConfig::default();
        let file: std::sync::Arc<std::path::Path> = std::path::Path::new("c.yaml").into();
        let problems = crate::fbc::load::parse_text(&text, &file, &mut cfg);
        assert!(problems.is_empty(), "{problems:?}");
        let graphs = CatalogGraphs::build(&cfg, None);
        let d = serde_json::to_value(doc(None, (&cfg, &graphs), &BTreeMap::new(), "t")).unwrap();
        let p = &d["packages"][0];
        assert_eq!(
            p["versions"],
            serde_json::json!([
                ["c", "1.10.0"],
                ["b", "1.1.0"],
                ["a", "1.0.0"],
                ["lone", "0.9.0"]
            ])
        );
        assert_eq!(p["deprecated"], "gone");
        assert_eq!(p["bundles"]["a"]["deprecated"], "broken");
        assert!(p["bundles"]["b"].get("deprecated").is_none());
        let fast = &p["channels"][0];
        assert_eq!(
            fast["outside"],
            serde_json::json!([{"from": "b", "to": "c", "kind": "replaces"}])
        );
        assert!(fast.get("deprecated").is_none());
        let old = &p["channels"][1];
        assert_eq!(old["deprecated"], "use fast");
        assert!(old.get("outside").is_none(), "{old}");
    }
}
