//! A bundle directory rendered as the `olm.bundle` blob `opm render` produces.
//!
//! Facts followed (operator-registry `pkg/registry/parse.go`, `bundle.go`,
//! `registry_to_model.go`, `alpha/action/render.go`):
//! - only the first document of each top-level manifest file is read, and only the first CSV;
//! - `olm.gvk` comes from every version of every bundled CRD and from owned API services, plus
//!   `olm.gvk` entries of `metadata/properties.yaml` and the CSV `olm.properties` annotation;
//!   every CSV-owned CRD must be present in the bundle;
//! - `olm.gvk.required` from required CRDs and API services and `dependencies.yaml` `olm.gvk`;
//!   `olm.package.required` from `dependencies.yaml` `olm.package` (`version` becomes
//!   `versionRange`); other property and dependency types pass through;
//! - properties are sorted by type, then by value JSON; `olm.bundle.object` properties (one per
//!   object, base64 of its JSON) go last;
//! - with an image, `olm.csv.metadata` replaces the objects (opm's
//!   `bundle-object-to-csv-metadata` migration, which appends it after the sorted properties);
//! - `relatedImages`: the CSV's own list, then the bundle image, then every container and init
//!   container image of the install strategy, without repeats, and then sorted by image with
//!   Go's `sort.Slice` (`alpha/action/render.go`, since operator-registry#771). That sort is not
//!   stable: entries of one image under several names end in the order Go's pdqsort leaves them,
//!   so [`crate::gosort`] runs the same algorithm.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::csv_types::{api_services, crd_descriptions, csv_metadata};
use super::load::{
    BundleDir, BundleError, crd_versions, err, field, keys, kind_of, list_at, load_bundle, str_at,
};
use crate::fbc::node::{Node, Pos, Value};
use crate::fbc::write::map;

/// How a rendered bundle carries its manifests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectMode {
    /// `olm.csv.metadata` (needs an image; what catalogs carry today).
    CsvMetadata,
    /// One `olm.bundle.object` per manifest (opm's default; works without an image).
    BundleObjects,
}

fn n(value: Value) -> Node {
    Node::new(Pos::default(), value)
}

fn s(v: &str) -> Node {
    n(Value::Str(v.to_string()))
}

fn prop(type_: &str, value: Node) -> (String, Node) {
    (type_.to_string(), value)
}

fn gvk(group: &str, kind: &str, version: &str) -> Node {
    map(vec![
        ("group", s(group)),
        ("kind", s(kind)),
        ("version", s(version)),
    ])
}

/// JSON as Go's `json.Marshal` writes it (HTML characters escaped), for `olm.bundle.object`.
fn go_marshal(node: &Node) -> String {
    let json = node.to_json();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// The `type`/`value` pairs of a properties or dependencies list (malformed items skipped, as
/// they fail opm's decoding of the whole file; validation reports them).
fn typed_items(list: &Node) -> Vec<(String, Node)> {
    match &list.value {
        Value::Seq(items) => items
            .iter()
            .filter_map(|it| {
                let t = field(it, &["type"])?.as_str()?.to_string();
                let v = field(it, &["value"])
                    .cloned()
                    .unwrap_or_else(|| n(Value::Null));
                Some((t, v))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The rendered blob and what went into it.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The `olm.bundle` blob.
    pub blob: Node,
    /// The bundle name (CSV `metadata.name`).
    pub name: String,
    /// The package (annotations).
    pub package: String,
}

/// Renders the bundle directory `dir`.
pub fn render_dir(dir: &Path, image: &str, mode: ObjectMode) -> Result<Rendered, BundleError> {
    render(&load_bundle(dir)?, image, mode)
}

/// Renders a loaded bundle.
pub fn render(b: &BundleDir, image: &str, mode: ObjectMode) -> Result<Rendered, BundleError> {
    let manifests = b.dir.join("manifests");
    // opm skips files it cannot decode (with a warning) and renders a bundle that lacks them;
    // refusing is safer.
    if let Some(p) = b.problems.first() {
        return Err(p.clone());
    }
    // The objects opm reads: first document per file, objects only, first CSV only.
    let mut objects: Vec<(&Arc<Path>, &Node)> = Vec::new();
    let mut csv_seen = false;
    for (p, d) in b.first_docs() {
        if !matches!(d.value, Value::Map(_)) {
            continue;
        }
        if kind_of(d) == Some("ClusterServiceVersion") {
            if csv_seen {
                continue;
            }
            csv_seen = true;
        }
        objects.push((p, d));
    }
    if objects.is_empty() {
        return Err(err(
            &manifests,
            Pos::default(),
            "no bundle objects found: add the CSV and CRD manifests",
        ));
    }
    let (csv_path, csv) = b.csv().ok_or_else(|| {
        err(
            &manifests,
            Pos::default(),
            "no ClusterServiceVersion in the bundle: a registry+v1 bundle needs one",
        )
    })?;
    let at = |node: Option<&Node>| node.map_or(csv.pos, |x| x.pos);
    let name = str_at(csv, &["metadata", "name"])
        .filter(|x| !x.is_empty())
        .ok_or_else(|| err(csv_path, csv.pos, "the CSV has no metadata.name"))?
        .to_string();
    let version = str_at(csv, &["spec", "version"])
        .filter(|x| !x.is_empty())
        .ok_or_else(|| {
            err(
                csv_path,
                at(field(csv, &["spec", "version"])),
                format!("CSV {name}: spec.version must be a semver string"),
            )
        })?
        .to_string();
    let release = str_at(csv, &["spec", "release"]).unwrap_or("").to_string();
    let ann = b.annotations.as_ref().ok_or_else(|| {
        err(
            &b.dir.join("metadata"),
            Pos::default(),
            "could not find the annotations file: add metadata/annotations.yaml with an `annotations` block",
        )
    })?;
    let package = b.annotation(keys::PACKAGE).unwrap_or("").to_string();
    if package.is_empty() {
        return Err(err(
            &ann.path,
            ann.node.pos,
            format!("annotation {} is missing", keys::PACKAGE),
        ));
    }

    // Provided APIs: every version of every bundled CRD, plus owned API services.
    let mut provided: BTreeSet<(String, String, String, String)> = BTreeSet::new(); // group, version, kind, plural
    for c in objects.iter().filter_map(|(_, d)| crd_versions(d)) {
        for (v, _) in &c.versions {
            provided.insert((
                c.group.to_string(),
                v.to_string(),
                c.kind.to_string(),
                c.plural.to_string(),
            ));
        }
    }
    for (name, group, version, kind) in api_services(csv, true) {
        provided.insert((group, version, kind, name));
    }
    for (plural, group, version, kind) in crd_descriptions(csv, true) {
        if !provided.contains(&(group.clone(), version.clone(), kind.clone(), plural.clone())) {
            return Err(err(
                csv_path,
                at(field(csv, &["spec", "customresourcedefinitions", "owned"])),
                format!(
                    "CSV {name} owns {plural}.{group} {version} {kind}, but no CRD in manifests/ provides it: add the CRD manifest or fix the owned entry"
                ),
            ));
        }
    }

    // Bundle.Properties: properties.yaml, then the derived ones (package first, then the CSV's
    // olm.properties annotation, then provided GVKs), without repeats.
    let mut props: Vec<(String, Node)> = b
        .properties
        .as_ref()
        .map(|m| typed_items(&m.node))
        .unwrap_or_default();
    let mut pkg_value = vec![("packageName", s(&package)), ("version", s(&version))];
    if !release.is_empty() {
        pkg_value.push(("release", s(&release)));
    }
    let derived_package = map(pkg_value);
    props.push(prop("olm.package", derived_package.clone()));
    if let Some(a) = str_at(csv, &["metadata", "annotations", "olm.properties"]) {
        let mut docs = Vec::new();
        if crate::fbc::json::parse_stream(a, |d| docs.push(d)).is_ok()
            && let Some(list) = docs.first()
        {
            props.extend(typed_items(list));
        }
    }
    for (g, v, k, _) in &provided {
        props.push(prop("olm.gvk", gvk(g, k, v)));
    }
    let mut seen = HashSet::new();
    props.retain(|(t, v)| seen.insert((t.clone(), v.to_json())));

    // ObjectsAndPropertiesFromBundle.
    let mut provided_gvks: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut required_gvks: BTreeSet<(String, String, String)> = BTreeSet::new();
    // The last olm.package wins; the derived one is always among the properties.
    let mut package_prop = derived_package;
    let mut others: Vec<(String, Node)> = Vec::new();
    let gvk_of = |v: &Node| {
        let g = |k| str_at(v, &[k]).unwrap_or("").to_string();
        (g("group"), g("kind"), g("version"))
    };
    for (t, v) in props {
        match t.as_str() {
            "olm.gvk" => {
                provided_gvks.insert(gvk_of(&v));
            }
            "olm.package" => package_prop = v,
            _ => others.push((t, v)),
        }
    }
    let mut package_required = Vec::new();
    if let Some(deps) = &b.dependencies {
        for (t, v) in typed_items(&deps.node) {
            match t.as_str() {
                "olm.gvk" => {
                    required_gvks.insert(gvk_of(&v));
                }
                "olm.package" => {
                    let g = |k| str_at(&v, &[k]).unwrap_or("").to_string();
                    package_required.push(map(vec![
                        ("packageName", s(&g("packageName"))),
                        ("versionRange", s(&g("version"))),
                    ]));
                }
                _ => others.push((t, v)),
            }
        }
    }
    for (_, group, version, kind) in crd_descriptions(csv, false) {
        required_gvks.insert((group, kind, version));
    }
    for (_, group, version, kind) in api_services(csv, false) {
        required_gvks.insert((group, kind, version));
    }
    let mut out: Vec<(String, Node)> = Vec::new();
    out.push(prop("olm.package", package_prop));
    for (g, k, v) in &provided_gvks {
        out.push(prop("olm.gvk", gvk(g, k, v)));
    }
    for (g, k, v) in &required_gvks {
        out.push(prop("olm.gvk.required", gvk(g, k, v)));
    }
    for v in package_required {
        out.push(prop("olm.package.required", v));
    }
    out.extend(others);
    let mut keyed: Vec<(String, String, Node)> = out
        .into_iter()
        .map(|(t, v)| {
            let k = v.to_json();
            (t, k, v)
        })
        .collect();
    keyed.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let mut properties: Vec<Node> = keyed
        .into_iter()
        .map(|(t, _, v)| map(vec![("type", s(&t)), ("value", v)]))
        .collect();
    match mode {
        ObjectMode::CsvMetadata => {
            let meta = csv_metadata(csv).map_err(|e| {
                err(
                    csv_path,
                    e.pos,
                    format!(
                        "CSV {name}: `{}` is {}, expected {} (opm cannot decode this CSV)",
                        e.path, e.found, e.expected
                    ),
                )
            })?;
            properties.push(map(vec![("type", s("olm.csv.metadata")), ("value", meta)]));
        }
        ObjectMode::BundleObjects => {
            let mut objs: Vec<String> = objects
                .iter()
                .map(|(_, d)| crate::encoding::base64(go_marshal(d).as_bytes()))
                .collect();
            objs.sort();
            for data in objs {
                properties.push(map(vec![
                    ("type", s("olm.bundle.object")),
                    ("value", map(vec![("data", s(&data))])),
                ]));
            }
        }
    }

    // relatedImages.
    let mut related: Vec<(String, String)> = list_at(csv, &["spec", "relatedImages"])
        .iter()
        .map(|r| {
            (
                str_at(r, &["name"]).unwrap_or("").to_string(),
                str_at(r, &["image"]).unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut all: HashSet<String> = related.iter().map(|(_, i)| i.clone()).collect();
    if !image.is_empty() && !all.contains(image) {
        related.push((String::new(), image.to_string()));
    }
    let mut op_images = BTreeSet::new();
    if str_at(csv, &["spec", "install", "strategy"]) == Some("deployment") {
        for d in list_at(csv, &["spec", "install", "spec", "deployments"]) {
            for k in ["containers", "initContainers"] {
                for c in list_at(d, &["spec", "template", "spec", k]) {
                    op_images.insert(str_at(c, &["image"]).unwrap_or("").to_string());
                }
            }
        }
    }
    for img in op_images {
        if all.insert(img.clone()) {
            related.push((String::new(), img));
        }
    }
    crate::gosort::slice(&mut related, |a, b| a.1 < b.1);

    let mut blob = vec![
        ("schema", s("olm.bundle")),
        ("name", s(&name)),
        ("package", s(&package)),
        ("image", s(image)),
        ("properties", n(Value::Seq(properties))),
    ];
    if !related.is_empty() {
        blob.push((
            "relatedImages",
            n(Value::Seq(
                related
                    .iter()
                    .map(|(nm, img)| map(vec![("name", s(nm)), ("image", s(img))]))
                    .collect(),
            )),
        ));
    }
    Ok(Rendered {
        blob: map(blob),
        name,
        package,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_marshal_escapes_html() {
        let mut doc = None;
        crate::fbc::yaml::parse_documents("a: '<b> & c'\n", |d| doc = Some(d)).expect("yaml");
        assert_eq!(
            go_marshal(&doc.expect("doc")),
            r#"{"a":"\u003cb\u003e \u0026 c"}"#
        );
    }
}
