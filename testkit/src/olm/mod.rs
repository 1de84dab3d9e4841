//! OLM v0's two controllers as doubles: the catalog operator (resolution, InstallPlans,
//! their execution) and the OLM operator (CSV phases, Deployments, RBAC, webhooks), each
//! following the OLM source revision of cluster.md (`992bb097`, v0.46.0-17).

pub mod rbac;
