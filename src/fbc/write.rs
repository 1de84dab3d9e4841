//! Canonical output, as opm's `declcfg.WriteJSON`/`WriteYAML`/`WriteFS` write a config:
//! packages sorted by name; per package the `olm.package` blob, channels by name, bundles by
//! name, custom blobs (stable by schema), deprecations; package-less custom blobs last. Blobs are
//! re-encoded from the typed structs (unknown fields dropped, Go struct field order for JSON;
//! YAML goes through JSON and so has sorted keys).

use super::decl::{Bundle, Channel, DeclarativeConfig, Deprecations, Other, Package};
use super::emit_yaml;
use super::index::Index;
use super::node::{Entry, Node, Pos, Value, sorted_unique, write_go_float, write_json_string};
use super::property::Property;

/// Output encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A stream of 4-space-indented JSON objects.
    Json,
    /// `---`-separated YAML documents.
    Yaml,
}

impl Format {
    /// The file extension opm uses.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Yaml => "yaml",
        }
    }
}

fn str_node(s: &str) -> Node {
    Node::new(Pos::default(), Value::Str(s.to_string()))
}

/// An object node with `fields` in order (no positions).
pub fn map(fields: Vec<(&str, Node)>) -> Node {
    Node::new(
        Pos::default(),
        Value::Map(
            fields
                .into_iter()
                .map(|(k, v)| Entry {
                    key: k.to_string(),
                    key_pos: Pos::default(),
                    value: v,
                })
                .collect(),
        ),
    )
}

fn seq(items: Vec<Node>) -> Node {
    // Go marshals a nil slice as null.
    if items.is_empty() {
        Node::new(Pos::default(), Value::Null)
    } else {
        Node::new(Pos::default(), Value::Seq(items))
    }
}

/// A copy of `n` with object keys sorted and de-duplicated (how a JSON-decoded value re-encodes).
pub fn sorted(n: &Node) -> Node {
    let value = match &n.value {
        Value::Map(entries) => Value::Map(
            sorted_unique(entries)
                .into_iter()
                .map(|e| Entry {
                    key: e.key.clone(),
                    key_pos: e.key_pos,
                    value: sorted(&e.value),
                })
                .collect(),
        ),
        Value::Seq(items) => Value::Seq(items.iter().map(sorted).collect()),
        v => v.clone(),
    };
    Node::new(n.pos, value)
}

fn properties(fields: &mut Vec<(&str, Node)>, props: &[Property]) {
    if !props.is_empty() {
        let items = props
            .iter()
            .map(|p| {
                map(vec![
                    ("type", str_node(&p.type_)),
                    ("value", sorted(&p.value)),
                ])
            })
            .collect();
        fields.push(("properties", seq(items)));
    }
}

/// The output node of an `olm.package` blob.
pub fn package_node(p: &Package) -> Node {
    let mut f = vec![
        ("schema", str_node("olm.package")),
        ("name", str_node(&p.name)),
        ("defaultChannel", str_node(&p.default_channel)),
    ];
    if let Some(icon) = &p.icon {
        let data: String = icon
            .base64data
            .chars()
            .filter(|c| *c != '\n' && *c != '\r')
            .collect();
        f.push((
            "icon",
            map(vec![
                ("base64data", str_node(&data)),
                ("mediatype", str_node(&icon.mediatype)),
            ]),
        ));
    }
    if !p.description.is_empty() {
        f.push(("description", str_node(&p.description)));
    }
    properties(&mut f, &p.properties);
    map(f)
}

/// The output node of an `olm.channel` blob.
pub fn channel_node(c: &Channel) -> Node {
    let entries = c
        .entries
        .iter()
        .map(|e| {
            let mut f = vec![("name", str_node(&e.name))];
            if !e.replaces.is_empty() {
                f.push(("replaces", str_node(&e.replaces)));
            }
            if !e.skips.is_empty() {
                f.push(("skips", seq(e.skips.iter().map(|s| str_node(s)).collect())));
            }
            if !e.skip_range.is_empty() {
                f.push(("skipRange", str_node(&e.skip_range)));
            }
            map(f)
        })
        .collect();
    let mut f = vec![
        ("schema", str_node("olm.channel")),
        ("package", str_node(&c.package)),
        ("name", str_node(&c.name)),
        ("entries", seq(entries)),
    ];
    properties(&mut f, &c.properties);
    map(f)
}

/// The output node of an `olm.bundle` blob.
pub fn bundle_node(b: &Bundle) -> Node {
    let mut f = vec![
        ("schema", str_node("olm.bundle")),
        ("package", str_node(&b.package)),
        ("name", str_node(&b.name)),
        ("image", str_node(&b.image)),
    ];
    properties(&mut f, &b.properties);
    if !b.related_images.is_empty() {
        let items = b
            .related_images
            .iter()
            .map(|r| {
                map(vec![
                    ("name", str_node(&r.name)),
                    ("image", str_node(&r.image)),
                ])
            })
            .collect();
        f.push(("relatedImages", seq(items)));
    }
    map(f)
}

/// The output node of an `olm.deprecations` blob.
pub fn deprecations_node(d: &Deprecations) -> Node {
    let entries = d
        .entries
        .iter()
        .map(|e| {
            let mut r = vec![("schema", str_node(&e.reference.schema))];
            if !e.reference.name.is_empty() {
                r.push(("name", str_node(&e.reference.name)));
            }
            map(vec![
                ("reference", map(r)),
                ("message", str_node(&e.message)),
            ])
        })
        .collect();
    map(vec![
        ("schema", str_node("olm.deprecations")),
        ("package", str_node(&d.package)),
        ("entries", seq(entries)),
    ])
}

fn other_node(o: &Other) -> Node {
    sorted(&o.node)
}

/// The canonical blobs grouped by package name (sorted); the package-less group, if any, comes
/// last with an empty name.
pub fn canonical(cfg: &DeclarativeConfig) -> Vec<(String, Vec<Node>)> {
    let idx = Index::new(cfg);
    let mut out = Vec::new();
    for (name, view) in &idx.packages {
        let mut nodes = Vec::new();
        nodes.extend(view.blobs.iter().map(|p| package_node(p)));
        for cs in view.channels.values() {
            nodes.extend(cs.iter().map(|c| channel_node(c)));
        }
        for bs in view.bundles.values() {
            nodes.extend(bs.iter().map(|b| bundle_node(b)));
        }
        let mut others = view.others.clone();
        others.sort_by(|a, b| a.schema.cmp(&b.schema));
        nodes.extend(others.iter().map(|o| other_node(o)));
        nodes.extend(view.deprecations.iter().map(|d| deprecations_node(d)));
        out.push((name.to_string(), nodes));
    }
    if !idx.global_others.is_empty() {
        let mut others = idx.global_others.clone();
        others.sort_by(|a, b| a.schema.cmp(&b.schema));
        out.push((
            String::new(),
            others.iter().map(|o| other_node(o)).collect(),
        ));
    }
    out
}

/// The whole of `cfg` as one text in canonical order and `format` (what `catalog fmt` writes,
/// concatenated).
pub fn canonical_text(cfg: &DeclarativeConfig, format: Format) -> String {
    let mut out = String::new();
    for (_, nodes) in canonical(cfg) {
        write_blobs(&nodes, format, &mut out);
    }
    out
}

/// Writes blobs in `format`.
pub fn write_blobs(nodes: &[Node], format: Format, out: &mut String) {
    for n in nodes {
        match format {
            Format::Yaml => {
                out.push_str("---\n");
                emit_yaml::write_yaml(n, out);
            }
            Format::Json => {
                write_json_indent(n, 0, out);
                out.push('\n');
            }
        }
    }
}

fn indent(out: &mut String, level: usize, unit: &str) {
    out.push('\n');
    for _ in 0..level {
        out.push_str(unit);
    }
}

/// Go `json.Encoder` with `SetIndent("", "    ")` and HTML escaping off; map keys in the
/// node's order.
pub fn write_json_indent(n: &Node, level: usize, out: &mut String) {
    write_json_indent_by(n, level, "    ", out);
}

/// Like [`write_json_indent`] with `unit` as the indentation step (Go `json.MarshalIndent`).
pub fn write_json_indent_by(n: &Node, level: usize, unit: &str, out: &mut String) {
    match &n.value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(f) => write_go_float(out, *f),
        Value::Str(s) => write_json_string(out, s),
        Value::Seq(items) if items.is_empty() => out.push_str("[]"),
        Value::Map(entries) if entries.is_empty() => out.push_str("{}"),
        Value::Seq(items) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, level + 1, unit);
                write_json_indent_by(it, level + 1, unit, out);
            }
            indent(out, level, unit);
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            for (i, e) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, level + 1, unit);
                write_json_string(out, &e.key);
                out.push_str(": ");
                write_json_indent_by(&e.value, level + 1, unit, out);
            }
            indent(out, level, unit);
            out.push('}');
        }
    }
}

/// The files of the canonical form: `<package>/catalog.<ext>` (blobs without a package in
/// `catalog.<ext>` at the root), as `opm`-style formatting writes them.
pub fn canonical_files(
    cfg: &DeclarativeConfig,
    format: Format,
) -> Vec<(std::path::PathBuf, String)> {
    canonical_files_in(cfg, format, &super::layout::Layout::default())
}

/// [`canonical_files`] with each package under its directory in `layout`
/// ([`super::layout::layout`]: the directory it already lives in) rather than its name.
pub fn canonical_files_in(
    cfg: &DeclarativeConfig,
    format: Format,
    layout: &super::layout::Layout,
) -> Vec<(std::path::PathBuf, String)> {
    canonical(cfg)
        .into_iter()
        .map(|(pkg, nodes)| {
            let name = format!("catalog.{}", format.ext());
            let rel = if pkg.is_empty() {
                std::path::PathBuf::from(name)
            } else {
                std::path::Path::new(layout.dir(&pkg)).join(name)
            };
            let mut s = String::new();
            write_blobs(&nodes, format, &mut s);
            (rel, s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_indent_like_go() {
        let n = map(vec![
            ("schema", str_node("olm.package")),
            ("e", seq(vec![])),
            (
                "l",
                Node::new(Pos::default(), Value::Seq(vec![str_node("a")])),
            ),
            ("m", map(vec![])),
        ]);
        let mut out = String::new();
        write_json_indent(&n, 0, &mut out);
        assert_eq!(
            out,
            "{\n    \"schema\": \"olm.package\",\n    \"e\": null,\n    \"l\": [\n        \"a\"\n    ],\n    \"m\": {}\n}"
        );
    }
}
