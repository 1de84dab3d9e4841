//! Bundle, package and channel properties: `{type, value}` pairs. Known types are decoded into
//! typed values; every value also keeps its original node, so unknown types and large opaque
//! values (CSV metadata, bundle objects) round-trip untouched without being re-encoded.

use std::sync::Arc;

use super::decode::{Issue, Obj};
use super::node::{Node, Pos, Value};

/// `olm.package`: the bundle's package and version.
pub const PACKAGE: &str = "olm.package";
/// `olm.gvk`: an API the bundle provides.
pub const GVK: &str = "olm.gvk";
/// `olm.gvk.required`: an API the bundle needs.
pub const GVK_REQUIRED: &str = "olm.gvk.required";
/// `olm.package.required`: a package (and version range) the bundle needs.
pub const PACKAGE_REQUIRED: &str = "olm.package.required";
/// `olm.bundle.object`: one base64-encoded manifest of the bundle.
pub const BUNDLE_OBJECT: &str = "olm.bundle.object";
/// `olm.csv.metadata`: the CSV's descriptive fields.
pub const CSV_METADATA: &str = "olm.csv.metadata";
/// `olm.constraint`: a generic dependency constraint.
pub const CONSTRAINT: &str = "olm.constraint";
/// `olm.deprecated`: legacy deprecation marker.
pub const DEPRECATED: &str = "olm.deprecated";
/// `olm.maxOpenShiftVersion`: highest OpenShift minor the bundle supports.
pub const MAX_OPENSHIFT_VERSION: &str = "olm.maxOpenShiftVersion";
/// `olm.channel`: internal channel-membership property.
pub const CHANNEL: &str = "olm.channel";

/// A group/version/kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gvk {
    /// API group (may be empty for the core group).
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Widget`.
    pub kind: String,
}

/// The decoded form of a property value.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    /// `olm.package`.
    Package {
        /// `packageName`.
        package_name: String,
        /// `version` as written (parsed as strict semver by the model layer).
        version: String,
        /// Optional `release`.
        release: Option<String>,
    },
    /// `olm.gvk`.
    Gvk(Gvk),
    /// `olm.gvk.required`.
    GvkRequired(Gvk),
    /// `olm.package.required`.
    PackageRequired {
        /// `packageName`.
        package_name: String,
        /// `versionRange`.
        version_range: String,
    },
    /// `olm.bundle.object` with its base64 `data`.
    BundleObject,
    /// `olm.csv.metadata` (kept as the original node).
    CsvMetadata,
    /// `olm.constraint` (kept as the original node).
    Constraint,
    /// `olm.deprecated`.
    Deprecated,
    /// `olm.maxOpenShiftVersion` with the value as text when it is a string.
    MaxOpenShiftVersion,
    /// `olm.channel`.
    Channel,
    /// Any other type: kept verbatim.
    Other,
    /// A known type whose value did not decode (the issue is recorded).
    Broken,
}

/// One property.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    /// The `type` string.
    pub type_: String,
    /// The original `value` node (what is written back out); shared, so cloning a bundle does
    /// not copy large values such as CSV metadata or bundle objects.
    pub value: Arc<Node>,
    /// The decoded form.
    pub typed: Typed,
    /// Where the property object starts.
    pub pos: Pos,
}

impl Property {
    /// The `olm.package` fields, if this is one.
    pub fn as_package(&self) -> Option<(&str, &str, Option<&str>)> {
        match &self.typed {
            Typed::Package {
                package_name,
                version,
                release,
            } => Some((package_name, version, release.as_deref())),
            _ => None,
        }
    }
}

fn gvk(o: &Obj<'_>, issues: &mut Vec<Issue>) -> Gvk {
    o.check_keys(&["group", "version", "kind"], issues);
    let s = |k: &str, issues: &mut Vec<Issue>| o.string(k, issues).map(|x| x.0).unwrap_or_default();
    Gvk {
        group: s("group", issues),
        version: s("version", issues),
        kind: s("kind", issues),
    }
}

/// Decodes the properties list at `path` (e.g. `properties`). Problems are appended to `issues`
/// with their JSON path, e.g. `properties[2].value.version`.
pub fn decode_list(items: &[Node], path: &str, issues: &mut Vec<Issue>) -> Vec<Property> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let ppath = format!("{path}[{i}]");
        let Some(o) = Obj::new(item, &ppath, issues) else {
            continue;
        };
        o.check_keys(&["type", "value"], issues);
        let type_ = o.string("type", issues).map(|x| x.0).unwrap_or_default();
        let value = Arc::new(
            o.get("value")
                .map(|e| e.value.clone())
                .unwrap_or_else(|| Node::new(item.pos, Value::Null)),
        );
        let typed = decode_value(&type_, &value, &format!("{ppath}.value"), issues);
        out.push(Property {
            type_,
            value,
            typed,
            pos: item.pos,
        });
    }
    out
}

fn decode_value(type_: &str, value: &Node, vpath: &str, issues: &mut Vec<Issue>) -> Typed {
    let before = issues.len();
    let obj = |issues: &mut Vec<Issue>| Obj::new(value, vpath, issues);
    let typed = match type_ {
        PACKAGE => match obj(issues) {
            Some(o) => {
                o.check_keys(&["packageName", "version", "release"], issues);
                Typed::Package {
                    package_name: o
                        .string("packageName", issues)
                        .map(|x| x.0)
                        .unwrap_or_default(),
                    version: o.string("version", issues).map(|x| x.0).unwrap_or_default(),
                    release: o.string("release", issues).map(|x| x.0),
                }
            }
            None => Typed::Broken,
        },
        GVK | GVK_REQUIRED => match obj(issues) {
            Some(o) => {
                let g = gvk(&o, issues);
                if type_ == GVK {
                    Typed::Gvk(g)
                } else {
                    Typed::GvkRequired(g)
                }
            }
            None => Typed::Broken,
        },
        PACKAGE_REQUIRED => match obj(issues) {
            Some(o) => {
                o.check_keys(&["packageName", "versionRange"], issues);
                Typed::PackageRequired {
                    package_name: o
                        .string("packageName", issues)
                        .map(|x| x.0)
                        .unwrap_or_default(),
                    version_range: o
                        .string("versionRange", issues)
                        .map(|x| x.0)
                        .unwrap_or_default(),
                }
            }
            None => Typed::Broken,
        },
        BUNDLE_OBJECT => match obj(issues) {
            Some(o) => {
                o.check_keys(&["data"], issues);
                if let Some((data, pos)) = o.string("data", issues)
                    && let Err(at) = crate::encoding::check_go_std(&data)
                {
                    issues.push(Issue::Invalid {
                        path: format!("{vpath}.data"),
                        message: format!("illegal base64 data at input byte {at}"),
                        pos,
                    });
                }
                Typed::BundleObject
            }
            None => Typed::Broken,
        },
        CSV_METADATA => match obj(issues) {
            Some(_) => Typed::CsvMetadata,
            None => Typed::Broken,
        },
        CONSTRAINT => match obj(issues) {
            Some(_) => Typed::Constraint,
            None => Typed::Broken,
        },
        CHANNEL => match obj(issues) {
            Some(o) => {
                o.check_keys(&["channelName"], issues);
                o.string("channelName", issues);
                Typed::Channel
            }
            None => Typed::Broken,
        },
        DEPRECATED => Typed::Deprecated,
        MAX_OPENSHIFT_VERSION => Typed::MaxOpenShiftVersion,
        _ => Typed::Other,
    };
    // A type error inside a known property fails `property.Parse` in opm.
    if issues[before..]
        .iter()
        .any(|i| matches!(i, Issue::Type { .. }))
    {
        return Typed::Broken;
    }
    typed
}

/// Whether `s` is `<digits>.<digits>` (what OLM accepts for `olm.maxOpenShiftVersion`).
pub fn is_major_minor(s: &str) -> bool {
    match s.split_once('.') {
        Some((a, b)) => {
            let num = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
            num(a) && num(b)
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::yaml::parse_documents;

    fn props(text: &str) -> (Vec<Property>, Vec<Issue>) {
        let mut docs = Vec::new();
        parse_documents(text, |n| docs.push(n)).expect("yaml");
        let Value::Seq(items) = &docs[0].value else {
            panic!("not a list")
        };
        let mut issues = Vec::new();
        let p = decode_list(items, "properties", &mut issues);
        (p, issues)
    }

    #[test]
    fn known_types_decode() {
        let (p, issues) = props(
            "- type: olm.package\n  value: {packageName: foo, version: 1.0.0, release: '2'}\n\
             - type: olm.gvk\n  value: {group: a.io, version: v1, kind: A}\n\
             - type: olm.package.required\n  value: {packageName: bar, versionRange: '>=1.0.0'}\n\
             - type: x.custom\n  value: [1, 2]\n",
        );
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(p[0].as_package(), Some(("foo", "1.0.0", Some("2"))));
        assert_eq!(
            p[1].typed,
            Typed::Gvk(Gvk {
                group: "a.io".into(),
                version: "v1".into(),
                kind: "A".into()
            })
        );
        assert!(matches!(p[2].typed, Typed::PackageRequired { .. }));
        assert_eq!(p[3].typed, Typed::Other);
        assert_eq!(p[3].value.to_json(), "[1,2]");
    }

    #[test]
    fn wrong_shapes_are_broken_with_paths() {
        let (p, issues) = props("- type: olm.package\n  value: {packageName: foo, version: 1}\n");
        assert_eq!(p[0].typed, Typed::Broken);
        assert!(
            matches!(&issues[0], Issue::Type { path, .. } if path == "properties[0].value.version")
        );
    }
}
