//! The catalog as the registry API answers from it: built once at start from the validated
//! declarative config, with channel heads and deprecations resolved, so no request re-reads or
//! re-derives anything.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::csv::PackageInfo;
use super::csv::html_escaped;
use super::rope::{Interner, Rope};
use crate::fbc::decl::{Bundle, DeclarativeConfig};
use crate::fbc::node::write_json_string;
use crate::fbc::property::Typed;
use crate::model::chain::{Head, heads};

/// What a bundle answers with, whatever channel it is asked in (shared by its channels).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BundleData {
    /// `image` (`bundlePath`).
    pub image: String,
    /// The `olm.package` property's version, as written.
    pub version: String,
    /// `olm.gvk` properties as (group, version, kind), in property order.
    pub provided: Vec<[String; 3]>,
    /// `olm.gvk.required` properties, the same way.
    pub required: Vec<[String; 3]>,
    /// Dependencies (type, JSON value): `olm.gvk.required` as `olm.gvk`, `olm.package.required`
    /// as `olm.package` `{"packageName":..,"version":..}`.
    pub dependencies: Vec<(String, String)>,
    /// Properties (type, JSON value normalized as opm stores it), without `olm.bundle.object` and
    /// `olm.csv.metadata`.
    pub properties: Vec<(String, String)>,
    /// The `olm.bundle.object` manifests as JSON.
    pub objects: Vec<Rope>,
    /// The CSV among them, or the one opm synthesizes from `olm.csv.metadata` (then also the
    /// only object when there are no others).
    pub csv_json: Rope,
    /// A bundle-level deprecation message.
    pub deprecation: Option<String>,
}

/// One entry of a channel: its edges there, and the bundle's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedEntry {
    /// `replaces` in this channel.
    pub replaces: String,
    /// `skips` in this channel.
    pub skips: Vec<String>,
    /// `skipRange` in this channel.
    pub skip_range: String,
    /// The bundle.
    pub data: Arc<BundleData>,
}

/// One channel: its head (the bundle OLM installs from it), deprecation and entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedChannel {
    /// The head's CSV name (`Channel.Head()` in opm; the catalog validated, so exactly one).
    pub head: String,
    /// The `olm.deprecations` message for the channel, if any.
    pub deprecation: Option<String>,
    /// Entries by bundle name (shared with the answers that send them).
    pub entries: BTreeMap<String, Arc<ServedEntry>>,
}

fn json_str(s: &str) -> String {
    let mut out = String::new();
    write_json_string(&mut out, s);
    out
}

/// A bundle object's JSON as opm reads it: the decoded `data` unchanged when it starts with `{`,
/// else YAML converted to compact JSON (sigs.k8s.io/yaml, HTML-escaped).
fn object_json(data: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(data);
    if text.trim_start().starts_with('{') {
        return Some(text.into_owned());
    }
    let doc = crate::fbc::yaml::first_document(&text).ok()?;
    Some(doc.map_or_else(|| "null".to_string(), |d| html_escaped(&d.to_json())))
}

/// Whether a manifest's `kind` is ClusterServiceVersion (unstructured `GetKind`: the last
/// `kind` key of the top-level object), read with the loader's parser and its nesting limit.
fn is_csv(json: &str) -> bool {
    let mut found = false;
    let mut first = true;
    let _ = crate::fbc::json::parse_stream(json, |n| {
        if std::mem::take(&mut first)
            && let crate::fbc::node::Value::Map(entries) = &n.value
        {
            found = entries
                .iter()
                .rev()
                .find(|e| e.key == "kind")
                .is_some_and(|e| e.value.as_str() == Some("ClusterServiceVersion"));
        }
    });
    found
}

impl BundleData {
    fn of(
        b: &Bundle,
        pkg: Option<&PackageInfo>,
        deprecation: Option<String>,
        interner: &mut Interner,
    ) -> BundleData {
        let mut d = BundleData {
            image: b.image.clone(),
            deprecation,
            ..BundleData::default()
        };
        let mut metadata = Vec::new();
        let mut objects: Vec<String> = Vec::new();
        let gvk =
            |g: &crate::fbc::property::Gvk| [g.group.clone(), g.version.clone(), g.kind.clone()];
        for p in &b.properties {
            match &p.typed {
                Typed::Package { version, .. } if d.version.is_empty() => {
                    d.version = version.clone();
                }
                Typed::Gvk(g) => d.provided.push(gvk(g)),
                Typed::GvkRequired(g) => {
                    d.required.push(gvk(g));
                    d.dependencies.push(("olm.gvk".into(), p.value.to_json()));
                }
                Typed::PackageRequired {
                    package_name,
                    version_range,
                } => d.dependencies.push((
                    "olm.package".into(),
                    format!(
                        "{{\"packageName\":{},\"version\":{}}}",
                        json_str(package_name),
                        json_str(version_range)
                    ),
                )),
                Typed::BundleObject => {
                    let data = crate::bundle::load::str_at(&p.value, &["data"])
                        .and_then(|d| crate::encoding::decode_forgiving(d).ok())
                        .and_then(|bytes| object_json(&bytes));
                    if let Some(json) = data {
                        objects.push(json);
                    }
                }
                Typed::CsvMetadata => metadata.push(&p.value),
                _ => {}
            }
            if !matches!(p.typed, Typed::BundleObject | Typed::CsvMetadata) {
                d.properties.push((p.type_.clone(), p.value.to_json()));
            }
        }
        let csv = objects.iter().position(|o| is_csv(o));
        d.objects = objects.iter().map(|o| Rope::whole(o, interner)).collect();
        if let Some(i) = csv {
            d.csv_json = d.objects[i].clone();
        } else if let [meta] = metadata.as_slice()
            && let Some(csv) = super::csv::synthesized(b, pkg, &d.version, meta, interner)
        {
            // No CSV among the objects and exactly one olm.csv.metadata: opm synthesizes one,
            // and serves it as the only object when there are none.
            if d.objects.is_empty() {
                d.objects.push(csv.clone());
            }
            d.csv_json = csv;
        }
        d
    }
}

/// One package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedPackage {
    /// `defaultChannel`.
    pub default_channel: String,
    /// Channels by name (sorted, as opm's `GetPackage` returns them).
    pub channels: BTreeMap<String, ServedChannel>,
    /// The package's deprecation message, if any.
    pub deprecation: Option<String>,
}

/// The served catalog.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServedCatalog {
    /// Packages by name.
    pub packages: BTreeMap<String, ServedPackage>,
    /// Blobs of custom schemas by (schema, package), in load order, as `google.protobuf.Struct`
    /// (what `ExperimentalListPackageCustomSchemas` streams; identical blobs once, as opm's
    /// content-addressed store keeps them).
    pub custom: BTreeMap<(String, String), Vec<prost_types::Struct>>,
}

/// A JSON node as a protobuf `Value` (numbers as doubles, as Go's map decoding makes them).
fn pb_value(n: &crate::fbc::node::Node) -> prost_types::Value {
    use crate::fbc::node::Value as V;
    use prost_types::value::Kind;
    let kind = match &n.value {
        V::Null => Kind::NullValue(0),
        V::Bool(b) => Kind::BoolValue(*b),
        V::Number(f) => Kind::NumberValue(*f),
        V::Str(s) => Kind::StringValue(s.clone()),
        V::Seq(items) => Kind::ListValue(prost_types::ListValue {
            values: items.iter().map(pb_value).collect(),
        }),
        V::Map(_) => Kind::StructValue(pb_struct(n)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// An object node as a `google.protobuf.Struct` (keys de-duplicated, the last one winning).
fn pb_struct(n: &crate::fbc::node::Node) -> prost_types::Struct {
    prost_types::Struct {
        fields: n
            .sorted_entries()
            .into_iter()
            .map(|e| (e.key.clone(), pb_value(&e.value)))
            .collect(),
    }
}

/// A bundle's (package, name) and data.
type Built<'c> = ((&'c str, &'c str), Arc<BundleData>);

/// The data of a share of the bundles, with one interner.
fn build_share<'c>(
    share: &[&'c Bundle],
    deprecations: &BTreeMap<(&str, &str), &str>,
    package_info: &BTreeMap<&str, PackageInfo>,
) -> Vec<Built<'c>> {
    let mut interner = Interner::default();
    share
        .iter()
        .map(|b| {
            let dep = deprecations
                .get(&(b.package.as_str(), b.name.as_str()))
                .map(|m| m.to_string());
            let d = BundleData::of(b, package_info.get(b.package.as_str()), dep, &mut interner);
            ((b.package.as_str(), b.name.as_str()), Arc::new(d))
        })
        .collect()
}

impl ServedCatalog {
    /// Builds the index. The catalog must have passed validation (one head per channel, every
    /// channel's package declared); anything else is skipped rather than guessed.
    pub fn new(cfg: &DeclarativeConfig) -> ServedCatalog {
        let mut packages: BTreeMap<String, ServedPackage> = cfg
            .packages
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    ServedPackage {
                        default_channel: p.default_channel.clone(),
                        channels: BTreeMap::new(),
                        deprecation: None,
                    },
                )
            })
            .collect();
        // Bundle-level deprecations, then each bundle's data once.
        let mut bundle_deprecations: BTreeMap<(&str, &str), &str> = BTreeMap::new();
        for d in &cfg.deprecations {
            for e in &d.entries {
                if e.reference.schema == "olm.bundle" {
                    bundle_deprecations.insert((&d.package, &e.reference.name), &e.message);
                }
            }
        }
        let package_info: BTreeMap<&str, PackageInfo> = cfg
            .packages
            .iter()
            .map(|p| (p.name.as_str(), PackageInfo::of(p)))
            .collect();
        // Packages split across threads, each with its own interner: pieces are shared within
        // a package (its icon, unchanged descriptions and CRDs), where they repeat.
        let mut by_package: BTreeMap<&str, Vec<&Bundle>> = BTreeMap::new();
        for b in &cfg.bundles {
            by_package.entry(b.package.as_str()).or_default().push(b);
        }
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut shares: Vec<Vec<&Bundle>> = vec![Vec::new(); workers];
        for (i, group) in by_package.into_values().enumerate() {
            shares[i % workers].extend(group);
        }
        let built: Vec<Vec<Built>> = std::thread::scope(|s| {
            // The work recurses through values nested as deep as the loader allows: the
            // loader's stack size. A worker that cannot start or panics stops the build rather
            // than serving the catalog without its share.
            let handles: Vec<_> = shares
                .iter()
                .map(|share| {
                    let h = std::thread::Builder::new()
                        .stack_size(crate::fbc::load::PARSER_STACK)
                        .spawn_scoped(s, || {
                            build_share(share, &bundle_deprecations, &package_info)
                        });
                    (share, h)
                })
                .collect();
            handles
                .into_iter()
                .map(|(share, h)| match h {
                    Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                    // No thread to be had: this one (the CLI's, with the same stack size).
                    Err(_) => build_share(share, &bundle_deprecations, &package_info),
                })
                .collect()
        });
        let data: BTreeMap<(&str, &str), Arc<BundleData>> = built.into_iter().flatten().collect();
        for c in &cfg.channels {
            let Some(p) = packages.get_mut(&c.package) else {
                continue;
            };
            let Head::One(h) = heads(&c.entries) else {
                continue;
            };
            let entries = c
                .entries
                .iter()
                .filter_map(|e| {
                    let d = data.get(&(c.package.as_str(), e.name.as_str()))?;
                    Some((
                        e.name.clone(),
                        Arc::new(ServedEntry {
                            replaces: e.replaces.clone(),
                            skips: e.skips.clone(),
                            skip_range: e.skip_range.clone(),
                            data: d.clone(),
                        }),
                    ))
                })
                .collect();
            p.channels.insert(
                c.name.clone(),
                ServedChannel {
                    head: h.to_string(),
                    deprecation: None,
                    entries,
                },
            );
        }
        for d in &cfg.deprecations {
            let Some(p) = packages.get_mut(&d.package) else {
                continue;
            };
            for e in &d.entries {
                match e.reference.schema.as_str() {
                    "olm.package" => p.deprecation = Some(e.message.clone()),
                    "olm.channel" => {
                        if let Some(c) = p.channels.get_mut(&e.reference.name) {
                            c.deprecation = Some(e.message.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut custom: BTreeMap<(String, String), Vec<prost_types::Struct>> = BTreeMap::new();
        let mut seen = std::collections::BTreeSet::new();
        for o in &cfg.others {
            if seen.insert((o.schema.clone(), o.package.clone(), o.node.to_json())) {
                custom
                    .entry((o.schema.clone(), o.package.clone()))
                    .or_default()
                    .push(pb_struct(&o.node));
            }
        }
        ServedCatalog { packages, custom }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::ServedCatalog;
    use crate::fbc::decl::DeclarativeConfig;

    fn served(text: &str) -> ServedCatalog {
        let mut cfg = DeclarativeConfig::default();
        let problems =
            crate::fbc::load::parse_text(text, &Arc::from(Path::new("c.yaml")), &mut cfg);
        assert!(problems.is_empty(), "{problems:?}");
        ServedCatalog::new(&cfg)
    }

    const CATALOG: &str = r#"---
schema: olm.package
name: p
defaultChannel: stable
description: From the package & its <blob>
icon: {base64data: "PHN2Zz48L3N2Zz4=", mediatype: image/svg+xml}
---
schema: olm.channel
package: p
name: stable
entries: [{name: p.v1.0.0}]
---
schema: olm.bundle
package: p
name: p.v1.0.0
image: quay.io/p/b:1
relatedImages: [{name: op, image: quay.io/p/op:1}]
properties:
- {type: olm.package, value: {packageName: p, version: 1.0.0}}
- type: olm.csv.metadata
  value:
    provider: {name: P}
    displayName: P
    labels: {z: "1", a: "2"}
    keywords: [k]
    installModes: [{type: AllNamespaces, supported: true}]
    crdDescriptions:
      owned:
      - {name: ps.p.io, version: v1, kind: P, specDescriptors: [{path: size, value: {z: 1, a: 2}}]}
    annotations: {alm-examples: "[]", capabilities: Basic Install}
    unknownField: dropped
"#;

    /// The bytes Go's json.Marshal gives for the v1alpha1 CSV opm builds: struct field order,
    /// omitempty fields out, maps and the RawMessage descriptor value sorted, the package's
    /// description and icon, HTML escaping, and no creationTimestamp.
    #[test]
    fn the_csv_opm_synthesizes_byte_for_byte() {
        let c = served(CATALOG);
        let e = &c.packages["p"].channels["stable"].entries["p.v1.0.0"];
        let want = concat!(
            r#"{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1","#,
            r#""metadata":{"name":"p.v1.0.0","labels":{"a":"2","z":"1"},"#,
            r#""annotations":{"alm-examples":"[]","capabilities":"Basic Install"}},"#,
            r#""spec":{"install":{"strategy":"deployment","spec":{"deployments":null}},"#,
            r#""version":"1.0.0","customresourcedefinitions":{"owned":[{"name":"ps.p.io","#,
            r#""version":"v1","kind":"P","specDescriptors":[{"path":"size","value":{"a":2,"z":1}}]}]},"#,
            r#""apiservicedefinitions":{},"displayName":"P","#,
            r#""description":"From the package \u0026 its \u003cblob\u003e","keywords":["k"],"#,
            r#""provider":{"name":"P"},"#,
            r#""icon":[{"base64data":"PHN2Zz48L3N2Zz4=","mediatype":"image/svg+xml"}],"#,
            r#""installModes":[{"type":"AllNamespaces","supported":true}],"#,
            r#""cleanup":{"enabled":false},"relatedImages":[{"name":"op","image":"quay.io/p/op:1"}]},"#,
            r#""status":{"cleanup":{}}}"#,
        );
        assert_eq!(e.data.csv_json.to_string(), want);
        assert_eq!(e.data.objects, vec![e.data.csv_json.clone()]);
    }

    /// A bundle with manifests serves its own CSV; one without either serves none.
    #[test]
    fn only_without_a_csv_object_and_with_one_metadata_property() {
        let csv = r#"{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"p.v1.0.0"}}"#;
        let data = crate::encoding::base64(csv.as_bytes());
        let with_object = CATALOG.replace(
            "- type: olm.csv.metadata",
            &format!(
                "- {{type: olm.bundle.object, value: {{data: {data}}}}}\n- type: olm.csv.metadata"
            ),
        );
        let c = served(&with_object);
        let e = &c.packages["p"].channels["stable"].entries["p.v1.0.0"];
        assert_eq!(e.data.csv_json.to_string(), csv);
        assert_eq!(e.data.objects, vec![e.data.csv_json.clone()]);

        let bare = CATALOG.split("- type: olm.csv.metadata").next().unwrap();
        let c = served(bare);
        let e = &c.packages["p"].channels["stable"].entries["p.v1.0.0"];
        assert!(e.data.csv_json.is_empty());
        assert!(e.data.objects.is_empty());
    }
}
