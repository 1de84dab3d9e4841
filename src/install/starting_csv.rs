//! The starting CSV of `install --version`, looked up in the catalog.
//!
//! A Subscription's `spec.startingCSV` is a bundle's (CSV's) name, not a version: OLM v0
//! resolves it as the bundle of that name in the Subscription's channel, the package's default
//! channel when none is given (operator-lifecycle-manager
//! `pkg/controller/registry/resolver/resolver.go :: Resolver.getSubscriptionVariables`, the
//! `cache.WithCSVName(startingCSV)` and `cache.WithChannel` predicates). CSV names need not be
//! `<package>.v<version>` (crunchy-postgres-operator's are `postgresoperator.v5.8.8`), so the
//! name is the catalog's: the bundle of the package in that channel whose `olm.package`
//! property has the version asked for.

use std::fmt;

use crate::fbc::decl::DeclarativeConfig;

/// The bundle found for a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The bundle's (CSV's) name: the `startingCSV`.
    pub csv: String,
    /// The channel it was looked up in (the one given, else the package's default).
    pub channel: String,
}

/// Why a version has no starting CSV in the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// The catalog has no such package.
    NoPackage {
        /// The package asked for.
        package: String,
        /// The catalog's packages, sorted.
        packages: Vec<String>,
    },
    /// The package has no such channel (or no default channel).
    NoChannel {
        /// The package.
        package: String,
        /// The channel asked for, or the default channel the package names.
        channel: String,
        /// The package's channels, sorted.
        channels: Vec<String>,
    },
    /// No bundle of the package has the version.
    NoVersion {
        /// The package.
        package: String,
        /// The version asked for.
        version: String,
        /// The package's versions, in semver order.
        versions: Vec<String>,
    },
    /// Bundles have the version, but not in the channel.
    NotInChannel {
        /// The package.
        package: String,
        /// The version asked for.
        version: String,
        /// The channel looked in.
        channel: String,
        /// The channels that have it, sorted.
        channels: Vec<String>,
    },
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names from the catalog, as they are: the command line escapes what it prints.
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        match self {
            LookupError::NoPackage { package, packages } => write!(
                f,
                "the catalog has no package {} (packages: {})",
                package,
                list(packages)
            ),
            LookupError::NoChannel {
                package,
                channel,
                channels,
            } => write!(
                f,
                "package {} has no channel {} (channels: {}): pass --channel",
                package,
                channel,
                list(channels)
            ),
            LookupError::NoVersion {
                package,
                version,
                versions,
            } => write!(
                f,
                "package {} has no bundle of version {} (versions: {})",
                package,
                version,
                list(versions)
            ),
            LookupError::NotInChannel {
                package,
                version,
                channel,
                channels,
            } => write!(
                f,
                "version {} of package {} is not in channel {} (it is in {}): pass --channel",
                version,
                package,
                channel,
                list(channels)
            ),
        }
    }
}

impl std::error::Error for LookupError {}

/// The starting CSV for `version` of `package` in `channel` (else the package's default
/// channel). Versions compare as semver (`v5.8.8` and `5.8.8` are the same; build metadata
/// counts); a version that is not semver matches an `olm.package` version spelled the same.
pub fn lookup(
    cfg: &DeclarativeConfig,
    package: &str,
    channel: Option<&str>,
    version: &str,
) -> Result<Found, LookupError> {
    let Some(pkg) = cfg.packages.iter().find(|p| p.name == package) else {
        let mut packages: Vec<String> = cfg.packages.iter().map(|p| p.name.clone()).collect();
        packages.sort();
        packages.dedup();
        return Err(LookupError::NoPackage {
            package: package.to_string(),
            packages,
        });
    };
    let channel = channel.unwrap_or(&pkg.default_channel);
    let mut channels: Vec<&crate::fbc::decl::Channel> = cfg
        .channels
        .iter()
        .filter(|c| c.package == package)
        .collect();
    channels.sort_by(|a, b| a.name.cmp(&b.name));
    let Some(chosen) = channels.iter().find(|c| c.name == channel) else {
        return Err(LookupError::NoChannel {
            package: package.to_string(),
            channel: channel.to_string(),
            channels: channels.iter().map(|c| c.name.clone()).collect(),
        });
    };
    let wanted = version.trim();
    let wanted_semver = semver::Version::parse(wanted.trim_start_matches('v')).ok();
    let same = |v: &str| match (&wanted_semver, semver::Version::parse(v)) {
        (Some(w), Ok(v)) => *w == v,
        _ => v == wanted,
    };
    let mut versions: Vec<(Option<semver::Version>, String)> = Vec::new();
    let mut named: Vec<&str> = Vec::new();
    for b in cfg.bundles.iter().filter(|b| b.package == package) {
        let Some((_, v, _)) = b.properties.iter().find_map(|p| p.as_package()) else {
            continue;
        };
        versions.push((semver::Version::parse(v).ok(), v.to_string()));
        if same(v) {
            named.push(&b.name);
        }
    }
    if named.is_empty() {
        versions.sort();
        versions.dedup();
        return Err(LookupError::NoVersion {
            package: package.to_string(),
            version: wanted.to_string(),
            versions: versions.into_iter().map(|(_, s)| s).collect(),
        });
    }
    let in_channel =
        |c: &crate::fbc::decl::Channel, name: &str| c.entries.iter().any(|e| e.name == name);
    if let Some(csv) = named.iter().find(|n| in_channel(chosen, n)) {
        return Ok(Found {
            csv: csv.to_string(),
            channel: channel.to_string(),
        });
    }
    let mut have: Vec<String> = channels
        .iter()
        .filter(|c| named.iter().any(|n| in_channel(c, n)))
        .map(|c| c.name.clone())
        .collect();
    have.dedup();
    Err(LookupError::NotInChannel {
        package: package.to_string(),
        version: wanted.to_string(),
        channel: channel.to_string(),
        channels: have,
    })
}

/// The name `olmctl install` writes when no catalog is at hand: `<package>.v<version>`, a
/// guess (many CSVs are named otherwise).
pub fn guess(package: &str, version: &str) -> String {
    format!("{package}.v{}", version.trim().trim_start_matches('v'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// crunchy's naming: package `crunchy`, CSVs `postgresoperator.v*`; 5.8.8 in `v5` (the
    /// default) and 5.9.0 in `next` only.
    fn catalog() -> DeclarativeConfig {
        let dir = tempfile::tempdir().expect("tempdir");
        let bundle = |v: &str| {
            format!(
                r#"{{"schema":"olm.bundle","package":"crunchy","name":"postgresoperator.v{v}","image":"example.com/b:{v}","properties":[{{"type":"olm.package","value":{{"packageName":"crunchy","version":"{v}"}}}}]}}"#
            )
        };
        let text = [
            r#"{"schema":"olm.package","name":"crunchy","defaultChannel":"v5"}"#.to_string(),
            r#"{"schema":"olm.package","name":"other","defaultChannel":"stable"}"#.to_string(),
            r#"{"schema":"olm.channel","package":"crunchy","name":"v5","entries":[{"name":"postgresoperator.v5.8.7"},{"name":"postgresoperator.v5.8.8","replaces":"postgresoperator.v5.8.7"}]}"#.to_string(),
            r#"{"schema":"olm.channel","package":"crunchy","name":"next","entries":[{"name":"postgresoperator.v5.9.0"}]}"#.to_string(),
            bundle("5.8.7"),
            bundle("5.8.8"),
            bundle("5.9.0"),
        ]
        .join("\n");
        std::fs::write(dir.path().join("catalog.json"), text).expect("write");
        crate::fbc::load::load_catalog(&[dir.path().to_path_buf()])
            .expect("loads")
            .cfg
    }

    #[test]
    fn the_csv_of_the_version_in_the_channel() {
        let cfg = catalog();
        let found = lookup(&cfg, "crunchy", None, "5.8.8").expect("found");
        assert_eq!(
            found,
            Found {
                csv: "postgresoperator.v5.8.8".into(),
                channel: "v5".into()
            }
        );
        assert_ne!(found.csv, guess("crunchy", "5.8.8"));
        assert_eq!(
            lookup(&cfg, "crunchy", Some("next"), "v5.9.0").map(|f| f.csv),
            Ok("postgresoperator.v5.9.0".into())
        );
    }

    #[test]
    fn each_miss_says_what_there_is() {
        let cfg = catalog();
        let e = lookup(&cfg, "crunchy", None, "5.9.0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "version 5.9.0 of package crunchy is not in channel v5 (it is in next): pass --channel"
        );
        let e = lookup(&cfg, "crunchy", None, "5.8.9").unwrap_err();
        assert_eq!(
            e.to_string(),
            "package crunchy has no bundle of version 5.8.9 (versions: 5.8.7, 5.8.8, 5.9.0)"
        );
        let e = lookup(&cfg, "crunchy", Some("v6"), "5.8.8").unwrap_err();
        assert_eq!(
            e.to_string(),
            "package crunchy has no channel v6 (channels: next, v5): pass --channel"
        );
        let e = lookup(&cfg, "crunch", None, "5.8.8").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the catalog has no package crunch (packages: crunchy, other)"
        );
        // A package without a channel: its default is not there.
        assert!(matches!(
            lookup(&cfg, "other", None, "1.0.0"),
            Err(LookupError::NoChannel { .. })
        ));
    }
}
