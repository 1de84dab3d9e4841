//! The ClusterServiceVersion opm serves for a bundle that has no `olm.bundle.object` manifests
//! but one `olm.csv.metadata` property (operator-registry `pkg/api/model_to_api.go`,
//! `ConvertModelBundleToAPIBundle`): a stub CSV carrying the metadata, the package's icon, the
//! bundle's version and related images, with a `deployment` install strategy and no
//! deployments. OLM's package server lists operators from it, so its bytes are what
//! `json.Marshal` of operator-framework/api's `v1alpha1.ClusterServiceVersion` gives: fields in
//! Go declaration order, `omitempty` fields left out when empty, map keys sorted, compact, and
//! `<`, `>`, `&` escaped as `\u003c`, `\u003e`, `\u0026`.
//!
//! `metadata.creationTimestamp` is left out: apimachinery 0.33 (kubernetes#130989) stopped
//! writing a zero timestamp as `null`, and opm has been built with it since.

use std::sync::Arc;

use super::rope::{Interner, Rope, RopeWriter};
use crate::bundle::csv_types::metadata_field;
use crate::bundle::gotype::{Shape, is_empty};
use crate::fbc::decl::{Bundle, Package};
use crate::fbc::node::{Entry, Node, Pos, Value, write_go_float, write_json_string};

fn node(value: Value) -> Node {
    Node::new(Pos::default(), value)
}

fn text(s: &str) -> Node {
    node(Value::Str(s.to_string()))
}

/// An object from (key, value) pairs, in the order given.
fn object(fields: Vec<(&str, Node)>) -> Node {
    node(Value::Map(
        fields
            .into_iter()
            .map(|(key, value)| Entry {
                key: key.to_string(),
                key_pos: Pos::default(),
                value,
            })
            .collect(),
    ))
}

/// Compact JSON of `n` with object entries in the order they are (the order the CSV was built
/// in), as Go's encoder writes a struct; strings HTML-escaped as `json.Marshal` writes them (the
/// only place `<`, `>` and `&` can be). Long strings become shared pieces of the rope.
fn write_in_order(n: &Node, out: &mut RopeWriter) {
    match &n.value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(f) => {
            let mut number = String::new();
            write_go_float(&mut number, *f);
            out.push_str(&number);
        }
        Value::Str(s) => push_string(s, out),
        Value::Seq(items) => {
            out.push_str("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",");
                }
                write_in_order(item, out);
            }
            out.push_str("]");
        }
        Value::Map(entries) => {
            out.push_str("{");
            write_entries(entries, out);
            out.push_str("}");
        }
    }
}

/// `s` as a JSON string the way `json.Marshal` writes it (HTML-escaped).
fn push_string(s: &str, out: &mut RopeWriter) {
    let mut json = String::with_capacity(s.len() + 2);
    write_json_string(&mut json, s);
    if json.contains(['<', '>', '&']) {
        json = html_escaped(&json);
    }
    out.push_str(&json);
}

/// The members of an object, comma-separated, in order.
fn write_entries(entries: &[Entry], out: &mut RopeWriter) {
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(",");
        }
        push_string(&e.key, out);
        out.push_str(":");
        write_in_order(&e.value, out);
    }
}

/// Go's `json.Marshal` escapes `<`, `>` and `&` (they only occur inside strings in JSON).
pub fn html_escaped(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// Adds an `omitempty` field unless its value is empty (not a struct: those are always written).
fn optional(fields: &mut Vec<(&'static str, Node)>, key: &'static str, value: Node) {
    if !is_empty(Shape::Raw, &value) {
        fields.push((key, value));
    }
}

/// What the CSV takes from the package, worked out once per package.
#[derive(Debug, Clone)]
pub struct PackageInfo {
    /// The package's description (the CSV's when it has none).
    pub description: String,
    /// [`icon`] as JSON, shared by every bundle of the package.
    pub icon: Option<Arc<str>>,
}

impl PackageInfo {
    /// The package's description and icon.
    pub fn of(pkg: &Package) -> PackageInfo {
        PackageInfo {
            description: pkg.description.clone(),
            icon: icon(pkg).map(|n| {
                let mut interner = Interner::default();
                let mut w = RopeWriter::new(&mut interner);
                write_in_order(&n, &mut w);
                Arc::from(w.finish().to_string())
            }),
        }
    }
}

/// The icon list: the package's icon (its data decoded and encoded again as standard base64, as
/// Go's `[]byte` round trip does), or nothing.
pub fn icon(pkg: &Package) -> Option<Node> {
    let icon = pkg.icon.as_ref()?;
    let data = crate::encoding::decode_forgiving(&icon.base64data)
        .map(|bytes| crate::encoding::base64(&bytes))
        .unwrap_or_else(|_| icon.base64data.to_string());
    Some(node(Value::Seq(vec![object(vec![
        ("base64data", text(&data)),
        ("mediatype", text(&icon.mediatype)),
    ])])))
}

/// The CSV JSON for `bundle` from its `olm.csv.metadata` value `meta`, long strings interned in
/// `interner`; `None` when the value does not decode into `property.CSVMetadata` (opm refuses
/// such a catalog at start).
pub fn synthesized(
    bundle: &Bundle,
    pkg: Option<&PackageInfo>,
    version: &str,
    meta: &Node,
    interner: &mut Interner,
) -> Option<Rope> {
    // As opm holds it after loading: keys sorted and de-duplicated, which a `json.RawMessage`
    // inside it (a descriptor `value`) keeps when encoded again.
    let meta = crate::fbc::write::sorted(meta);
    let field = |name: &str| metadata_field(&meta, name).ok();
    let mut spec: Vec<(&str, Node)> = Vec::new();
    spec.push((
        "install",
        object(vec![
            ("strategy", text("deployment")),
            ("spec", object(vec![("deployments", node(Value::Null))])),
        ]),
    ));
    // OperatorVersion marshals blang's String() of the parsed version.
    let version = semver::Version::parse(version)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| "0.0.0".to_string());
    spec.push(("version", text(&version)));
    optional(&mut spec, "maturity", field("maturity")?);
    spec.push(("customresourcedefinitions", field("crdDescriptions")?));
    spec.push(("apiservicedefinitions", field("apiServiceDefinitions")?));
    optional(&mut spec, "nativeAPIs", field("nativeAPIs")?);
    optional(&mut spec, "minKubeVersion", field("minKubeVersion")?);
    spec.push(("displayName", field("displayName")?));
    let mut description = field("description")?;
    if is_empty(Shape::Str, &description) {
        description = text(pkg.map_or("", |p| p.description.as_str()));
    }
    optional(&mut spec, "description", description);
    optional(&mut spec, "keywords", field("keywords")?);
    optional(&mut spec, "maintainers", field("maintainers")?);
    spec.push(("provider", field("provider")?));
    optional(&mut spec, "links", field("links")?);
    // The icon goes between these: it is the package's, written once.
    let mut tail: Vec<(&str, Node)> = Vec::new();
    optional(&mut tail, "installModes", field("installModes")?);
    tail.push((
        "cleanup",
        object(vec![("enabled", node(Value::Bool(false)))]),
    ));
    let related: Vec<Node> = bundle
        .related_images
        .iter()
        .map(|r| object(vec![("name", text(&r.name)), ("image", text(&r.image))]))
        .collect();
    optional(&mut tail, "relatedImages", node(Value::Seq(related)));

    let mut metadata = vec![("name", text(&bundle.name))];
    optional(&mut metadata, "labels", field("labels")?);
    optional(&mut metadata, "annotations", field("annotations")?);
    let mut out = RopeWriter::new(interner);
    out.push_str(
        r#"{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1","metadata":"#,
    );
    write_in_order(&object(metadata), &mut out);
    out.push_str(r#","spec":{"#);
    let fields = |v: Vec<(&str, Node)>| match object(v).value {
        Value::Map(entries) => entries,
        _ => Vec::new(),
    };
    write_entries(&fields(spec), &mut out);
    if let Some(icon) = pkg.and_then(|p| p.icon.clone()) {
        out.push_str(r#","icon":"#);
        out.push_shared(icon);
    }
    out.push_str(",");
    write_entries(&fields(tail), &mut out);
    out.push_str(r#"},"status":{"cleanup":{}}}"#);
    Some(out.finish())
}
