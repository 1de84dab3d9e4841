//! The catalog as the registry API answers from it: built once at start from the validated
//! declarative config, with channel heads and deprecations resolved, so no request re-reads or
//! re-derives anything.

use std::collections::BTreeMap;

use crate::fbc::decl::DeclarativeConfig;
use crate::model::chain::{Head, heads};

/// One channel: its head (the bundle OLM installs from it) and deprecation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedChannel {
    /// The head's CSV name (`Channel.Head()` in opm; the catalog validated, so exactly one).
    pub head: String,
    /// The `olm.deprecations` message for the channel, if any.
    pub deprecation: Option<String>,
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServedCatalog {
    /// Packages by name.
    pub packages: BTreeMap<String, ServedPackage>,
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
        for c in &cfg.channels {
            let Some(p) = packages.get_mut(&c.package) else {
                continue;
            };
            if let Head::One(h) = heads(&c.entries) {
                p.channels.insert(
                    c.name.clone(),
                    ServedChannel {
                        head: h.to_string(),
                        deprecation: None,
                    },
                );
            }
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
        ServedCatalog { packages }
    }
}
