//! Test doubles of the cluster for olmctl's tests: there is no kube-apiserver, kubelet or OLM
//! on the development machines, so these ARE the cluster, and they are as strict as the real
//! thing. Each modelled behaviour names the upstream function it follows
//! (`../shared/reference/cluster.md` lists the rules, R1.1 ...).
//!
//! - [`api`]: an in-memory kube-apiserver, for a `kube::Client` in-process or over HTTP;
//! - [`fixtures`]: the shared fixtures as JSON;
//! - [`kubelet`]: the kubelet and deployment controller, running Deployments' binaries as pods;
//! - [`olm`]: OLM's catalog and OLM operators;
//! - [`process`]: real processes as pods (their own address, a kubeconfig, signals).

pub mod api;
pub mod fixtures;
pub mod kubelet;
pub mod olm;
pub mod olmv1;
pub mod process;
