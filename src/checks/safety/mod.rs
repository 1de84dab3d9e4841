//! Upgrade safety: what can go wrong when a user moves from one bundle to the next (semver skew,
//! CRD version deprecation, CRD schema compatibility, Kubernetes API removals), checked
//! statically on every edge a catalog allows.

pub mod schema;
mod schema_diff;
