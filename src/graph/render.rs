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
                                deprecated: e.deprecated,
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
        let _ = writeln!(out, "{} (default channel: {})", esc(name), esc(def));
        for g in chans.values() {
            let head = g.head.map_or("<no single head>".to_string(), |h| {
                esc(&g.graph[h].name).to_string()
            });
            let _ = writeln!(out, "  channel {}  head {head}", esc(&g.channel));
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
                let _ = writeln!(out, "    {} {}{marks}", esc(&e.name), esc(e.version_str()));
                let from: Vec<String> = edges
                    .iter()
                    .filter(|x| x.to == e.name)
                    .map(|x| match &x.range {
                        Some(r) => format!("{} ({} {})", esc(&x.from), x.kind.as_str(), esc(r)),
                        None => format!("{} ({})", esc(&x.from), x.kind.as_str()),
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
                        esc(&entry.replaces)
                    );
                }
            }
        }
    }
    out
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
                    dot_lines(&[&e.name, &e.version_str()])
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
    deprecated_bundles: &'a [String],
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
fn mermaid_channel(
    c: &Channel,
    versions: &HashMap<&str, Version>,
    st: &mut MermaidState<'_>,
    out: &mut String,
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
    out.push_str("    end\n");
}

const MERMAID_HEADER: &str = "graph LR\n  classDef deprecated fill:#E8960F\n  classDef skipped stroke:#FF0000,stroke-width:4px\n  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n";

/// One mermaid document for `channels` (all of one or more packages), in opm's layout.
fn mermaid_doc(
    cfg: &DeclarativeConfig,
    channels: &[&Channel],
    versions: &HashMap<&str, Version>,
    draw_v0: bool,
) -> String {
    // Deprecations are matched by name only, as opm does.
    let mut dep_pkgs = std::collections::BTreeSet::new();
    let mut dep_channels = Vec::new();
    let mut dep_bundles = Vec::new();
    for d in &cfg.deprecations {
        for e in &d.entries {
            match e.reference.schema.as_str() {
                "olm.package" => {
                    dep_pkgs.insert(d.package.as_str());
                }
                "olm.channel" => dep_channels.push(e.reference.name.clone()),
                "olm.bundle" => dep_bundles.push(e.reference.name.clone()),
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
    let mut out = String::from(MERMAID_HEADER);
    let mut i = 0;
    while i < sorted.len() {
        let pkg = &sorted[i].package;
        let _ = writeln!(out, "  %% package {}", go_quote(pkg));
        let _ = writeln!(out, "  subgraph {}", go_quote(pkg));
        while i < sorted.len() && &sorted[i].package == pkg {
            mermaid_channel(sorted[i], versions, &mut st, &mut out);
            i += 1;
        }
        out.push_str("  end\n");
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
    out
}

/// Mermaid as `opm alpha render-graph` draws it. When the whole diagram passes mermaid's default
/// `maxTextSize` ([`MERMAID_MAX_TEXT`]), it is split into Markdown with one fenced `mermaid`
/// block per package (per channel for packages that are too large on their own).
pub fn mermaid(
    cfg: &DeclarativeConfig,
    package: Option<&str>,
    channel: Option<&str>,
    draw_v0: bool,
) -> String {
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
    let whole = mermaid_doc(cfg, &channels, &versions, draw_v0);
    if whole.len() <= MERMAID_MAX_TEXT {
        return whole;
    }
    let mut by_pkg: BTreeMap<&str, Vec<&Channel>> = BTreeMap::new();
    for c in &channels {
        by_pkg.entry(&c.package).or_default().push(c);
    }
    let mut blocks = Vec::new();
    for chans in by_pkg.values() {
        let doc = mermaid_doc(cfg, chans, &versions, draw_v0);
        if doc.len() <= MERMAID_MAX_TEXT || chans.len() == 1 {
            blocks.push(doc);
        } else {
            let mut sorted = chans.clone();
            sorted.sort_by(|a, b| a.name.cmp(&b.name));
            blocks.extend(
                sorted
                    .iter()
                    .map(|c| mermaid_doc(cfg, &[*c], &versions, draw_v0)),
            );
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
