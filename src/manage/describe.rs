//! `olmctl describe PACKAGE` (kubectl-operator `describe`): what a PackageManifest says of a
//! package's channel, in the sections `operator_describe.go :: newOperatorDescribeCmd` prints.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::text;

/// Why a channel cannot be described (`internal/pkg/operator/package.go`'s errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescribeError {
    /// `ErrNoDefaultChannel`.
    NoDefaultChannel {
        /// The package.
        package: String,
    },
    /// `ErrChannelNotFound`.
    ChannelNotFound {
        /// The package.
        package: String,
        /// The channel asked for.
        channel: String,
        /// The channels it has.
        channels: Vec<String>,
    },
}

impl fmt::Display for DescribeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescribeError::NoDefaultChannel { package } => write!(
                f,
                "package {package:?} does not have a default channel: pass --channel"
            ),
            DescribeError::ChannelNotFound {
                package,
                channel,
                channels,
            } => write!(
                f,
                "channel {channel:?} does not exist for package {package:?} (its channels: {})",
                channels.join(", ")
            ),
        }
    }
}

impl std::error::Error for DescribeError {}

/// A package's channel, described.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Description {
    /// The package.
    pub package: String,
    /// The channel shown.
    pub channel: String,
    /// Its head CSV.
    #[serde(rename = "currentCSV")]
    pub current_csv: String,
    /// The head's display name.
    pub display_name: String,
    /// The head's version.
    pub version: String,
    /// The head's provider.
    pub provider: String,
    /// The head's `repository` annotation.
    pub repository: String,
    /// The catalog (the CatalogSource's display name).
    pub catalog: String,
    /// Every channel, `(default)` and `(shown)` marked.
    pub channels: Vec<String>,
    /// The install modes the head supports, sorted.
    pub install_modes: Vec<String>,
    /// The head's `description` annotation.
    pub description: String,
    /// The head's `spec.description`.
    pub long_description: String,
}

/// `PackageManifest.GetDefaultChannel`: `defaultChannel`, else the only channel.
fn default_channel(pm: &Value, channels: &[Value]) -> Option<String> {
    match text(pm, "/status/defaultChannel") {
        "" if channels.len() == 1 => Some(text(&channels[0], "/name").into()),
        "" => None,
        d => Some(d.into()),
    }
}

/// Describes `channel` (`None`: the default one) of the PackageManifest `pm`
/// (`PackageManifest.GetChannel`, `PackageChannel.GetSupportedInstallModes`,
/// `getAvailableChannelsWithMarkers`). Upstream's long description is the first channel's
/// whatever channel is shown; here it is the shown channel's, as every other section is.
pub fn describe(pm: &Value, channel: Option<&str>) -> Result<Description, DescribeError> {
    let package = text(pm, "/metadata/name").to_string();
    let channels: &[Value] = pm
        .pointer("/status/channels")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let default = default_channel(pm, channels);
    let wanted = match channel.filter(|c| !c.is_empty()) {
        Some(c) => c.to_string(),
        None => default.clone().ok_or(DescribeError::NoDefaultChannel {
            package: package.clone(),
        })?,
    };
    let names: Vec<String> = channels.iter().map(|c| text(c, "/name").into()).collect();
    let Some(ch) = channels.iter().find(|c| text(c, "/name") == wanted) else {
        return Err(DescribeError::ChannelNotFound {
            package,
            channel: wanted,
            channels: names,
        });
    };
    let desc = &ch["currentCSVDesc"];
    let modes: BTreeSet<String> = desc["installModes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["supported"] == true)
        .filter_map(|m| m["type"].as_str().map(str::to_string))
        .collect();
    let marked = names
        .iter()
        .map(|n| {
            let mut s = n.clone();
            // `PackageChannel.IsDefaultChannel`.
            if *n == text(pm, "/status/defaultChannel") || names.len() == 1 {
                s.push_str(" (default)");
            }
            if *n == wanted {
                s.push_str(" (shown)");
            }
            s
        })
        .collect();
    Ok(Description {
        package,
        channel: wanted,
        current_csv: text(ch, "/currentCSV").into(),
        display_name: text(desc, "/displayName").into(),
        version: text(desc, "/version").into(),
        provider: text(desc, "/provider/name").into(),
        repository: text(desc, "/annotations/repository").into(),
        catalog: text(pm, "/status/catalogSourceDisplayName").into(),
        channels: marked,
        install_modes: modes.into_iter().collect(),
        description: text(desc, "/annotations/description").into(),
        long_description: text(desc, "/description").into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pm(default: &str) -> Value {
        let desc = |v: &str, all: bool| {
            json!({"displayName": "Widgets", "version": v, "provider": {"name": "Acme"},
                   "annotations": {"repository": "https://example.com/w", "description": "Makes widgets"},
                   "description": format!("Long {v}"),
                   "installModes": [{"type": "OwnNamespace", "supported": true},
                                    {"type": "AllNamespaces", "supported": all},
                                    {"type": "MultiNamespace", "supported": true}]})
        };
        json!({"metadata": {"name": "w"},
               "status": {"catalogSourceDisplayName": "Acme Catalog", "defaultChannel": default,
                 "channels": [{"name": "alpha", "currentCSV": "w.v2.0.0", "currentCSVDesc": desc("2.0.0", false)},
                              {"name": "stable", "currentCSV": "w.v1.0.0", "currentCSVDesc": desc("1.0.0", true)}]}})
    }

    #[test]
    fn the_default_channel_is_shown_unless_one_is_asked_for() {
        let d = describe(&pm("stable"), None).expect("described");
        assert_eq!(d.channel, "stable");
        assert_eq!(d.current_csv, "w.v1.0.0");
        assert_eq!(d.channels, ["alpha", "stable (default) (shown)"]);
        assert_eq!(
            d.install_modes,
            ["AllNamespaces", "MultiNamespace", "OwnNamespace"]
        );
        assert_eq!(d.long_description, "Long 1.0.0");
        let d = describe(&pm("stable"), Some("alpha")).expect("described");
        assert_eq!(d.channels, ["alpha (shown)", "stable (default)"]);
        assert_eq!(d.install_modes, ["MultiNamespace", "OwnNamespace"]);
        assert_eq!(d.long_description, "Long 2.0.0");
    }

    #[test]
    fn a_missing_channel_or_default_is_an_error_naming_the_channels() {
        let e = describe(&pm("stable"), Some("fast")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "channel \"fast\" does not exist for package \"w\" (its channels: alpha, stable)"
        );
        let e = describe(&pm(""), None).unwrap_err();
        assert!(matches!(e, DescribeError::NoDefaultChannel { .. }), "{e}");
    }
}
