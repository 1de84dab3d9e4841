//! olmctl-operator: an upgrade gate for OLM that approves InstallPlans by `UpgradePolicy`,
//! thin over the olmctl library (`olmctl::gate`), which makes every decision.
//!
//! - [`client`]: the API client, every call with a deadline;
//! - [`crd`]: the UpgradePolicy resource (v1, and the deprecated v1alpha1);
//! - [`controller`]: caches, the namespace reconcile, Events, status, approvals;
//! - [`cluster`]: what a reconcile reads from the API server;
//! - [`extensions`]: OLM v1 ClusterExtensions: catalog content from catalogd, the pin's moves;
//! - [`leader`]: Lease-based leader election as client-go's;
//! - [`run`]: the process (probes, webhook, caches, election, signals);
//! - [`http`]: `/metrics`, `/healthz`, `/readyz`, and the conversion webhook over TLS;
//! - [`metrics`]: the counters.

pub mod client;
pub mod cluster;
pub mod controller;
pub mod crd;
pub mod extensions;
pub mod http;
pub mod leader;
pub mod metrics;
pub mod run;

use std::sync::Arc;

/// The operator's clock (tests set it).
pub type Clock = Arc<dyn Fn() -> jiff::Timestamp + Send + Sync>;

/// The wall clock.
pub fn system_clock() -> Clock {
    Arc::new(jiff::Timestamp::now)
}

/// A timestamp as k8s-openapi's (another jiff release) has it.
pub fn to_k8s_time(t: jiff::Timestamp) -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::from_nanosecond(t.as_nanosecond()).unwrap_or_default()
}

/// The cluster's version from `/version`, patch included: `gitVersion` read as semver
/// (`v1.30.2+k3s1` is 1.30.2, `v1.31.4-gke.1000` is 1.31.4, build and vendor suffixes
/// dropped); without a usable `gitVersion`, `major.minor.0` (a `+` on the minor dropped).
pub fn parse_kube_version(
    info: &k8s_openapi::apimachinery::pkg::version::Info,
) -> Option<semver::Version> {
    let git = info.git_version.trim_start_matches('v');
    let core = git.split(['-', '+']).next().unwrap_or_default();
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    if let (Some(Some(a)), Some(Some(b)), Some(Some(c)), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    {
        return Some(semver::Version::new(a, b, c));
    }
    let num = |s: &str| s.trim_end_matches('+').parse::<u64>().ok();
    Some(semver::Version::new(
        num(&info.major)?,
        num(&info.minor)?,
        0,
    ))
}

/// The cluster's version ([`parse_kube_version`] of `/version`); `None`, logged, when it
/// cannot be read.
pub async fn kube_version(client: &kube::Client) -> Option<semver::Version> {
    match client.apiserver_version().await {
        Ok(info) => parse_kube_version(&info),
        Err(e) => {
            tracing::warn!(error = %e, "the cluster's version was not read");
            None
        }
    }
}
