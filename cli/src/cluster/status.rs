//! `olmctl status` against a cluster: three LISTs (Subscriptions, CSVs, InstallPlans) in one
//! namespace or in all, turned into rows by [`olmctl::status::rows`].

use olmctl::status::{Row, rows};

use super::StatusRequest;
use super::api::{self, Calls, Cluster};

/// Copied CSVs (one per namespace an AllNamespaces operator watches) carry this label, set to
/// the operator's namespace by OLM's `pkg/controller/operators/olm/operatorgroup.go ::
/// csvCopyPrototype` (called from `copyToNamespace`); they are not installs, so they are not
/// listed, as OLM's own CSV informers leave them out (`olm/operator.go`: the selector
/// `!olm.copiedFrom`).
const NOT_COPIED: &str = "!olm.copiedFrom";

/// What `olmctl status` read.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The namespace read; `None`: all.
    pub namespace: Option<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// Reads the rows. The namespace is the request's, else the kubeconfig context's (else
/// `default`; in a pod, its service account's), as kubectl picks it.
pub async fn read(cluster: &Cluster, req: &StatusRequest) -> Result<Listing, String> {
    let c = Calls::new(cluster, req.timeout);
    let namespace = match (&req.namespace, req.all_namespaces) {
        (_, true) => None,
        (Some(ns), false) => Some(ns.clone()),
        (None, false) => Some(cluster.client.default_namespace().to_string()),
    };
    if let Some(n) = &namespace {
        let what = if req.namespace.is_some() {
            "--namespace"
        } else {
            "the kubeconfig context's namespace"
        };
        olmctl::names::check(olmctl::names::Rule::Label, what, n).map_err(|e| e.to_string())?;
    }
    let ns = namespace.as_deref();
    let olm = |e: String| {
        if e.contains("does not serve this resource") {
            format!("{e}: OLM's CRDs are missing: install OLM on this cluster first")
        } else {
            e
        }
    };
    let subscriptions = api::list(&c, api::SUBSCRIPTION, ns).await.map_err(olm)?;
    let csvs = api::list_selected(&c, api::CSV, ns, Some(NOT_COPIED))
        .await
        .map_err(olm)?;
    let plans = api::list(&c, api::INSTALL_PLAN, ns).await.map_err(olm)?;
    Ok(Listing {
        rows: rows(&subscriptions, &csvs, &plans),
        namespace,
    })
}
