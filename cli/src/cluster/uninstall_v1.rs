//! `olmctl uninstall --olmv1` against a cluster: deletes the ClusterExtension and waits until
//! it is gone (operator-controller uninstalls the bundle's objects, then lifts its finalizers),
//! then the installer RBAC olmctl made for it (objects labelled
//! `app.kubernetes.io/managed-by: olmctl` and `olmctl.dev/installer-for: <extension>`, as
//! `bundle installer-rbac` writes them; never a ServiceAccount without those labels), and, when
//! asked, the ClusterCatalog `install --olmv1` created.

use super::Waiting;
use super::api::{self, Calls, Cluster, Res};
use super::ui::Ui;
use crate::term::{EXIT_FINDINGS, EXIT_OK};

/// The installer's kinds, deleted bindings first.
const INSTALLER_KINDS: [Res; 5] = [
    api::CLUSTER_ROLE_BINDING,
    api::ROLE_BINDING,
    api::CLUSTER_ROLE,
    api::ROLE,
    api::SERVICE_ACCOUNT,
];

/// Runs the uninstall of ClusterExtension `name`; returns the exit status.
pub async fn run(
    cluster: &Cluster,
    name: &str,
    catalog: Option<&str>,
    waiting: &Waiting,
    ui: &mut dyn Ui,
) -> Result<u8, String> {
    let c = Calls::new(cluster, waiting.timeout);
    if api::get(&c, api::CLUSTER_EXTENSION, None, name)
        .await?
        .is_none()
    {
        return Err(format!("ClusterExtension {name} not found"));
    }
    api::delete(&c, api::CLUSTER_EXTENSION, None, name).await?;
    ui.line(&format!("ClusterExtension {name} deleted"));
    loop {
        if api::get(&c, api::CLUSTER_EXTENSION, None, name)
            .await?
            .is_none()
        {
            ui.line(&format!(
                "ClusterExtension {name} is gone (operator-controller uninstalled its bundle)"
            ));
            break;
        }
        if !c.pause(waiting.interval).await {
            ui.error(&c.timed_out(
                &format!("operator-controller to uninstall ClusterExtension {name}"),
                None,
            ));
            return Ok(EXIT_FINDINGS);
        }
    }
    let selector = format!("app.kubernetes.io/managed-by=olmctl,olmctl.dev/installer-for={name}");
    for r in INSTALLER_KINDS {
        for o in api::list_selected(&c, r, None, Some(&selector)).await? {
            let oname = o["metadata"]["name"].as_str().unwrap_or_default();
            let ns = o["metadata"]["namespace"].as_str();
            if api::delete(&c, r, ns, oname).await? {
                ui.line(&format!("{} deleted", r.describe(ns, oname)));
            }
        }
    }
    if let Some(cc) = catalog
        && api::delete(&c, api::CLUSTER_CATALOG, None, cc).await?
    {
        ui.line(&format!("ClusterCatalog {cc} deleted"));
    }
    Ok(EXIT_OK)
}
