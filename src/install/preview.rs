//! What OLM will do with an install before it is written: the install's own manifests (its
//! OperatorGroup, Subscription and CatalogSource) resolved as OLM's resolver resolves the
//! namespace ([`crate::resolve::steps::resolve`]) against the catalog's content.

use super::Install;
use crate::fbc::decl::DeclarativeConfig;
use crate::resolve::entry::SourceKey;
use crate::resolve::state::ClusterState;
use crate::resolve::steps::{CatalogContent, Request, Resolution, resolve};

/// Resolves the namespace of `i` as it is after the install: its manifests (an OperatorGroup
/// assumed when the install creates none: `--no-operator-group` says the namespace has one),
/// and `cfg` as the content of the install's CatalogSource. `state` holds what else the
/// namespace has (its CSVs, Subscriptions and other CatalogSources), if known; `others` the
/// content of those other catalogs.
pub fn preview(
    i: &Install,
    cfg: &DeclarativeConfig,
    state: &ClusterState,
    others: &[(SourceKey, &DeclarativeConfig)],
) -> Resolution {
    let mut state = state.clone();
    for m in i.manifests() {
        state.add(&m);
    }
    if !state
        .operator_groups
        .iter()
        .any(|o| o.namespace == i.namespace)
    {
        state.add(&serde_json::json!({
            "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
            "metadata": {"name": i.namespace, "namespace": i.namespace}}));
    }
    let (name, namespace) = i.source();
    let mut catalogs = vec![CatalogContent {
        key: SourceKey::new(name, namespace),
        cfg,
    }];
    catalogs.extend(others.iter().map(|(key, cfg)| CatalogContent {
        key: key.clone(),
        cfg,
    }));
    resolve(&Request {
        namespace: i.namespace.clone(),
        global_namespace: i.catalog_namespace.clone(),
        state: &state,
        catalogs,
    })
}
