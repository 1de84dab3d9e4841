//! The declarative config: typed FBC blobs as the files state them (operator-registry's
//! `alpha/declcfg`). No cross-blob rules live here; those are in the `model` module, a layer above.

use std::path::Path;
use std::sync::Arc;

use super::decode::{Issue, Obj};
use super::node::{Node, Pos, Value};
use super::property::{self, Property};

/// `olm.package` schema name.
pub const SCHEMA_PACKAGE: &str = "olm.package";
/// `olm.channel` schema name.
pub const SCHEMA_CHANNEL: &str = "olm.channel";
/// `olm.bundle` schema name.
pub const SCHEMA_BUNDLE: &str = "olm.bundle";
/// `olm.deprecations` schema name.
pub const SCHEMA_DEPRECATIONS: &str = "olm.deprecations";

/// Where a blob starts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Src {
    /// The file, as displayed.
    pub file: Arc<Path>,
    /// Position of the blob's first key.
    pub pos: Pos,
}

/// A package icon.
#[derive(Debug, Clone, PartialEq)]
pub struct Icon {
    /// Base64 image data as written (shared: icons are large).
    pub base64data: Arc<str>,
    /// Where `base64data` is.
    pub data_pos: Pos,
    /// The media type, e.g. `image/svg+xml`.
    pub mediatype: String,
    /// Where `mediatype` is.
    pub mediatype_pos: Pos,
}

/// An `olm.package` blob.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// `name`.
    pub name: String,
    /// `defaultChannel`.
    pub default_channel: String,
    /// `icon`.
    pub icon: Option<Icon>,
    /// `description`.
    pub description: String,
    /// `properties`.
    pub properties: Vec<Property>,
    /// Where the blob is.
    pub src: Src,
}

/// One `entries[]` item of a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelEntry {
    /// The bundle name.
    pub name: String,
    /// `replaces`, empty when unset.
    pub replaces: String,
    /// `skips`.
    pub skips: Vec<String>,
    /// `skipRange`, empty when unset.
    pub skip_range: String,
    /// Where the entry starts.
    pub pos: Pos,
    /// Where `skipRange` is (the entry position when unset).
    pub skip_range_pos: Pos,
}

/// An `olm.channel` blob.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// `package`.
    pub package: String,
    /// `name`.
    pub name: String,
    /// `entries`.
    pub entries: Vec<ChannelEntry>,
    /// `properties`.
    pub properties: Vec<Property>,
    /// Where the blob is.
    pub src: Src,
}

/// A `relatedImages[]` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedImage {
    /// Optional name.
    pub name: String,
    /// Image reference.
    pub image: String,
    /// Where the item starts.
    pub pos: Pos,
}

/// An `olm.bundle` blob.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// `package`.
    pub package: String,
    /// `name`.
    pub name: String,
    /// `image`.
    pub image: String,
    /// Where `image` is (the blob position when unset).
    pub image_pos: Pos,
    /// `properties`.
    pub properties: Vec<Property>,
    /// `relatedImages`.
    pub related_images: Vec<RelatedImage>,
    /// Where the blob is.
    pub src: Src,
}

/// What a deprecation entry points at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PackageScopedReference {
    /// `olm.package`, `olm.channel` or `olm.bundle`.
    pub schema: String,
    /// The channel or bundle name; empty for the package.
    pub name: String,
}

/// One `entries[]` item of `olm.deprecations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeprecationEntry {
    /// `reference`.
    pub reference: PackageScopedReference,
    /// `message`.
    pub message: String,
    /// Where the entry starts.
    pub pos: Pos,
}

/// An `olm.deprecations` blob.
#[derive(Debug, Clone, PartialEq)]
pub struct Deprecations {
    /// `package`.
    pub package: String,
    /// `entries`.
    pub entries: Vec<DeprecationEntry>,
    /// Where the blob is.
    pub src: Src,
}

/// A blob of any other schema, kept verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct Other {
    /// `schema`.
    pub schema: String,
    /// `package` (may be empty).
    pub package: String,
    /// `name` (may be empty).
    pub name: String,
    /// The whole blob.
    pub node: Node,
    /// Where the blob is.
    pub src: Src,
}

/// Everything a catalog tree declares, in load order (files sorted by path, blobs in file order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeclarativeConfig {
    /// `olm.package` blobs.
    pub packages: Vec<Package>,
    /// `olm.channel` blobs.
    pub channels: Vec<Channel>,
    /// `olm.bundle` blobs.
    pub bundles: Vec<Bundle>,
    /// `olm.deprecations` blobs.
    pub deprecations: Vec<Deprecations>,
    /// Blobs of other schemas.
    pub others: Vec<Other>,
}

impl DeclarativeConfig {
    /// Appends everything of `other`.
    pub fn merge(&mut self, other: DeclarativeConfig) {
        self.packages.extend(other.packages);
        self.channels.extend(other.channels);
        self.bundles.extend(other.bundles);
        self.deprecations.extend(other.deprecations);
        self.others.extend(other.others);
    }
}

/// A problem with one blob found while decoding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobIssue {
    /// The blob's schema ("" when missing).
    pub schema: String,
    /// The blob's package, when readable.
    pub package: String,
    /// The blob's name, when readable.
    pub name: String,
    /// What was found.
    pub issue: EnvelopeOrField,
}

/// Envelope problems (the blob cannot be classified) or field problems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvelopeOrField {
    /// The blob is not an object.
    NotAnObject {
        /// What it is instead.
        found: &'static str,
        /// Where.
        pos: Pos,
    },
    /// No `schema` key.
    MissingSchema {
        /// Where the blob starts.
        pos: Pos,
    },
    /// Two keys fold to the same envelope key (`Schema` and `schema`).
    DuplicateEnvelopeKey {
        /// The envelope key.
        key: &'static str,
        /// The keys as written.
        keys: Vec<String>,
        /// Where the second one is.
        pos: Pos,
    },
    /// A field-level issue.
    Field(Issue),
}

/// The `Meta` envelope: `schema`, `package` and `name`, matched case-insensitively. opm rejects
/// a blob whose envelope keys repeat under case folding or are not strings.
fn envelope(node: &Node, issues: &mut Vec<EnvelopeOrField>) -> Option<(String, String, String)> {
    let Value::Map(entries) = &node.value else {
        issues.push(EnvelopeOrField::NotAnObject {
            found: node.kind(),
            pos: node.pos,
        });
        return None;
    };
    let mut out: [Option<String>; 3] = [None, None, None];
    for (i, key) in ["schema", "package", "name"].into_iter().enumerate() {
        let matching: Vec<_> = entries
            .iter()
            .filter(|e| e.key.to_lowercase() == key)
            .collect();
        let mut distinct: Vec<String> = matching.iter().map(|e| e.key.clone()).collect();
        distinct.sort();
        distinct.dedup();
        if distinct.len() > 1 {
            issues.push(EnvelopeOrField::DuplicateEnvelopeKey {
                key,
                keys: distinct,
                pos: matching[1].key_pos,
            });
        }
        if let Some(e) = matching.last() {
            match &e.value.value {
                Value::Str(s) => out[i] = Some(s.clone()),
                Value::Null => {}
                _ => issues.push(EnvelopeOrField::Field(Issue::Type {
                    path: e.key.clone(),
                    expected: "a string",
                    found: e.value.kind(),
                    pos: e.value.pos,
                })),
            }
        }
    }
    let [schema, package, name] = out;
    match schema {
        Some(s) => Some((s, package.unwrap_or_default(), name.unwrap_or_default())),
        None => {
            if !issues
                .iter()
                .any(|i| matches!(i, EnvelopeOrField::Field(_)))
            {
                issues.push(EnvelopeOrField::MissingSchema { pos: node.pos });
            }
            None
        }
    }
}

/// Decodes one blob into `cfg`. Problems go to `problems`; a blob with field problems is still
/// added (with the bad fields unset), as Go's decoder fills what it can before failing.
pub fn decode_blob(
    node: Node,
    file: &Arc<Path>,
    cfg: &mut DeclarativeConfig,
    problems: &mut Vec<(Arc<Path>, BlobIssue)>,
) {
    let mut env_issues = Vec::new();
    let env = envelope(&node, &mut env_issues);
    let (schema, package, name) = env.clone().unwrap_or_default();
    let mut issues = Vec::new();
    let src = Src {
        file: file.clone(),
        pos: node.pos,
    };
    if let Some((schema, package, name)) = env {
        match schema.as_str() {
            SCHEMA_PACKAGE => {
                if let Some(o) = Obj::new(&node, "", &mut issues) {
                    cfg.packages.push(decode_package(&o, src, &mut issues));
                }
            }
            SCHEMA_CHANNEL => {
                if let Some(o) = Obj::new(&node, "", &mut issues) {
                    cfg.channels.push(decode_channel(&o, src, &mut issues));
                }
            }
            SCHEMA_BUNDLE => {
                if let Some(o) = Obj::new(&node, "", &mut issues) {
                    cfg.bundles.push(decode_bundle(&o, src, &mut issues));
                }
            }
            SCHEMA_DEPRECATIONS => {
                if let Some(o) = Obj::new(&node, "", &mut issues) {
                    cfg.deprecations
                        .push(decode_deprecations(&o, src, &mut issues));
                }
            }
            _ => cfg.others.push(Other {
                schema,
                package,
                name,
                node,
                src,
            }),
        }
    }
    for i in env_issues
        .into_iter()
        .chain(issues.into_iter().map(EnvelopeOrField::Field))
    {
        problems.push((
            file.clone(),
            BlobIssue {
                schema: schema.clone(),
                package: package.clone(),
                name: name.clone(),
                issue: i,
            },
        ));
    }
}

fn s(o: &Obj<'_>, key: &str, issues: &mut Vec<Issue>) -> String {
    o.string(key, issues).map(|x| x.0).unwrap_or_default()
}

fn decode_package(o: &Obj<'_>, src: Src, issues: &mut Vec<Issue>) -> Package {
    o.check_keys(
        &[
            "schema",
            "name",
            "defaultChannel",
            "icon",
            "description",
            "properties",
        ],
        issues,
    );
    let icon = o.get("icon").and_then(|e| {
        let io = Obj::new(&e.value, "icon", issues)?;
        io.check_keys(&["base64data", "mediatype"], issues);
        let (base64data, data_pos) = io
            .string("base64data", issues)
            .unwrap_or((String::new(), e.value.pos));
        if let Err(at) = crate::encoding::check_go_std(&base64data) {
            issues.push(Issue::Invalid {
                path: "icon.base64data".into(),
                message: format!("illegal base64 data at input byte {at}"),
                pos: data_pos,
            });
        }
        let (mediatype, mediatype_pos) = io
            .string("mediatype", issues)
            .unwrap_or((String::new(), e.value.pos));
        Some(Icon {
            base64data: Arc::from(base64data),
            data_pos,
            mediatype,
            mediatype_pos,
        })
    });
    Package {
        name: s(o, "name", issues),
        default_channel: s(o, "defaultChannel", issues),
        icon,
        description: s(o, "description", issues),
        properties: property::decode_list(o.list("properties", issues), "properties", issues),
        src,
    }
}

fn decode_channel(o: &Obj<'_>, src: Src, issues: &mut Vec<Issue>) -> Channel {
    o.check_keys(
        &["schema", "package", "name", "entries", "properties"],
        issues,
    );
    let mut entries = Vec::new();
    for (i, item) in o.list("entries", issues).iter().enumerate() {
        let path = format!("entries[{i}]");
        let Some(eo) = Obj::new(item, &path, issues) else {
            continue;
        };
        eo.check_keys(&["name", "replaces", "skips", "skipRange"], issues);
        let (skip_range, skip_range_pos) = eo
            .string("skipRange", issues)
            .unwrap_or((String::new(), item.pos));
        entries.push(ChannelEntry {
            name: s(&eo, "name", issues),
            replaces: s(&eo, "replaces", issues),
            skips: eo
                .strings("skips", issues)
                .into_iter()
                .map(|x| x.0)
                .collect(),
            skip_range,
            pos: item.pos,
            skip_range_pos,
        });
    }
    Channel {
        package: s(o, "package", issues),
        name: s(o, "name", issues),
        entries,
        properties: property::decode_list(o.list("properties", issues), "properties", issues),
        src,
    }
}

fn decode_bundle(o: &Obj<'_>, src: Src, issues: &mut Vec<Issue>) -> Bundle {
    o.check_keys(
        &[
            "schema",
            "package",
            "name",
            "image",
            "properties",
            "relatedImages",
        ],
        issues,
    );
    let mut related_images = Vec::new();
    for (i, item) in o.list("relatedImages", issues).iter().enumerate() {
        let path = format!("relatedImages[{i}]");
        let Some(ro) = Obj::new(item, &path, issues) else {
            continue;
        };
        ro.check_keys(&["name", "image"], issues);
        related_images.push(RelatedImage {
            name: s(&ro, "name", issues),
            image: s(&ro, "image", issues),
            pos: item.pos,
        });
    }
    let (image, image_pos) = o
        .string("image", issues)
        .unwrap_or((String::new(), src.pos));
    Bundle {
        package: s(o, "package", issues),
        name: s(o, "name", issues),
        image,
        image_pos,
        properties: property::decode_list(o.list("properties", issues), "properties", issues),
        related_images,
        src,
    }
}

fn decode_deprecations(o: &Obj<'_>, src: Src, issues: &mut Vec<Issue>) -> Deprecations {
    o.check_keys(&["schema", "package", "entries"], issues);
    let mut entries = Vec::new();
    for (i, item) in o.list("entries", issues).iter().enumerate() {
        let path = format!("entries[{i}]");
        let Some(eo) = Obj::new(item, &path, issues) else {
            continue;
        };
        eo.check_keys(&["reference", "message"], issues);
        let reference = match eo.get("reference") {
            Some(r) => match Obj::new(&r.value, &format!("{path}.reference"), issues) {
                Some(ro) => {
                    ro.check_keys(&["schema", "name"], issues);
                    PackageScopedReference {
                        schema: s(&ro, "schema", issues),
                        name: s(&ro, "name", issues),
                    }
                }
                None => PackageScopedReference {
                    schema: String::new(),
                    name: String::new(),
                },
            },
            None => PackageScopedReference {
                schema: String::new(),
                name: String::new(),
            },
        };
        entries.push(DeprecationEntry {
            reference,
            message: s(&eo, "message", issues),
            pos: item.pos,
        });
    }
    Deprecations {
        package: s(o, "package", issues),
        entries,
        src,
    }
}
