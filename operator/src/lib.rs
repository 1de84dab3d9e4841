//! olmctl-operator: an upgrade gate for OLM that approves InstallPlans by `UpgradePolicy`,
//! thin over the olmctl library (`olmctl::gate`), which makes every decision.
//!
//! - [`crd`]: the UpgradePolicy resource (v1, and the deprecated v1alpha1);
//! - [`controller`]: reconcile, finalizer, Events, status, approvals;
//! - [`cluster`]: what a reconcile reads from the API server;
//! - [`leader`]: Lease-based leader election;
//! - [`http`]: `/metrics`, `/healthz`, `/readyz`, and the conversion webhook over TLS;
//! - [`metrics`]: the counters.

pub mod cluster;
pub mod controller;
pub mod crd;
pub mod http;
pub mod leader;
pub mod metrics;

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

/// The cluster's version as `major.minor.0` (`/version`; `+` suffixes dropped).
pub async fn kube_version(client: &kube::Client) -> Option<semver::Version> {
    let v = client.apiserver_version().await.ok()?;
    let num = |s: &str| s.trim_end_matches('+').parse::<u64>().ok();
    Some(semver::Version::new(num(&v.major)?, num(&v.minor)?, 0))
}
