//! What the resolver knows of one bundle in one channel of one catalog: a port of OLM's
//! `resolver/cache/operators.go` (`Entry`, `OperatorSourceInfo`) and `cache.go`
//! (`SourceKey`), with blang/semver's `ParseTolerant`.

use std::fmt;

use semver::Version;
use serde_json::Value;

use crate::range::Range;

/// `@existing`: the name of the virtual catalog of a namespace's installed CSVs.
pub const EXISTING: &str = "@existing";

/// `cache.SourceKey`: a catalog by name and namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceKey {
    /// The CatalogSource's name (`@existing` for the installed CSVs).
    pub name: String,
    /// Its namespace.
    pub namespace: String,
}

impl SourceKey {
    /// A CatalogSource.
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> SourceKey {
        SourceKey {
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    /// `NewVirtualSourceKey`: the installed CSVs of `namespace`.
    pub fn existing(namespace: impl Into<String>) -> SourceKey {
        SourceKey::new(EXISTING, namespace)
    }

    /// `Virtual()`.
    pub fn is_virtual(&self) -> bool {
        self.name == EXISTING && !self.namespace.is_empty()
    }

    /// `Empty()`.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty() && self.namespace.is_empty()
    }
}

impl fmt::Display for SourceKey {
    /// `String()`: `name/namespace`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.name, self.namespace)
    }
}

/// `OperatorSourceInfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceInfo {
    /// The package ("" for an installed CSV without an `olm.package` property).
    pub package: String,
    /// The channel ("" for an installed CSV).
    pub channel: String,
    /// The catalog.
    pub catalog: SourceKey,
    /// Whether the channel is the package's default channel.
    pub default_channel: bool,
    /// For an installed CSV: the Subscription whose `status.installedCSV` it is.
    pub subscription: Option<String>,
}

/// A property value's field that Go's `json.Unmarshal` into a struct of string fields
/// rejects (the value is not an object, or the field is not a string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAString;

/// One property: its type and its value as JSON (`api.Property`), decoded once.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    /// `type`.
    pub type_: String,
    /// `value`, the JSON text.
    pub value: String,
    /// `value` decoded (`None` when it is not JSON).
    pub json: Option<Value>,
}

impl Property {
    /// A property of `type_` with the JSON text `value`.
    pub fn new(type_: impl Into<String>, value: impl Into<String>) -> Property {
        let value = value.into();
        Property {
            type_: type_.into(),
            json: serde_json::from_str(&value).ok(),
            value,
        }
    }

    /// The string field `key` of the value as Go's `json.Unmarshal` into a struct of string
    /// fields reads it: `Ok("")` when absent or null, the exact key before a
    /// case-insensitive one, the last duplicate winning (the decoded map keeps the last);
    /// `Err` when the value is not an object or the field is not a string.
    pub fn field(&self, key: &str) -> Result<&str, NotAString> {
        match &self.json {
            Some(Value::Object(m)) => {
                let v = m.get(key).or_else(|| {
                    m.iter()
                        .filter(|(k, _)| k.eq_ignore_ascii_case(key))
                        .map(|(_, v)| v)
                        .next_back()
                });
                match v {
                    None | Some(Value::Null) => Ok(""),
                    Some(Value::String(s)) => Ok(s),
                    Some(_) => Err(NotAString),
                }
            }
            Some(Value::Null) => Ok(""),
            _ => Err(NotAString),
        }
    }
}

/// `cache.Entry`: one bundle of one channel of one catalog (or one installed CSV).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The CSV name.
    pub name: String,
    /// `replaces`.
    pub replaces: String,
    /// `skips`.
    pub skips: Vec<String>,
    /// `skipRange`, when it parses.
    pub skip_range: Option<Range>,
    /// The version (`ParseTolerant` of the bundle's version; `None` when it does not parse).
    pub version: Option<Version>,
    /// Where it comes from.
    pub source: SourceInfo,
    /// Its properties (provided APIs, dependencies, package, ...).
    pub properties: Vec<Property>,
    /// The bundle image (`bundlePath`).
    pub bundle_path: String,
}

impl Entry {
    /// `Package()`.
    pub fn package(&self) -> &str {
        &self.source.package
    }

    /// `Channel()`.
    pub fn channel(&self) -> &str {
        &self.source.channel
    }

    /// `bundleID`: `catalog/namespace/channel/csv`, the solver identifier.
    pub fn id(&self) -> String {
        bundle_id(&self.name, &self.source.channel, &self.source.catalog)
    }

    /// The `olm.package` property's version, as the registry serves it.
    pub fn package_version(&self) -> Option<&str> {
        self.properties
            .iter()
            .filter(|p| p.type_ == "olm.package")
            .find_map(|p| p.field("version").ok())
            .filter(|v| !v.is_empty())
    }
}

/// `bundleID(bundle, channel, catalog)`.
pub fn bundle_id(csv: &str, channel: &str, catalog: &SourceKey) -> String {
    format!("{catalog}/{channel}/{csv}")
}

/// blang/semver v4 `ParseTolerant`: spaces trimmed, a `v` prefix dropped, leading zeros
/// removed, `X` and `X.Y` completed with zeros (not when they carry a pre-release or build).
pub fn parse_tolerant(s: &str) -> Option<Version> {
    let s = s.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_string).collect();
    for p in parts.iter_mut() {
        if p.len() > 1 {
            let t = p.trim_start_matches('0');
            *p = if t.is_empty() || !t.starts_with(|c: char| c.is_ascii_digit()) {
                format!("0{t}")
            } else {
                t.to_string()
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|l| l.contains(['+', '-'])) {
            return None;
        }
        while parts.len() < 3 {
            parts.push("0".into());
        }
    }
    Version::parse(&parts.join(".")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_parse_tolerant_as_blang() {
        let v = |s| parse_tolerant(s).map(|v| v.to_string());
        assert_eq!(v("v1.2"), Some("1.2.0".into()));
        assert_eq!(v(" 1 "), Some("1.0.0".into()));
        assert_eq!(v("01.02.03"), Some("1.2.3".into()));
        assert_eq!(v("1.2.3-rc.1"), Some("1.2.3-rc.1".into()));
        assert_eq!(v("1.2-rc"), None);
        assert_eq!(v("x"), None);
    }

    #[test]
    fn resolve_property_fields_as_go_unmarshal() {
        let p = Property::new("olm.gvk", r#"{"Group":"a","group":"b","kind":1}"#);
        assert_eq!(p.field("group"), Ok("b"));
        assert_eq!(p.field("version"), Ok(""));
        assert_eq!(p.field("kind"), Err(NotAString));
        assert_eq!(Property::new("t", "[1]").field("group"), Err(NotAString));
        assert_eq!(
            Property::new("t", r#"{"GROUP":"x"}"#).field("group"),
            Ok("x")
        );
    }
}
