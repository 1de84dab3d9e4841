//! The operator-framework/api `v1alpha1` types the `olm.csv.metadata` property goes through, as
//! [`Shape`]s, and the property built from a CSV the way operator-registry's
//! `property.MustBuildCSVMetadata` builds it.

use super::gotype::{Field, Shape, TypeError, encode, is_empty, opt, req};
use super::load::field;
use crate::fbc::node::{Entry, Node, Pos, Value};

const STR: Shape = Shape::Str;
static STRS: Shape = Shape::List(&Shape::Str);

static DESCRIPTOR: [Field; 5] = [
    req("path", STR),
    opt("displayName", STR),
    opt("description", STR),
    opt("x-descriptors", STRS),
    opt("value", Shape::Raw),
];
static DESCRIPTORS: Shape = Shape::List(&Shape::Struct(&DESCRIPTOR));

static RESOURCE: [Field; 3] = [req("name", STR), req("kind", STR), req("version", STR)];
static RESOURCES: Shape = Shape::List(&Shape::Struct(&RESOURCE));

static CRD_DESCRIPTION: [Field; 9] = [
    req("name", STR),
    req("version", STR),
    req("kind", STR),
    opt("displayName", STR),
    opt("description", STR),
    opt("resources", RESOURCES),
    opt("statusDescriptors", DESCRIPTORS),
    opt("specDescriptors", DESCRIPTORS),
    opt("actionDescriptors", DESCRIPTORS),
];
static CRD_DESCRIPTIONS: Shape = Shape::List(&Shape::Struct(&CRD_DESCRIPTION));

static API_SERVICE_DESCRIPTION: [Field; 12] = [
    req("name", STR),
    req("group", STR),
    req("version", STR),
    req("kind", STR),
    opt("deploymentName", STR),
    opt("containerPort", Shape::Int32),
    opt("displayName", STR),
    opt("description", STR),
    opt("resources", RESOURCES),
    opt("statusDescriptors", DESCRIPTORS),
    opt("specDescriptors", DESCRIPTORS),
    opt("actionDescriptors", DESCRIPTORS),
];
static API_SERVICE_DESCRIPTIONS: Shape = Shape::List(&Shape::Struct(&API_SERVICE_DESCRIPTION));

/// `CustomResourceDefinitions`.
pub static CRDS: [Field; 2] = [
    opt("owned", CRD_DESCRIPTIONS),
    opt("required", CRD_DESCRIPTIONS),
];
/// `APIServiceDefinitions`.
pub static API_SERVICES: [Field; 2] = [
    opt("owned", API_SERVICE_DESCRIPTIONS),
    opt("required", API_SERVICE_DESCRIPTIONS),
];
static INSTALL_MODE: [Field; 2] = [req("type", STR), req("supported", Shape::Bool)];
static APP_LINK: [Field; 2] = [opt("name", STR), opt("url", STR)];
static MAINTAINER: [Field; 2] = [opt("name", STR), opt("email", STR)];
static GVK: [Field; 3] = [req("group", STR), req("version", STR), req("kind", STR)];

/// One field of `olm.csv.metadata`: its name, where it comes from in the CSV, its type.
struct MetaField {
    name: &'static str,
    source: &'static [&'static str],
    shape: Shape,
    omitempty: bool,
}

const fn mf(
    name: &'static str,
    source: &'static [&'static str],
    shape: Shape,
    omitempty: bool,
) -> MetaField {
    MetaField {
        name,
        source,
        shape,
        omitempty,
    }
}

/// operator-registry `property.CSVMetadata`, field by field in declaration order.
static CSV_METADATA: [MetaField; 14] = [
    mf(
        "annotations",
        &["metadata", "annotations"],
        Shape::StrMap,
        true,
    ),
    mf(
        "apiServiceDefinitions",
        &["spec", "apiservicedefinitions"],
        Shape::Struct(&API_SERVICES),
        true,
    ),
    mf(
        "crdDescriptions",
        &["spec", "customresourcedefinitions"],
        Shape::Struct(&CRDS),
        true,
    ),
    mf("description", &["spec", "description"], STR, true),
    mf("displayName", &["spec", "displayName"], STR, true),
    mf(
        "installModes",
        &["spec", "installModes"],
        Shape::List(&Shape::Struct(&INSTALL_MODE)),
        true,
    ),
    mf("keywords", &["spec", "keywords"], STRS, true),
    mf("labels", &["metadata", "labels"], Shape::StrMap, true),
    mf(
        "links",
        &["spec", "links"],
        Shape::List(&Shape::Struct(&APP_LINK)),
        true,
    ),
    mf(
        "maintainers",
        &["spec", "maintainers"],
        Shape::List(&Shape::Struct(&MAINTAINER)),
        true,
    ),
    mf("maturity", &["spec", "maturity"], STR, true),
    mf("minKubeVersion", &["spec", "minKubeVersion"], STR, true),
    mf(
        "nativeAPIs",
        &["spec", "nativeAPIs"],
        Shape::List(&Shape::Struct(&GVK)),
        true,
    ),
    mf(
        "provider",
        &["spec", "provider"],
        Shape::Struct(&APP_LINK),
        true,
    ),
];

/// Case-insensitive lookup along `path` (Go's decoder matches field names that way).
fn lookup<'a>(csv: &'a Node, path: &[&str]) -> Option<&'a Node> {
    let mut cur = csv;
    for k in path {
        let mut issues = Vec::new();
        let obj = crate::fbc::decode::Obj::new(cur, "", &mut issues)?;
        cur = &obj.get(k)?.value;
    }
    Some(cur)
}

/// The value of the `olm.csv.metadata` property for `csv`.
pub fn csv_metadata(csv: &Node) -> Result<Node, TypeError> {
    let mut out = Vec::new();
    for f in &CSV_METADATA {
        let path = f.source.join(".");
        let v = encode(lookup(csv, f.source), f.shape, &path)?;
        if !(f.omitempty && is_empty(f.shape, &v)) {
            out.push(Entry {
                key: f.name.to_string(),
                key_pos: Pos::default(),
                value: v,
            });
        }
    }
    Ok(Node::new(Pos::default(), Value::Map(out)))
}

/// The field `name` of an `olm.csv.metadata` value decoded into its Go type and encoded again
/// (`property.CSVMetadata`, as opm reads the property back; the zero value when absent).
pub fn metadata_field(meta: &Node, name: &str) -> Result<Node, TypeError> {
    let f = CSV_METADATA
        .iter()
        .find(|f| f.name == name)
        .expect("a field of property.CSVMetadata");
    encode(lookup(meta, &[name]), f.shape, name)
}

/// The string fields `keys` of each owned (`true`) or required description in `spec.<section>`.
fn descriptions(csv: &Node, section: &str, owned: bool, keys: [&str; 3]) -> Vec<[String; 4]> {
    let key = if owned { "owned" } else { "required" };
    super::load::list_at(csv, &["spec", section, key])
        .iter()
        .map(|d| {
            let s = |k: &str| {
                field(d, &[k])
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            [s("name"), s(keys[0]), s(keys[1]), s(keys[2])]
        })
        .collect()
}

/// Owned (`true`) or required CRD descriptions of the CSV as (plural, group, version, kind).
pub fn crd_descriptions(csv: &Node, owned: bool) -> Vec<(String, String, String, String)> {
    descriptions(
        csv,
        "customresourcedefinitions",
        owned,
        ["name", "version", "kind"],
    )
    .into_iter()
    .map(|[name, _, version, kind]| {
        let (plural, group) = name.split_once('.').unwrap_or((name.as_str(), ""));
        (plural.to_string(), group.to_string(), version, kind)
    })
    .collect()
}

/// Owned or required API service descriptions as (name, group, version, kind).
pub fn api_services(csv: &Node, owned: bool) -> Vec<(String, String, String, String)> {
    descriptions(
        csv,
        "apiservicedefinitions",
        owned,
        ["group", "version", "kind"],
    )
    .into_iter()
    .map(|[name, group, version, kind]| (name, group, version, kind))
    .collect()
}
