//! Upgrade safety: what can go wrong when a user moves from one bundle to the next, checked
//! statically on every edge a catalog allows (`olmctl check upgrade`, `olmctl check catalog`).
//!
//! - [`skew`]: semver skew policy (SKW codes);
//! - [`crdver`]: CRD version deprecation across edges and along paths (CRV codes);
//! - [`schema`]: CRD schema compatibility per version pair, the crdify set (SCH codes);
//! - Kubernetes API removals: the bundle `deprecated-apis` suite (API codes) run against the
//!   newest release of the target range;
//! - [`walk`]: the edges of a catalog (or of a bundle history) and the path facts along them.

pub mod crdver;
pub mod facts;
pub mod policy;
pub mod schema;
mod schema_change;
mod schema_diff;
pub mod skew;
pub mod walk;

use crate::bundle::load::BundleDir;
use crate::diag::Code;
use crate::diag::{Finding, sort_findings};

pub use crdver::History;
pub use facts::Facts;
pub use policy::{K8sRange, Policy};

/// What the checks are run with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The policy file's settings.
    pub policy: Policy,
    /// The target Kubernetes range (`--k8s-version`, else the policy's `k8sVersion`).
    pub target: Option<K8sRange>,
    /// Where `target` comes from when it is not `--k8s-version`, as messages name its newest
    /// release (`the newest Kubernetes of --openshift-version 4.16-4.21`).
    pub target_from: Option<String>,
}

/// Every code of the upgrade checks (the API codes belong to the bundle suites).
pub fn codes() -> Vec<&'static Code> {
    let mut v: Vec<&'static Code> = skew::CODES.to_vec();
    v.extend(crdver::CODES.iter().copied());
    v.extend(schema::CODES.iter().copied());
    v.extend(walk::CODES.iter().copied());
    v
}

/// The checks of one bundle that do not depend on where users come from: version fields, CRD
/// version rules, Kubernetes API removals, and the bundle problems that hide the rest (files
/// that do not parse, no CSV).
pub fn check_bundle(f: &Facts<'_>, opts: &Options) -> Vec<Finding> {
    check_bundle_after(f, &[], opts)
}

/// [`check_bundle`] for a bundle users reach from `before` (its predecessors on the checked
/// edges): a CRV006 problem every one of them already had is not reported again.
pub fn check_bundle_after(f: &Facts<'_>, before: &[&Facts<'_>], opts: &Options) -> Vec<Finding> {
    let mut out = Vec::new();
    crdver::served_schemas(f, before, &mut out);
    skew::bundle(f, opts.target.as_ref(), &mut out);
    crdver::bundle(f, &mut out);
    let apis = crate::checks::bundle::Options {
        k8s_version: opts.target.as_ref().map(|r| r.max.clone()),
        k8s_version_from: opts.target_from.clone(),
        // The removal table, and what makes the other checks blind: files that do not parse
        // (BND001) and a missing or second CSV (BND004).
        select: vec!["deprecated-apis".into(), "BND001".into(), "BND004".into()],
        ..Default::default()
    };
    out.extend(crate::checks::bundle::validate_with(f.bundle, &apis));
    out
}

/// The old bundle's problems that would make the edge checks blind: files that do not parse
/// (BND001) and a missing or second CSV (BND004). A CRD in an unreadable file of the old
/// bundle could not be compared, so its removal would pass unseen.
pub fn blinding_problems(old: &Facts<'_>) -> Vec<Finding> {
    let sel = crate::checks::bundle::Options {
        k8s_version: None,
        select: vec!["BND001".into(), "BND004".into()],
        ..Default::default()
    };
    crate::checks::bundle::validate_with(old.bundle, &sel)
}

/// The checks of the edge `old -> new` for users whose path to `old` is `hist`.
pub fn check_edge(
    old: &Facts<'_>,
    new: &Facts<'_>,
    hist: &History,
    opts: &Options,
) -> Vec<Finding> {
    let mut out = Vec::new();
    skew::edge(old, new, &opts.policy, &mut out);
    crdver::edge(old, new, hist, &opts.policy, &mut out);
    out
}

/// `olmctl check upgrade OLD NEW`: the edge checks (with the old bundle as the whole path) and
/// the new bundle's own checks, policy applied, sorted.
pub fn check_upgrade(old: &BundleDir, new: &BundleDir, opts: &Options) -> Vec<Finding> {
    check_upgrade_of(&Facts::of(old), &Facts::of(new), opts)
}

/// [`check_upgrade`] on bundles already read into [`Facts`].
pub fn check_upgrade_of(o: &Facts<'_>, n: &Facts<'_>, opts: &Options) -> Vec<Finding> {
    let mut out = check_edge(o, n, &History::own(o), opts);
    for f in &mut out {
        f.message = format!("{} -> {}: {}", o.name, n.name, f.message);
    }
    out.extend(check_bundle_after(n, &[o], opts));
    out.extend(blinding_problems(o));
    opts.policy.apply(&mut out);
    sort_findings(&mut out);
    out
}
