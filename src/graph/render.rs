//! Pictures of upgrade graphs: JSON (nodes, typed edges, head per channel), an indented text
//! view, Graphviz DOT, and mermaid as `opm alpha render-graph` writes it (operator-registry
//! `alpha/declcfg/write.go`, `MermaidWriter.WriteChannels`): the same text for a diagram that fits
//! mermaid's default `maxTextSize` of 30,000 characters, split per package (and per channel) when
//! it does not.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};
use std::io::{self, Write};

use petgraph::graph::NodeIndex;
use serde::Serialize;

use semver::Version;

use super::{CatalogGraphs, ChannelGraph, EdgeKind, compare_versions};
use crate::fbc::decl::{Channel, ChannelEntry, DeclarativeConfig};
use crate::range::Range;
use crate::text::{esc, needs_escape};

/// Mermaid's default `maxTextSize`.
pub const MERMAID_MAX_TEXT: usize = 30_000;

#[derive(Serialize)]
struct JsonNode {
    name: String,
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    release: Option<String>,
    skipped: bool,
    deprecated: bool,
}

/// An edge declared by name.
#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct JsonEdge {
    /// Upgraded from.
    pub(crate) from: String,
    /// Upgraded to.
    pub(crate) to: String,
    /// `replaces` or `skips`.
    pub(crate) kind: EdgeKind,
}

/// A stretch of consecutive entries of `nodes` (newest first) that a skipRange contains.
#[derive(Serialize)]
struct JsonRun {
    newest: String,
    oldest: String,
    count: usize,
}

/// One entry's skipRange edges: from every entry of `covers` to `to`.
#[derive(Serialize)]
struct JsonRange {
    to: String,
    range: String,
    count: usize,
    covers: Vec<JsonRun>,
}

#[derive(Serialize)]
struct JsonChannel {
    name: String,
    head: Option<String>,
    nodes: Vec<JsonNode>,
    edges: Vec<JsonEdge>,
    #[serde(rename = "skipRanges")]
    skip_ranges: Vec<JsonRange>,
}

#[derive(Serialize)]
struct JsonPackage {
    name: String,
    #[serde(rename = "defaultChannel")]
    default_channel: Option<String>,
    channels: Vec<JsonChannel>,
}

/// Nodes newest first (unknown versions last, then by name), as opm orders entries.
pub fn nodes_newest_first(g: &ChannelGraph<'_>) -> Vec<NodeIndex> {
    let mut v: Vec<NodeIndex> = g.graph.node_indices().collect();
    v.sort_by(|&a, &b| {
        compare_versions(g.graph[b].key(), g.graph[a].key())
            .then_with(|| g.graph[a].name.cmp(&g.graph[b].name))
    });
    v
}

/// A channel laid out newest first, with what is needed to print each skipRange as runs of
/// that layout rather than as one edge per entry it contains.
pub struct Layout {
    /// Nodes newest first ([`nodes_newest_first`]).
    pub nodes: Vec<NodeIndex>,
    /// Position of each node in `nodes`, by node index.
    pos: Vec<usize>,
    /// For each position of [`ChannelGraph::by_version`], the first and last position in
    /// `nodes` of the entries of the same version precedence (a range contains all or none).
    class: Vec<(usize, usize)>,
}

impl Layout {
    /// Lays out `g`.
    pub fn new(g: &ChannelGraph<'_>) -> Self {
        let nodes = nodes_newest_first(g);
        let mut pos = vec![0; nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            pos[n.index()] = i;
        }
        let bv = &g.by_version;
        let mut class = vec![(0, 0); bv.len()];
        let mut i = 0;
        while i < bv.len() {
            let v = g.graph[bv[i]].version.as_ref();
            let mut j = i;
            while j < bv.len()
                && g.graph[bv[j]]
                    .version
                    .as_ref()
                    .zip(v)
                    .is_some_and(|(a, b)| a.cmp_precedence(b).is_eq())
            {
                j += 1;
            }
            let ps = bv[i..j].iter().map(|n| pos[n.index()]);
            let bounds = (ps.clone().min().unwrap_or(0), ps.max().unwrap_or(0));
            class[i..j].iter_mut().for_each(|c| *c = bounds);
            i = j.max(i + 1);
        }
        Layout { nodes, pos, class }
    }

    /// The entries `to`'s skipRange contains (`to` left out), as inclusive runs of positions in
    /// `nodes`, newest run first.
    pub fn runs(&self, g: &ChannelGraph<'_>, to: NodeIndex) -> Vec<(usize, usize)> {
        let me = self.pos[to.index()];
        let mut out = Vec::new();
        for r in g.covered(to).iter().rev() {
            // Newest first: the run's highest class starts it, its lowest class ends it.
            let (a, b) = (self.class[r.end - 1].0, self.class[r.start].1);
            if (a..=b).contains(&me) {
                if a < me {
                    out.push((a, me - 1));
                }
                if me < b {
                    out.push((me + 1, b));
                }
            } else {
                out.push((a, b));
            }
        }
        out
    }
}

/// Runs of at most this many entries are drawn entry by entry in text and DOT; longer ones as
/// one range.
const SPELL_OUT: usize = 3;

pub(crate) fn named_edges(g: &ChannelGraph<'_>) -> Vec<JsonEdge> {
    let mut edges: Vec<JsonEdge> = g
        .graph
        .edge_indices()
        .filter_map(|e| {
            let (f, t) = g.graph.edge_endpoints(e)?;
            Some(JsonEdge {
                from: g.graph[f].name.clone(),
                to: g.graph[t].name.clone(),
                kind: g.graph[e].kind,
            })
        })
        .collect();
    edges.sort();
    edges
}

/// Writes the JSON document for `graphs`: per channel, nodes newest first, the edges declared
/// by name, and each skipRange once with the runs of `nodes` it contains.
pub fn json(graphs: &CatalogGraphs<'_>, out: &mut dyn Write) -> io::Result<()> {
    let packages: Vec<JsonPackage> = graphs
        .packages
        .iter()
        .map(|(name, chans)| JsonPackage {
            name: name.clone(),
            default_channel: graphs.default_channels.get(name).cloned(),
            channels: chans
                .values()
                .map(|g| {
                    let layout = Layout::new(g);
                    let name_at = |i: usize| g.graph[layout.nodes[i]].name.clone();
                    let skip_ranges = layout
                        .nodes
                        .iter()
                        .filter(|&&n| g.ranges[n.index()].is_some())
                        .map(|&n| {
                            let covers: Vec<JsonRun> = layout
                                .runs(g, n)
                                .into_iter()
                                .map(|(a, b)| JsonRun {
                                    newest: name_at(a),
                                    oldest: name_at(b),
                                    count: b - a + 1,
                                })
                                .collect();
                            JsonRange {
                                to: g.graph[n].name.clone(),
                                range: g.entry(n).skip_range.clone(),
                                count: covers.iter().map(|c| c.count).sum(),
                                covers,
                            }
                        })
                        .collect();
                    JsonChannel {
                        name: g.channel.clone(),
                        head: g.head.map(|h| g.graph[h].name.clone()),
                        nodes: layout
                            .nodes
                            .iter()
                            .map(|&n| {
                                let e = &g.graph[n];
                                JsonNode {
                                    name: e.name.clone(),
                                    version: e.version.as_ref().map(|v| v.to_string()),
                                    release: e.release.clone(),
                                    skipped: e.skipped,
                                    deprecated: e.deprecated,
                                }
                            })
                            .collect(),
                        edges: named_edges(g),
                        skip_ranges,
                    }
                })
                .collect(),
        })
        .collect();
    #[derive(Serialize)]
    struct Doc {
        packages: Vec<JsonPackage>,
    }
    serde_json::to_writer_pretty(&mut *out, &Doc { packages }).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// The entries of a run for people: each name when there are few, else the two ends.
fn run_text(g: &ChannelGraph<'_>, layout: &Layout, (a, b): (usize, usize)) -> String {
    let name = |i: usize| esc(&g.graph[layout.nodes[i]].name).to_string();
    if b - a < SPELL_OUT {
        (a..=b).map(name).collect::<Vec<_>>().join(", ")
    } else {
        format!("{} .. {} ({} entries)", name(a), name(b), b - a + 1)
    }
}

/// Writes an indented text view: per channel, entries newest first with the edges into them.
pub fn text(graphs: &CatalogGraphs<'_>, out: &mut dyn Write) -> io::Result<()> {
    for (name, chans) in &graphs.packages {
        let def = graphs
            .default_channels
            .get(name)
            .map_or("?", String::as_str);
        writeln!(out, "{} (default channel: {})", esc(name), esc(def))?;
        for g in chans.values() {
            let head = g.head.map_or("<no single head>".to_string(), |h| {
                esc(&g.graph[h].name).to_string()
            });
            writeln!(out, "  channel {}  head {head}", esc(&g.channel))?;
            let mut into: HashMap<&str, Vec<String>> = HashMap::new();
            for x in named_edges(g) {
                let line = format!("{} ({})", esc(&x.from), x.kind.as_str());
                into.entry(g.graph[g.index[&x.to]].name.as_str())
                    .or_default()
                    .push(line);
            }
            let layout = Layout::new(g);
            for &n in &layout.nodes {
                let e = &g.graph[n];
                let mut marks = Vec::new();
                if Some(n) == g.head {
                    marks.push("head");
                }
                if e.skipped {
                    marks.push("skipped");
                }
                let marks = if marks.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", marks.join(", "))
                };
                writeln!(out, "    {} {}{marks}", esc(&e.name), esc(e.version_str()))?;
                if let Some(from) = into.get(e.name.as_str()) {
                    writeln!(out, "      <- {}", from.join(", "))?;
                }
                if g.ranges[n.index()].is_some() {
                    let runs: Vec<String> = layout
                        .runs(g, n)
                        .into_iter()
                        .map(|r| run_text(g, &layout, r))
                        .collect();
                    let runs = if runs.is_empty() {
                        "no entry".to_string()
                    } else {
                        runs.join("; ")
                    };
                    writeln!(
                        out,
                        "      <- skipRange {}: {runs}",
                        esc(&g.entry(n).skip_range)
                    )?;
                }
                let entry = g.entry(n);
                if !entry.replaces.is_empty() && g.node(&entry.replaces).is_none() {
                    writeln!(
                        out,
                        "      <- {} (replaces, not in channel)",
                        esc(&entry.replaces)
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// A DOT quoted string of `lines` joined by DOT's `\n` line break (one statement per line of
/// output): control characters of each line escaped ([`crate::text::escape`]), then quotes
/// and backslashes.
fn dot_lines(lines: &[&str]) -> String {
    let mut out = String::from("\"");
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str("\\n");
        }
        for c in crate::text::escape(line).chars() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

fn dot_id(s: &str) -> String {
    dot_lines(&[s])
}

/// Writes Graphviz DOT: one cluster per package channel, the head bold, skipped entries
/// dashed. A skipRange draws an edge from each entry it contains when they are few; a longer
/// run of entries is one dashed note (`skipRange(R)`, its newest and oldest entry and count)
/// with one edge into the entry.
pub fn dot(graphs: &CatalogGraphs<'_>, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"digraph upgrades {\n  rankdir=LR;\n  node [shape=box];\n")?;
    for (pkg, chans) in &graphs.packages {
        for g in chans.values() {
            let id = |n: NodeIndex| dot_id(&format!("{pkg}/{}/{}", g.channel, g.graph[n].name));
            writeln!(
                out,
                "  subgraph {} {{",
                dot_id(&format!("cluster_{pkg}/{}", g.channel))
            )?;
            writeln!(
                out,
                "    label={};",
                dot_id(&format!("{pkg} / {}", g.channel))
            )?;
            let layout = Layout::new(g);
            for &n in &layout.nodes {
                let e = &g.graph[n];
                let mut style = Vec::new();
                if Some(n) == g.head {
                    style.push("bold");
                }
                if e.skipped {
                    style.push("dashed");
                }
                let style = if style.is_empty() {
                    String::new()
                } else {
                    format!(", style=\"{}\"", style.join(","))
                };
                writeln!(
                    out,
                    "    {} [label={}{style}];",
                    id(n),
                    dot_lines(&[&e.name, &e.version_str()])
                )?;
            }
            for e in named_edges(g) {
                writeln!(
                    out,
                    "    {} -> {} [label={}];",
                    id(g.index[&e.from]),
                    id(g.index[&e.to]),
                    dot_id(e.kind.as_str())
                )?;
            }
            for &to in &layout.nodes {
                if g.ranges[to.index()].is_none() {
                    continue;
                }
                let label = format!("skipRange({})", g.entry(to).skip_range);
                for (k, (a, b)) in layout.runs(g, to).into_iter().enumerate() {
                    if b - a < SPELL_OUT {
                        for i in a..=b {
                            writeln!(
                                out,
                                "    {} -> {} [label={}];",
                                id(layout.nodes[i]),
                                id(to),
                                dot_id(&label)
                            )?;
                        }
                        continue;
                    }
                    let note = dot_id(&format!(
                        "{pkg}/{}/{} skipRange {k}",
                        g.channel, g.graph[to].name
                    ));
                    let name = |i: usize| g.graph[layout.nodes[i]].name.as_str();
                    let count = format!("{} entries", b - a + 1);
                    writeln!(
                        out,
                        "    {note} [shape=note, style=dashed, label={}];",
                        dot_lines(&[&label, name(a), "..", name(b), &count])
                    )?;
                    writeln!(
                        out,
                        "    {note} -> {} [label={}, style=dashed];",
                        id(to),
                        dot_id("skipRange")
                    )?;
                }
            }
            out.write_all(b"  }\n")?;
        }
    }
    out.write_all(b"}\n")
}

/// Go's `%q` for the strings that occur here (names and ranges), as opm writes them, made safe
/// for mermaid and terminals: a quote inside becomes mermaid's `#quot;`, and the characters
/// [`crate::text::needs_escape`] names that JSON leaves raw (DEL, C1, bidi) become `\uXXXX`.
fn go_quote(s: &str) -> String {
    let mut json = String::with_capacity(s.len() + 2);
    crate::fbc::node::write_json_string(&mut json, s);
    let inner = json[1..json.len() - 1].replace("\\\"", "#quot;");
    let mut out = String::with_capacity(inner.len() + 2);
    out.push('"');
    for c in inner.chars() {
        if needs_escape(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// A mermaid node or subgraph id from names: letters, digits, `.`, `_`, `+` and `-` as opm
/// writes them; any other character (spaces, brackets, quotes, controls) as `_<hex>_`, so that a
/// name cannot break the diagram's syntax.
fn mermaid_id(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_alphanumeric() || matches!(c, '.' | '_' | '+' | '-') {
            out.push(c);
        } else {
            let _ = write!(out, "_{:x}_", c as u32);
        }
    }
    out
}

/// Per-document state while writing mermaid: the running link number (mermaid's `linkStyle`
/// counts links in document order), node decorations and the links v0 never follows.
struct MermaidState<'a> {
    draw_v0: bool,
    deprecated_bundles: &'a std::collections::BTreeSet<String>,
    link: usize,
    /// Class name (`deprecated`, `deprecatedskipped`, `skipped`) → node ids.
    classes: BTreeMap<&'static str, Vec<String>>,
    dead_links: Vec<usize>,
}

/// One channel's mermaid lines as `opm alpha render-graph` writes them: entries by decreasing
/// version, then for each entry its `skip`, `skipRange(...)` (one edge per channel entry whose
/// version is in the range, in entry order) and `replace` edges, old → new.
///
/// With v0 semantics (`--draw-v0-semantics`) a node already skipped by a newer entry gets the
/// class `skipped`, and every edge v0 cannot use is styled dashed red: a `skip` edge from an
/// entry a newer entry already skipped, and `skipRange`/`replace` edges into a skipped entry.
fn mermaid_channel<W: fmt::Write>(
    c: &Channel,
    versions: &HashMap<&str, Version>,
    st: &mut MermaidState<'_>,
    out: &mut W,
) {
    let zero = Version::new(0, 0, 0);
    let ver = |n: &str| versions.get(n).unwrap_or(&zero);
    let channel_id = mermaid_id(&format!("{}-{}", c.package, c.name));
    let _ = writeln!(out, "    %% channel {}", go_quote(&c.name));
    let _ = writeln!(out, "    subgraph {channel_id}[{}]", go_quote(&c.name));
    let mut sorted: Vec<&ChannelEntry> = c.entries.iter().collect();
    sorted.sort_by(|a, b| ver(&b.name).cmp_precedence(ver(&a.name)));
    let mut skipped: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for ce in sorted {
        let entry_id = format!("{channel_id}-{}", mermaid_id(&ce.name));
        let to = format!("{entry_id}[{}]", go_quote(&ce.name));
        let _ = writeln!(out, "      {to}");
        let deprecated = st.deprecated_bundles.contains(&ce.name);
        let class = match (deprecated, skipped.contains(ce.name.as_str())) {
            (true, true) => Some("deprecatedskipped"),
            (true, false) => Some("deprecated"),
            (false, true) => Some("skipped"),
            (false, false) => None,
        };
        if let Some(class) = class {
            st.classes.entry(class).or_default().push(entry_id.clone());
        }
        let target_skipped = skipped.contains(ce.name.as_str());
        for sk in &ce.skips {
            let _ = writeln!(
                out,
                "      {channel_id}-{}[{}]-- skip --> {to}",
                mermaid_id(sk),
                go_quote(sk)
            );
            if st.draw_v0 && !skipped.insert(sk.as_str()) {
                st.dead_links.push(st.link);
            }
            st.link += 1;
        }
        if !ce.skip_range.is_empty()
            && let Ok(r) = Range::parse(&ce.skip_range)
        {
            for e in &c.entries {
                if r.contains(ver(&e.name)) {
                    let _ = writeln!(
                        out,
                        "      {channel_id}-{}[{}]-- {} --> {to}",
                        mermaid_id(&e.name),
                        go_quote(&e.name),
                        go_quote(&format!("skipRange({})", ce.skip_range))
                    );
                    if st.draw_v0 && target_skipped {
                        st.dead_links.push(st.link);
                    }
                    st.link += 1;
                }
            }
        }
        if !ce.replaces.is_empty() {
            let _ = writeln!(
                out,
                "      {channel_id}-{}[{}]-- replace --> {to}",
                mermaid_id(&ce.replaces),
                go_quote(&ce.replaces)
            );
            if st.draw_v0 && target_skipped {
                st.dead_links.push(st.link);
            }
            st.link += 1;
        }
    }
    let _ = out.write_str("    end\n");
}

const MERMAID_HEADER: &str = "graph LR\n  classDef deprecated fill:#E8960F\n  classDef skipped stroke:#FF0000,stroke-width:4px\n  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n";

/// One mermaid document for `channels` (all of one or more packages), in opm's layout.
fn mermaid_doc<W: fmt::Write>(
    cfg: &DeclarativeConfig,
    channels: &[&Channel],
    versions: &HashMap<&str, Version>,
    draw_v0: bool,
    out: &mut W,
) {
    // Deprecations are matched by name only, as opm does.
    let mut dep_pkgs = std::collections::BTreeSet::new();
    // Sets: every entry and channel is looked up (as dep_pkgs).
    let mut dep_channels = std::collections::BTreeSet::new();
    let mut dep_bundles = std::collections::BTreeSet::new();
    for d in &cfg.deprecations {
        for e in &d.entries {
            match e.reference.schema.as_str() {
                "olm.package" => {
                    dep_pkgs.insert(d.package.as_str());
                }
                "olm.channel" => {
                    dep_channels.insert(e.reference.name.clone());
                }
                "olm.bundle" => {
                    dep_bundles.insert(e.reference.name.clone());
                }
                _ => {}
            }
        }
    }
    let mut st = MermaidState {
        draw_v0,
        deprecated_bundles: &dep_bundles,
        link: 0,
        classes: BTreeMap::new(),
        dead_links: Vec::new(),
    };
    // Packages by name, channels by name within each: the order the lines appear in, so that
    // link numbers match what mermaid counts.
    let mut sorted: Vec<&Channel> = channels.to_vec();
    sorted.sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
    let _ = out.write_str(MERMAID_HEADER);
    let mut i = 0;
    while i < sorted.len() {
        let pkg = &sorted[i].package;
        let _ = writeln!(out, "  %% package {}", go_quote(pkg));
        let _ = writeln!(out, "  subgraph {}", go_quote(pkg));
        while i < sorted.len() && &sorted[i].package == pkg {
            mermaid_channel(sorted[i], versions, &mut st, out);
            i += 1;
        }
        let _ = out.write_str("  end\n");
    }
    // opm styles only one deprecated package per diagram; every one is styled here (the same
    // output whenever a diagram holds one package).
    let mut shown: Vec<&str> = sorted.iter().map(|c| c.package.as_str()).collect();
    shown.dedup();
    for p in shown.into_iter().filter(|p| dep_pkgs.contains(p)) {
        let _ = writeln!(out, "style {} fill:#989695", mermaid_id(p));
    }
    for c in &sorted {
        if dep_channels.contains(&c.name) {
            let _ = writeln!(
                out,
                "style {} fill:#DCD0FF",
                mermaid_id(&format!("{}-{}", c.package, c.name))
            );
        }
    }
    for (class, ids) in &mut st.classes {
        ids.sort();
        let _ = writeln!(out, "class {} {class}", ids.join(","));
    }
    if !st.dead_links.is_empty() {
        let ids: Vec<String> = st.dead_links.iter().map(|l| l.to_string()).collect();
        let _ = writeln!(
            out,
            "linkStyle {} stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;",
            ids.join(",")
        );
    }
}

/// Counts the bytes a document would have, without keeping them.
struct Counter(usize);

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// `fmt::Write` over an `io::Write`, keeping the first I/O error.
struct IoFmt<'a> {
    out: &'a mut dyn Write,
    err: Option<io::Error>,
}

impl fmt::Write for IoFmt<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.err.is_some() {
            return Err(fmt::Error);
        }
        self.out.write_all(s.as_bytes()).map_err(|e| {
            self.err = Some(e);
            fmt::Error
        })
    }
}

/// Mermaid as `opm alpha render-graph` draws it. When the whole diagram passes mermaid's default
/// `maxTextSize` ([`MERMAID_MAX_TEXT`]), it is split into Markdown with one fenced `mermaid`
/// block per package (per channel for packages that are too large on their own).
///
/// The text is streamed to `out`: sizes are measured in a counting pass, so memory stays
/// bounded although opm's layout draws a skipRange as one edge per entry it contains (the
/// output of `>=0.0.0` on every entry is quadratic in the entries, as opm's is).
pub fn mermaid(
    cfg: &DeclarativeConfig,
    package: Option<&str>,
    channel: Option<&str>,
    draw_v0: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut versions: HashMap<&str, Version> = HashMap::new();
    for b in &cfg.bundles {
        if let Some(v) = b
            .properties
            .iter()
            .find_map(|p| p.as_package())
            .and_then(|(_, v, _)| Version::parse(v).ok())
        {
            versions.entry(b.name.as_str()).or_insert(v);
        }
    }
    let channels: Vec<&Channel> = cfg
        .channels
        .iter()
        .filter(|c| package.is_none_or(|p| c.package == p) && channel.is_none_or(|n| c.name == n))
        .collect();
    let size = |chans: &[&Channel]| {
        let mut c = Counter(0);
        mermaid_doc(cfg, chans, &versions, draw_v0, &mut c);
        c.0
    };
    let mut w = IoFmt { out, err: None };
    if size(&channels) <= MERMAID_MAX_TEXT {
        mermaid_doc(cfg, &channels, &versions, draw_v0, &mut w);
        return w.err.map_or(Ok(()), Err);
    }
    let mut by_pkg: BTreeMap<&str, Vec<&Channel>> = BTreeMap::new();
    for c in &channels {
        by_pkg.entry(&c.package).or_default().push(c);
    }
    let mut blocks: Vec<Vec<&Channel>> = Vec::new();
    for chans in by_pkg.values() {
        if chans.len() == 1 || size(chans) <= MERMAID_MAX_TEXT {
            blocks.push(chans.clone());
        } else {
            let mut sorted = chans.clone();
            sorted.sort_by(|a, b| a.name.cmp(&b.name));
            blocks.extend(sorted.into_iter().map(|c| vec![c]));
        }
    }
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            let _ = w.write_str("\n");
        }
        let _ = w.write_str("```mermaid\n");
        mermaid_doc(cfg, block, &versions, draw_v0, &mut w);
        let _ = w.write_str("```\n");
    }
    w.err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mermaid(
        cfg: &DeclarativeConfig,
        package: Option<&str>,
        channel: Option<&str>,
        draw_v0: bool,
    ) -> String {
        let mut out = Vec::new();
        super::mermaid(cfg, package, channel, draw_v0, &mut out).expect("write");
        String::from_utf8(out).expect("utf-8")
    }

    fn cfg(text: &str) -> DeclarativeConfig {
        let mut c = DeclarativeConfig::default();
        let file: std::sync::Arc<std::path::Path> =
            std::sync::Arc::from(std::path::Path::new("c.yaml"));
        let problems = crate::fbc::load::parse_text(text, &file, &mut c);
        assert!(problems.is_empty(), "{problems:?}");
        c
    }

    fn bundle(name: &str, v: &str) -> String {
        format!(
            "---\nschema: olm.bundle\npackage: foo\nname: {name}\nimage: q.io/f:{v}\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: {v}}}\n"
        )
    }

    /// Derived from `MermaidWriter.WriteChannels` (operator-registry `alpha/declcfg/write.go`):
    /// entries by decreasing version, each followed by its skip, skipRange and replace edges.
    #[test]
    fn mermaid_matches_opm_layout() {
        let text = format!(
            "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n{}{}{}---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: a\n- name: b\n  replaces: a\n  skipRange: '>=1.0.0 <1.1.0'\n- name: c\n  replaces: b\n  skips: [a]\n---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{schema: olm.bundle, name: a}}\n  message: old\n",
            bundle("a", "1.0.0"),
            bundle("b", "1.1.0"),
            bundle("c", "1.2.0")
        );
        let want = r#"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "foo"
  subgraph "foo"
    %% channel "stable"
    subgraph foo-stable["stable"]
      foo-stable-c["c"]
      foo-stable-a["a"]-- skip --> foo-stable-c["c"]
      foo-stable-b["b"]-- replace --> foo-stable-c["c"]
      foo-stable-b["b"]
      foo-stable-a["a"]-- "skipRange(>=1.0.0 <1.1.0)" --> foo-stable-b["b"]
      foo-stable-a["a"]-- replace --> foo-stable-b["b"]
      foo-stable-a["a"]
    end
  end
class foo-stable-a deprecated
"#;
        assert_eq!(mermaid(&cfg(&text), None, None, false), want);
    }

    /// `--draw-v0-semantics`, as `MermaidWriter` with `DrawV0Semantics` does it: entries skipped
    /// by a newer entry get the `skipped` class, edges v0 cannot take are dashed red.
    #[test]
    fn mermaid_draws_v0_semantics() {
        let text = format!(
            "---\nschema: olm.package\nname: foo\ndefaultChannel: a\n{}{}{}---\nschema: olm.channel\npackage: foo\nname: a\nentries:\n- name: v1\n- name: v2\n  replaces: v1\n  skips: [v1]\n- name: v3\n  replaces: v2\n  skips: [v2]\n---\nschema: olm.channel\npackage: foo\nname: b\nentries:\n- name: v1\n- name: v2\n  skips: [v1]\n- name: v3\n  skips: [v1]\n",
            bundle("v1", "1.0.0"),
            bundle("v2", "2.0.0"),
            bundle("v3", "3.0.0")
        );
        let c = cfg(&text);
        let plain = mermaid(&c, None, None, false);
        let v0 = mermaid(&c, None, None, true);
        // Same diagram; only the decoration lines differ.
        assert!(v0.starts_with(plain.as_str()), "{v0}");
        assert_eq!(
            &v0[plain.len()..],
            "class foo-a-v1,foo-a-v2,foo-b-v1 skipped\nlinkStyle 3,5 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n"
        );
        // Link 3 is `v1 -- replace --> v2` in channel a (v2 is skipped by v3); link 5 is the
        // second `skip` out of v1 in channel b.
        let links: Vec<&str> = v0.lines().filter(|l| l.contains("-->")).collect();
        assert_eq!(
            links[3].trim(),
            "foo-a-v1[\"v1\"]-- replace --> foo-a-v2[\"v2\"]"
        );
        assert_eq!(
            links[5].trim(),
            "foo-b-v1[\"v1\"]-- skip --> foo-b-v2[\"v2\"]"
        );
    }

    fn ranged() -> DeclarativeConfig {
        let mut text =
            String::from("---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n");
        for (n, v) in [
            ("a", "1.0.0"),
            ("b", "1.1.0"),
            ("c", "1.2.0"),
            ("d", "1.3.0"),
            ("e", "2.0.0"),
            ("f", "3.0.0"),
        ] {
            text.push_str(&bundle(n, v));
        }
        text.push_str("---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: a\n- name: b\n  replaces: a\n- name: c\n  replaces: b\n- name: d\n  replaces: c\n- name: e\n  replaces: d\n  skipRange: '>=1.0.0 <2.0.0 !=1.2.0'\n- name: f\n  replaces: e\n  skipRange: '>=0.0.0'\n");
        cfg(&text)
    }

    fn written(f: impl Fn(&CatalogGraphs<'_>, &mut dyn Write) -> io::Result<()>) -> String {
        let c = ranged();
        let graphs = CatalogGraphs::build(&c, None);
        let mut out = Vec::new();
        f(&graphs, &mut out).expect("write");
        String::from_utf8(out).expect("utf-8")
    }

    /// A skipRange is one JSON object with the runs of `nodes` it contains: holes (`!=`) split
    /// runs and the entry itself is left out, so `count` is the number of skipRange edges.
    #[test]
    fn json_prints_ranges_as_runs() {
        let v: serde_json::Value = serde_json::from_str(&written(json)).expect("json");
        let ch = &v["packages"][0]["channels"][0];
        let names: Vec<&str> = ch["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| n["name"].as_str().expect("name"))
            .collect();
        assert_eq!(names, ["f", "e", "d", "c", "b", "a"]);
        assert_eq!(ch["edges"].as_array().expect("edges").len(), 5);
        assert_eq!(
            ch["skipRanges"],
            serde_json::json!([
                {"to": "f", "range": ">=0.0.0", "count": 5, "covers": [{"newest": "e", "oldest": "a", "count": 5}]},
                {"to": "e", "range": ">=1.0.0 <2.0.0 !=1.2.0", "count": 3, "covers": [
                    {"newest": "d", "oldest": "d", "count": 1},
                    {"newest": "b", "oldest": "a", "count": 2}
                ]}
            ])
        );
    }

    /// Text and DOT spell out short runs entry by entry and summarize long ones.
    #[test]
    fn text_and_dot_print_long_runs_as_ranges() {
        let t = written(text);
        assert!(t.contains("    f 3.0.0  [head]\n      <- e (replaces)\n      <- skipRange >=0.0.0: e .. a (5 entries)\n"), "{t}");
        assert!(
            t.contains("      <- skipRange >=1.0.0 <2.0.0 !=1.2.0: d; b, a\n"),
            "{t}"
        );
        let d = written(dot);
        for from in ["d", "b", "a"] {
            assert!(d.contains(&format!("    \"foo/stable/{from}\" -> \"foo/stable/e\" [label=\"skipRange(>=1.0.0 <2.0.0 !=1.2.0)\"];\n")), "{d}");
        }
        assert!(
            !d.contains("\"foo/stable/c\" -> \"foo/stable/e\" [label=\"skipRange"),
            "{d}"
        );
        assert!(d.contains("    \"foo/stable/f skipRange 0\" [shape=note, style=dashed, label=\"skipRange(>=0.0.0)\\ne\\n..\\na\\n5 entries\"];\n    \"foo/stable/f skipRange 0\" -> \"foo/stable/f\" [label=\"skipRange\", style=dashed];\n"), "{d}");
        assert_eq!(d.matches("->").count(), 5 + 3 + 1);
    }

    #[test]
    fn large_mermaid_is_split_under_the_limit() {
        let mut text = String::new();
        for p in 0..40 {
            let pkg = format!("package-with-a-long-name-{p:03}");
            text.push_str(&format!("---\nschema: olm.package\nname: {pkg}\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: {pkg}\nname: stable\nentries:\n"));
            for i in 0..10 {
                text.push_str(&format!("- name: {pkg}.v1.{i}.0\n"));
                if i > 0 {
                    text.push_str(&format!("  replaces: {pkg}.v1.{}.0\n", i - 1));
                }
            }
        }
        let out = mermaid(&cfg(&text), None, None, false);
        let blocks: Vec<&str> = out.split("```mermaid\n").skip(1).collect();
        assert_eq!(blocks.len(), 40);
        for b in blocks {
            assert!(b.len() <= MERMAID_MAX_TEXT);
            assert!(b.starts_with("graph LR\n"));
        }
    }
}
