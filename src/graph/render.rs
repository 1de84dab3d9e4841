//! Pictures of upgrade graphs: JSON (nodes, typed edges, head per channel), an indented text
//! view, Graphviz DOT, and mermaid as `opm alpha render-graph` writes it (operator-registry
//! `alpha/declcfg/write.go`, `MermaidWriter.WriteChannels`): the same text for a diagram that fits
//! mermaid's default `maxTextSize` of 30,000 characters, split per package (and per channel) when
//! it does not.

use std::fmt::Write as _;

use petgraph::graph::NodeIndex;
use serde::Serialize;

use std::collections::{BTreeMap, HashMap};

use semver::Version;

use super::{CatalogGraphs, ChannelGraph, EdgeKind, compare_versions};
use crate::fbc::decl::{Channel, ChannelEntry, DeclarativeConfig};
use crate::range::Range;

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

/// Go's `%q` for the strings that occur here (names and ranges): quotes and backslashes escaped.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    crate::fbc::node::write_json_string(&mut out, s);
    out
}

/// One channel's mermaid lines as `opm alpha render-graph` writes them (without
/// `--draw-v0-semantics`): entries by decreasing version, then for each entry its `skip`,
/// `skipRange(...)` (one edge per channel entry whose version is in the range, in entry order)
/// and `replace` edges, old → new.
fn mermaid_channel(c: &Channel, versions: &HashMap<&str, Version>, out: &mut String) {
    let zero = Version::new(0, 0, 0);
    let ver = |n: &str| versions.get(n).unwrap_or(&zero);
    let channel_id = format!("{}-{}", c.package, c.name);
    let _ = writeln!(out, "    %% channel {}", go_quote(&c.name));
    let _ = writeln!(out, "    subgraph {channel_id}[{}]", go_quote(&c.name));
    let mut sorted: Vec<&ChannelEntry> = c.entries.iter().collect();
    sorted.sort_by(|a, b| ver(&b.name).cmp_precedence(ver(&a.name)));
    for ce in sorted {
        let entry_id = format!("{channel_id}-{}", ce.name);
        let to = format!("{entry_id}[{}]", go_quote(&ce.name));
        let _ = writeln!(out, "      {to}");
        for sk in &ce.skips {
            let _ = writeln!(
                out,
                "      {channel_id}-{sk}[{}]-- skip --> {to}",
                go_quote(sk)
            );
        }
        if !ce.skip_range.is_empty()
            && let Ok(r) = Range::parse(&ce.skip_range)
        {
            for e in &c.entries {
                if r.contains(ver(&e.name)) {
                    let _ = writeln!(
                        out,
                        "      {channel_id}-{}[{}]-- \"skipRange({})\" --> {to}",
                        e.name,
                        go_quote(&e.name),
                        ce.skip_range
                    );
                }
            }
        }
        if !ce.replaces.is_empty() {
            let _ = writeln!(
                out,
                "      {channel_id}-{}[{}]-- replace --> {to}",
                ce.replaces,
                go_quote(&ce.replaces)
            );
        }
    }
    out.push_str("    end\n");
}

const MERMAID_HEADER: &str = "graph LR\n  classDef deprecated fill:#E8960F\n  classDef skipped stroke:#FF0000,stroke-width:4px\n  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n";

/// One mermaid document for `channels` (all of one or more packages), in opm's layout.
fn mermaid_doc(
    cfg: &DeclarativeConfig,
    channels: &[&Channel],
    versions: &HashMap<&str, Version>,
) -> String {
    let mut by_pkg: BTreeMap<&str, String> = BTreeMap::new();
    let mut sorted: Vec<&Channel> = channels.to_vec();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for c in &sorted {
        mermaid_channel(c, versions, by_pkg.entry(&c.package).or_default());
    }
    let mut out = String::from(MERMAID_HEADER);
    for (pkg, body) in &by_pkg {
        let _ = writeln!(out, "  %% package {}", go_quote(pkg));
        let _ = writeln!(out, "  subgraph {}", go_quote(pkg));
        out.push_str(body);
        out.push_str("  end\n");
    }
    // Deprecation styling, as opm does it.
    let mut dep_pkg = None;
    let mut dep_channels = Vec::new();
    let mut dep_bundles = Vec::new();
    for d in cfg
        .deprecations
        .iter()
        .filter(|d| by_pkg.contains_key(d.package.as_str()))
    {
        for e in &d.entries {
            match e.reference.schema.as_str() {
                "olm.package" => dep_pkg = Some(d.package.clone()),
                "olm.channel" => dep_channels.push(e.reference.name.clone()),
                "olm.bundle" => dep_bundles.push(e.reference.name.clone()),
                _ => {}
            }
        }
    }
    if let Some(p) = dep_pkg {
        let _ = writeln!(out, "style {p} fill:#989695");
    }
    for c in &sorted {
        if dep_channels.contains(&c.name) {
            let _ = writeln!(out, "style {}-{} fill:#DCD0FF", c.package, c.name);
        }
    }
    let mut ids: Vec<String> = sorted
        .iter()
        .flat_map(|c| {
            c.entries
                .iter()
                .filter(|e| dep_bundles.contains(&e.name))
                .map(move |e| format!("{}-{}-{}", c.package, c.name, e.name))
        })
        .collect();
    if !ids.is_empty() {
        ids.sort();
        let _ = writeln!(out, "class {} deprecated", ids.join(","));
    }
    out
}

/// Mermaid as `opm alpha render-graph` draws it. When the whole diagram passes mermaid's default
/// `maxTextSize` ([`MERMAID_MAX_TEXT`]), it is split into Markdown with one fenced `mermaid`
/// block per package (per channel for packages that are too large on their own).
pub fn mermaid(cfg: &DeclarativeConfig, package: Option<&str>, channel: Option<&str>) -> String {
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
    let whole = mermaid_doc(cfg, &channels, &versions);
    if whole.len() <= MERMAID_MAX_TEXT {
        return whole;
    }
    let mut by_pkg: BTreeMap<&str, Vec<&Channel>> = BTreeMap::new();
    for c in &channels {
        by_pkg.entry(&c.package).or_default().push(c);
    }
    let mut blocks = Vec::new();
    for chans in by_pkg.values() {
        let doc = mermaid_doc(cfg, chans, &versions);
        if doc.len() <= MERMAID_MAX_TEXT || chans.len() == 1 {
            blocks.push(doc);
        } else {
            let mut sorted = chans.clone();
            sorted.sort_by(|a, b| a.name.cmp(&b.name));
            blocks.extend(sorted.iter().map(|c| mermaid_doc(cfg, &[*c], &versions)));
        }
    }
    blocks
        .into_iter()
        .map(|b| format!("```mermaid\n{b}```\n"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(mermaid(&cfg(&text), None, None), want);
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
        let out = mermaid(&cfg(&text), None, None);
        let blocks: Vec<&str> = out.split("```mermaid\n").skip(1).collect();
        assert_eq!(blocks.len(), 40);
        for b in blocks {
            assert!(b.len() <= MERMAID_MAX_TEXT);
            assert!(b.starts_with("graph LR\n"));
        }
    }
}
