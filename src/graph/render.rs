//! Pictures of upgrade graphs: JSON (nodes, typed edges, head per channel), an indented text
//! view, Graphviz DOT, and mermaid in the shape `opm alpha render-graph` draws (`graph LR`, one
//! subgraph per package and channel, node ids `<pkg>-<channel>-<bundle>`, edges old → new
//! labelled `replace`, `skip`, `skipRange(<range>)`), split into one diagram per package (and per
//! channel when a package alone passes mermaid's default `maxTextSize` of 30,000 characters).

use std::cmp::Ordering;
use std::fmt::Write as _;

use petgraph::graph::NodeIndex;
use serde::Serialize;

use super::{CatalogGraphs, ChannelGraph, EdgeKind, compare_versions};

/// Mermaid's default `maxTextSize`.
pub const MERMAID_MAX_TEXT: usize = 30_000;

#[derive(Serialize)]
struct JsonNode {
    name: String,
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    release: Option<String>,
    skipped: bool,
}

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
struct JsonEdge {
    from: String,
    to: String,
    kind: EdgeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    range: Option<String>,
}

#[derive(Serialize)]
struct JsonChannel {
    name: String,
    head: Option<String>,
    nodes: Vec<JsonNode>,
    edges: Vec<JsonEdge>,
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

fn sorted_edges(g: &ChannelGraph<'_>) -> Vec<JsonEdge> {
    let mut edges: Vec<JsonEdge> = g
        .graph
        .edge_indices()
        .filter_map(|e| {
            let (f, t) = g.graph.edge_endpoints(e)?;
            Some(JsonEdge {
                from: g.graph[f].name.clone(),
                to: g.graph[t].name.clone(),
                kind: g.graph[e].kind,
                range: g.graph[e].range.clone(),
            })
        })
        .collect();
    edges.sort();
    edges
}

/// The JSON document for `graphs`.
pub fn json(graphs: &CatalogGraphs<'_>) -> String {
    let packages: Vec<JsonPackage> = graphs
        .packages
        .iter()
        .map(|(name, chans)| JsonPackage {
            name: name.clone(),
            default_channel: graphs.default_channels.get(name).cloned(),
            channels: chans
                .values()
                .map(|g| JsonChannel {
                    name: g.channel.clone(),
                    head: g.head.map(|h| g.graph[h].name.clone()),
                    nodes: nodes_newest_first(g)
                        .into_iter()
                        .map(|n| {
                            let e = &g.graph[n];
                            JsonNode {
                                name: e.name.clone(),
                                version: e.version.as_ref().map(|v| v.to_string()),
                                release: e.release.clone(),
                                skipped: e.skipped,
                            }
                        })
                        .collect(),
                    edges: sorted_edges(g),
                })
                .collect(),
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&serde_json::json!({ "packages": packages }))
        .unwrap_or_default();
    s.push('\n');
    s
}

/// An indented text view: per channel, entries newest first with the edges into them.
pub fn text(graphs: &CatalogGraphs<'_>) -> String {
    let mut out = String::new();
    for (name, chans) in &graphs.packages {
        let def = graphs
            .default_channels
            .get(name)
            .map_or("?", String::as_str);
        let _ = writeln!(out, "{name} (default channel: {def})");
        for g in chans.values() {
            let head = g
                .head
                .map_or("<no single head>".to_string(), |h| g.graph[h].name.clone());
            let _ = writeln!(out, "  channel {}  head {head}", g.channel);
            let edges = sorted_edges(g);
            for n in nodes_newest_first(g) {
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
                let _ = writeln!(out, "    {} {}{marks}", e.name, e.version_str());
                let from: Vec<String> = edges
                    .iter()
                    .filter(|x| x.to == e.name)
                    .map(|x| match &x.range {
                        Some(r) => format!("{} ({} {r})", x.from, x.kind.as_str()),
                        None => format!("{} ({})", x.from, x.kind.as_str()),
                    })
                    .collect();
                if !from.is_empty() {
                    let _ = writeln!(out, "      <- {}", from.join(", "));
                }
                let entry = g.entry(n);
                if !entry.replaces.is_empty() && g.node(&entry.replaces).is_none() {
                    let _ = writeln!(
                        out,
                        "      <- {} (replaces, not in channel)",
                        entry.replaces
                    );
                }
            }
        }
    }
    out
}

fn dot_id(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Graphviz DOT: one cluster per package channel, the head bold, skipped entries dashed.
pub fn dot(graphs: &CatalogGraphs<'_>) -> String {
    let mut out = String::from("digraph upgrades {\n  rankdir=LR;\n  node [shape=box];\n");
    for (pkg, chans) in &graphs.packages {
        for g in chans.values() {
            let id = |n: NodeIndex| dot_id(&format!("{pkg}/{}/{}", g.channel, g.graph[n].name));
            let _ = writeln!(
                out,
                "  subgraph {} {{",
                dot_id(&format!("cluster_{pkg}/{}", g.channel))
            );
            let _ = writeln!(
                out,
                "    label={};",
                dot_id(&format!("{pkg} / {}", g.channel))
            );
            for n in nodes_newest_first(g) {
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
                let _ = writeln!(
                    out,
                    "    {} [label={}{style}];",
                    id(n),
                    dot_id(&format!("{}\n{}", e.name, e.version_str()))
                );
            }
            for e in sorted_edges(g) {
                let label = match &e.range {
                    Some(r) => format!("skipRange({r})"),
                    None => e.kind.as_str().to_string(),
                };
                let (Some(f), Some(t)) = (g.node(&e.from), g.node(&e.to)) else {
                    continue;
                };
                let _ = writeln!(
                    out,
                    "    {} -> {} [label={}];",
                    id(f),
                    id(t),
                    dot_id(&label)
                );
            }
            out.push_str("  }\n");
        }
    }
    out.push_str("}\n");
    out
}

fn mermaid_channel(pkg: &str, g: &ChannelGraph<'_>, out: &mut String) {
    let id = |n: NodeIndex| format!("{pkg}-{}-{}", g.channel, g.graph[n].name);
    let _ = writeln!(out, "    subgraph {pkg}-{}[\"{}\"]", g.channel, g.channel);
    for n in nodes_newest_first(g) {
        let _ = writeln!(out, "      {}[\"{}\"]", id(n), g.graph[n].name);
    }
    let mut edges = sorted_edges(g);
    // opm draws edges from newer targets first; keep a stable order by target version.
    edges.sort_by(|a, b| {
        let (ta, tb) = (g.node(&a.to), g.node(&b.to));
        match (ta, tb) {
            (Some(x), Some(y)) => compare_versions(g.graph[y].key(), g.graph[x].key()),
            _ => Ordering::Equal,
        }
        .then_with(|| a.cmp(b))
    });
    for e in edges {
        let (Some(f), Some(t)) = (g.node(&e.from), g.node(&e.to)) else {
            continue;
        };
        let label = match (&e.kind, &e.range) {
            (EdgeKind::Replaces, _) => "replace".to_string(),
            (EdgeKind::Skips, _) => "skip".to_string(),
            (EdgeKind::SkipRange, r) => format!("\"skipRange({})\"", r.as_deref().unwrap_or("")),
        };
        let _ = writeln!(out, "      {}-- {label} --> {}", id(f), id(t));
    }
    for n in g.graph.node_indices().filter(|&n| g.graph[n].skipped) {
        let _ = writeln!(out, "      class {} skipped", id(n));
    }
    out.push_str("    end\n");
}

const MERMAID_HEADER: &str = "graph LR\n  classDef deprecated fill:#E8960F\n  classDef skipped stroke:#FF0000,stroke-width:4px\n  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n";

/// Mermaid diagrams as Markdown: one fenced `mermaid` block per package, or per channel when a
/// package's diagram would pass [`MERMAID_MAX_TEXT`].
pub fn mermaid(graphs: &CatalogGraphs<'_>) -> String {
    let mut blocks = Vec::new();
    for (pkg, chans) in &graphs.packages {
        let mut whole = String::from(MERMAID_HEADER);
        let _ = writeln!(whole, "  subgraph {pkg}[\"{pkg}\"]");
        for g in chans.values() {
            mermaid_channel(pkg, g, &mut whole);
        }
        whole.push_str("  end\n");
        if whole.len() <= MERMAID_MAX_TEXT {
            blocks.push(whole);
            continue;
        }
        for g in chans.values() {
            let mut one = String::from(MERMAID_HEADER);
            let _ = writeln!(one, "  subgraph {pkg}[\"{pkg}\"]");
            mermaid_channel(pkg, g, &mut one);
            one.push_str("  end\n");
            blocks.push(one);
        }
    }
    blocks
        .into_iter()
        .map(|b| format!("```mermaid\n{b}```\n"))
        .collect::<Vec<_>>()
        .join("\n")
}
