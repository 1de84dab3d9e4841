//! APIs another server serves behind kube-aggregator (an `APIService`): the API server
//! proxies every request of their group-version to that server, after authenticating and
//! authorizing it (kube-aggregator `pkg/apiserver/handler_proxy.go :: proxyHandler.ServeHTTP`;
//! the aggregated server authorizes the same attributes again through a SubjectAccessReview,
//! which gives the same RBAC answer). Discovery lists their resources with the others
//! (`pkg/apiserver/handler_apis.go`).
//!
//! An aggregated server is registered with [`super::ApiServer::aggregate`]. It serves `get` and
//! `list` only (the storages these tests need, such as OLM's package-server, implement
//! `rest.Getter` and `rest.Lister` and nothing else): any other verb is the generic
//! apiserver's 405 `MethodNotAllowed`. Its lists are whole (no `limit`/`continue`, as a
//! storage that is not etcd-backed answers), and it reads the API's own objects through
//! [`super::ApiServer`] at each request.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ApiServer;
use super::resources::Resource;
use super::status::ApiError;

/// One request an aggregated server answers.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// `get` or `list`.
    pub verb: &'a str,
    /// The version of the path.
    pub version: &'a str,
    /// The resource (plural).
    pub plural: &'a str,
    /// The namespace of the path (`None`: all namespaces, or a cluster-scoped resource).
    pub namespace: Option<&'a str>,
    /// The object's name, for a `get`.
    pub name: Option<&'a str>,
    /// The query parameters (`labelSelector`, `fieldSelector`, ...).
    pub query: &'a BTreeMap<String, String>,
}

/// A server behind an `APIService`.
pub trait Aggregated: Send + Sync {
    /// The resources it serves (one group; its served versions), for discovery and routing.
    fn resources(&self) -> Vec<Resource>;
    /// The answer to a `get` (the object) or a `list` (the list object).
    fn serve(&self, api: &ApiServer, req: &Request<'_>) -> Result<Value, ApiError>;
}
