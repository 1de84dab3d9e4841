//! The direct successors of an installed ClusterExtension bundle in a catalog's content, as
//! operator-controller finds them (`filter/successors.go :: SuccessorsOf`), in the order OLM
//! v1 prefers them: the candidates of the gate's next step.

use std::collections::BTreeMap;

use semver::{BuildMetadata, Version};

use crate::fbc::decl::{Bundle, DeclarativeConfig};
use crate::graph::EdgeKind;

/// A candidate step: a direct successor of the installed bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The bundle's name.
    pub bundle: String,
    /// Its version.
    pub version: Version,
    /// The edge that makes it a successor (`None` under `SelfCertified`).
    pub edge: Option<EdgeKind>,
    /// The channel that declares the edge (the first, by name).
    pub channel: String,
    /// Deprecated by the package's `olm.deprecations` (OLM v1 picks it last).
    pub deprecated: bool,
}

/// Parses a version as OLM v1 writes `status.install.bundle.version` (a registry+v1 release
/// is build metadata, `1.0.0+2`).
pub(super) fn parse_version(s: &str) -> Option<Version> {
    Version::parse(s.trim()).ok()
}

/// The bundles of `package`, by name, with their versions.
pub(super) fn bundles<'c>(
    cfg: &'c DeclarativeConfig,
    package: &str,
) -> BTreeMap<&'c str, &'c Bundle> {
    cfg.bundles
        .iter()
        .filter(|b| b.package == package)
        .map(|b| (b.name.as_str(), b))
        .collect()
}

pub(super) fn bundle_version(b: &Bundle) -> Option<Version> {
    b.properties
        .iter()
        .find_map(|p| p.as_package())
        .and_then(|(_, v, _)| parse_version(v))
}

/// The direct successors of the installed bundle, as operator-controller's
/// `filter/successors.go :: SuccessorsOf` (`legacySuccessor`) finds them: a channel entry whose
/// `replaces` names the installed bundle, whose `skips` lists it, or whose `skipRange` (blang)
/// contains its version, in the selected channels only (`resolve/catalog.go ::
/// CatalogResolver.Resolve` filters `packageFBC.Channels` first). Under `SelfCertified`
/// (`Resolve` leaves `SuccessorsOf` out) every bundle of those channels qualifies. Only versions
/// above the installed one are kept: the gate never moves a pin down. Sorted as v1 prefers them
/// (`compare.go :: ByDeprecationFunc, ByVersionAndRelease`): not deprecated first, then the
/// higher version, then the name.
pub fn successors(
    cfg: &DeclarativeConfig,
    package: &str,
    channels: &[String],
    self_certified: bool,
    installed_name: &str,
    installed: &Version,
) -> Result<Vec<Step>, String> {
    let known = bundles(cfg, package);
    if known.is_empty() {
        return Err(format!("the catalog has no bundle of package {package}"));
    }
    let mut chans: Vec<_> = cfg
        .channels
        .iter()
        .filter(|c| c.package == package)
        .filter(|c| channels.is_empty() || channels.contains(&c.name))
        .collect();
    if chans.is_empty() {
        return Err(format!(
            "the catalog has no channel {} of package {package}",
            channels.join(", ")
        ));
    }
    chans.sort_by(|a, b| a.name.cmp(&b.name));
    let deprecated: std::collections::BTreeSet<&str> = cfg
        .deprecations
        .iter()
        .filter(|d| d.package == package)
        .flat_map(|d| &d.entries)
        .filter(|e| e.reference.schema == "olm.bundle")
        .map(|e| e.reference.name.as_str())
        .collect();
    let mut out: Vec<Step> = Vec::new();
    for ch in chans {
        for e in &ch.entries {
            let edge = if e.replaces == installed_name {
                Some(EdgeKind::Replaces)
            } else if e.skips.iter().any(|s| s == installed_name) {
                Some(EdgeKind::Skips)
            } else if !e.skip_range.is_empty()
                && crate::range::Range::parse(&e.skip_range).is_ok_and(|r| r.contains(installed))
            {
                Some(EdgeKind::SkipRange)
            } else {
                None
            };
            if edge.is_none() && !self_certified {
                continue;
            }
            let Some(v) = known.get(e.name.as_str()).and_then(|b| bundle_version(b)) else {
                continue;
            };
            if v.cmp_precedence(installed).is_le() || out.iter().any(|s| s.bundle == e.name) {
                continue;
            }
            out.push(Step {
                bundle: e.name.clone(),
                version: v,
                edge: if self_certified { None } else { edge },
                channel: ch.name.clone(),
                deprecated: deprecated.contains(e.name.as_str()),
            });
        }
    }
    out.sort_by(|a, b| {
        a.deprecated
            .cmp(&b.deprecated)
            .then_with(|| b.version.cmp_precedence(&a.version))
            .then_with(|| b.version.build.cmp(&a.version.build))
            .then_with(|| a.bundle.cmp(&b.bundle))
    });
    Ok(out)
}

/// The pin for `v`: the version without build metadata (Masterminds ignores it).
pub(super) fn pin_of(v: &Version) -> String {
    let mut p = v.clone();
    p.build = BuildMetadata::EMPTY;
    p.to_string()
}
