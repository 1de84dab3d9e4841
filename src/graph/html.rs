//! `catalog graph --format html`: one self-contained page (scripts, styles and data inline; a
//! Content-Security-Policy that forbids any fetch) that draws each channel's upgrade graph with
//! versions laid out by semver, lets a reader pick a package, search, and click a version to see
//! its properties and the OLM v0 and v1 paths from it to the head.
//!
//! The drawing is an arc diagram: entries newest first down a column, `replaces` arcs on the
//! right, `skips` arcs on the left, and each skipRange as a bracket beside the entries it
//! covers, so a package of a hundred versions stays legible. The script is `report.js`, the
//! styles `report.css`; no library.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::path::{Semantics, Stop, resolve};
use super::render::{JsonEdge, Layout, named_edges};
use super::{CatalogGraphs, Installed};
use crate::fbc::decl::DeclarativeConfig;

/// Property values longer than this are cut in the page (the full catalog is in the files).
pub const VALUE_CHARS: usize = 400;

#[derive(Serialize)]
struct Node {
    name: String,
    version: Option<String>,
    skipped: bool,
    deprecated: bool,
}

#[derive(Serialize)]
struct Range {
    /// Index (in `nodes`) of the entry with the skipRange.
    to: usize,
    range: String,
    /// Inclusive runs of `nodes` positions it covers.
    runs: Vec<(usize, usize)>,
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
    edges: Vec<JsonEdge>,
    ranges: Vec<Range>,
    /// Per entry: the paths under OLM v0 and v1.
    paths: BTreeMap<String, [Path; 2]>,
}

#[derive(Serialize)]
struct Bundle {
    image: String,
    properties: Vec<(String, String)>,
}

#[derive(Serialize)]
struct Package {
    name: String,
    #[serde(rename = "defaultChannel")]
    default_channel: Option<String>,
    channels: Vec<Channel>,
    bundles: BTreeMap<String, Bundle>,
}

#[derive(Serialize)]
struct Doc<'a> {
    title: &'a str,
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

fn channel(g: &super::ChannelGraph<'_>) -> Channel {
    let layout = Layout::new(g);
    let pos: BTreeMap<&str, usize> = layout
        .nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| (g.graph[n].name.as_str(), i))
        .collect();
    let nodes = layout
        .nodes
        .iter()
        .map(|&n| {
            let e = &g.graph[n];
            Node {
                name: e.name.clone(),
                version: e.version.as_ref().map(|v| v.to_string()),
                skipped: e.skipped,
                deprecated: e.deprecated,
            }
        })
        .collect();
    let ranges = layout
        .nodes
        .iter()
        .filter(|&&n| g.ranges[n.index()].is_some())
        .map(|&n| Range {
            to: pos[g.graph[n].name.as_str()],
            range: g.entry(n).skip_range.clone(),
            runs: layout.runs(g, n),
        })
        .collect();
    let paths = layout
        .nodes
        .iter()
        .map(|&n| {
            let path = |sem| {
                let p = resolve(g, Installed::of(g, n), sem, None);
                let mut hops = vec![p.from.clone()];
                hops.extend(p.hops.into_iter().map(|h| h.to));
                Path { hops, stop: p.stop }
            };
            (
                g.graph[n].name.clone(),
                [path(Semantics::V0), path(Semantics::V1)],
            )
        })
        .collect();
    Channel {
        name: g.channel.clone(),
        head: g.head.map(|h| g.graph[h].name.clone()),
        nodes,
        edges: named_edges(g),
        ranges,
        paths,
    }
}

/// The page's data: every package of `graphs` with its channels and bundles.
fn doc<'a>(cfg: &DeclarativeConfig, graphs: &CatalogGraphs<'_>, title: &'a str) -> Doc<'a> {
    let idx = crate::model::Index::new(cfg);
    let packages = graphs
        .packages
        .iter()
        .map(|(name, chans)| {
            let bundles = idx
                .packages
                .get(name.as_str())
                .map(|v| {
                    v.bundles
                        .iter()
                        .map(|(n, bs)| {
                            let b = bs[0];
                            (
                                n.to_string(),
                                Bundle {
                                    image: b.image.clone(),
                                    properties: b
                                        .properties
                                        .iter()
                                        .map(|p| (p.type_.clone(), cut(p.value.to_json())))
                                        .collect(),
                                },
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            Package {
                name: name.clone(),
                default_channel: graphs.default_channels.get(name).cloned(),
                channels: chans.values().map(channel).collect(),
                bundles,
            }
        })
        .collect();
    Doc { title, packages }
}

/// Escapes text for HTML element content and attribute values.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

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
    let data = script_json(&doc(cfg, graphs, title))?;
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
            "<span class=\"k deprecated\">deprecated</span></span></header>\n",
            "<main><div id=\"graph\"></div><aside id=\"details\">",
            "<p>Click a version to see its properties and its upgrade paths.</p></aside></main>\n",
            "<script type=\"application/json\" id=\"data\">{data}</script>\n",
            "<script>\n{js}</script>\n</body></html>\n"
        ),
        title = escape(title),
        css = include_str!("report.css"),
        data = data,
        js = include_str!("report.js"),
    )
}
