//! The config grouped by package name, as opm's `declcfg` groups it to write a catalog (and as
//! every consumer walks it); re-exported by the `model` module above, which adds OLM's channel
//! rules.

use std::collections::BTreeMap;

use super::decl::{Bundle, Channel, DeclarativeConfig, Deprecations, Other, Package};

/// Everything the config says about one package name.
#[derive(Debug, Default)]
pub struct PackageView<'a> {
    /// The `olm.package` blobs with this name (more than one is an error).
    pub blobs: Vec<&'a Package>,
    /// Channels by name (several blobs with one name is an error).
    pub channels: BTreeMap<&'a str, Vec<&'a Channel>>,
    /// Bundles by name (several blobs with one name is an error).
    pub bundles: BTreeMap<&'a str, Vec<&'a Bundle>>,
    /// `olm.deprecations` blobs for this package.
    pub deprecations: Vec<&'a Deprecations>,
    /// Custom-schema blobs naming this package.
    pub others: Vec<&'a Other>,
}

impl<'a> PackageView<'a> {
    /// The first `olm.package` blob, if any.
    pub fn package(&self) -> Option<&'a Package> {
        self.blobs.first().copied()
    }
}

/// The config grouped by package name (sorted), as every consumer walks it.
#[derive(Debug, Default)]
pub struct Index<'a> {
    /// Package name to what refers to it. Channels and bundles are grouped under the package they
    /// name even when no `olm.package` blob exists.
    pub packages: BTreeMap<&'a str, PackageView<'a>>,
    /// Custom-schema blobs with no package.
    pub global_others: Vec<&'a Other>,
}

impl<'a> Index<'a> {
    /// Groups `cfg`.
    pub fn new(cfg: &'a DeclarativeConfig) -> Self {
        let mut idx = Index::default();
        for p in &cfg.packages {
            idx.packages.entry(&p.name).or_default().blobs.push(p);
        }
        for c in &cfg.channels {
            idx.packages
                .entry(&c.package)
                .or_default()
                .channels
                .entry(&c.name)
                .or_default()
                .push(c);
        }
        for b in &cfg.bundles {
            idx.packages
                .entry(&b.package)
                .or_default()
                .bundles
                .entry(&b.name)
                .or_default()
                .push(b);
        }
        for d in &cfg.deprecations {
            idx.packages
                .entry(&d.package)
                .or_default()
                .deprecations
                .push(d);
        }
        for o in &cfg.others {
            if o.package.is_empty() {
                idx.global_others.push(o);
            } else {
                idx.packages.entry(&o.package).or_default().others.push(o);
            }
        }
        idx
    }
}
