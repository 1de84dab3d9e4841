//! `olmctl install --olmv1` against a cluster: checks what OLM v1 needs (its CRDs, the
//! namespace, the catalog, the installer ServiceAccount on operator-controller v1.10 and
//! earlier), creates the manifests of [`olmctl::install::olmv1::InstallV1`], then follows the
//! conditions catalogd and operator-controller write ([`olmctl::install::olmv1::assess`])
//! until the extension is installed, operator-controller gives up, or `--timeout`.

use std::collections::HashSet;

use olmctl::install::olmv1::{Catalog, InstallV1, Outcome, assess, honours_service_account};

use super::Waiting;
use super::api::{self, Calls, Cluster, Created, Res};
use super::ui::Ui;
use crate::term::{EXIT_FINDINGS, EXIT_OK};

/// The CRD whose schema tells the release line.
const CE_CRD: &str = "clusterextensions.olm.operatorframework.io";

/// Runs the install; returns the exit status (errors are `Err`, exit 2).
pub async fn run(
    cluster: &Cluster,
    i: &InstallV1,
    waiting: &Waiting,
    ui: &mut dyn Ui,
) -> Result<u8, String> {
    let c = Calls::new(cluster, waiting.timeout);
    let ns = i.namespace.as_str();
    let Some(crd) = api::get(&c, api::CRD, None, CE_CRD).await? else {
        return Err(format!(
            "OLM v1 is not installed: no CRD {CE_CRD} (install operator-controller, or drop --olmv1)"
        ));
    };
    let honoured = honours_service_account(&crd);
    let mut i = i.clone();
    match (&i.service_account, honoured) {
        (None, true) => {
            return Err(format!(
                "this cluster's operator-controller (v1.10 or earlier) installs as the ClusterExtension's spec.serviceAccount: pass --service-account NAME of a ServiceAccount in {ns} (its RBAC: olmctl bundle installer-rbac)"
            ));
        }
        (Some(sa), true) => match api::get(&c, api::SERVICE_ACCOUNT, Some(ns), sa).await? {
            Some(live)
                if live
                    .pointer("/metadata/labels/olmctl.dev~1installer-for")
                    .is_none() =>
            {
                ui.line(&format!(
                    "ServiceAccount {ns}/{sa} exists and was not made by olmctl: its RBAC is left as it is"
                ));
                i.installer_rbac.clear();
            }
            None if i.installer_rbac.is_empty() => {
                return Err(format!(
                    "ServiceAccount {ns}/{sa} not found and no catalog image to derive it and its RBAC from (pass --catalog IMAGE, or --cluster-catalog NAME of a catalog with an image source), or create them (olmctl bundle installer-rbac)"
                ));
            }
            _ => {}
        },
        (Some(_), false) => {
            ui.line(
                "spec.serviceAccount is deprecated and ignored by this cluster's operator-controller (v1.11 and later): it installs as cluster-admin",
            );
            i.installer_rbac.clear();
        }
        (None, false) => {}
    }
    if !i.create_namespace && api::get(&c, api::NAMESPACE, None, ns).await?.is_none() {
        return Err(format!(
            "namespace {ns} not found (operator-controller does not create it): create it, or pass --create-namespace"
        ));
    }
    if let Catalog::Existing(name) = &i.catalog
        && api::get(&c, api::CLUSTER_CATALOG, None, name)
            .await?
            .is_none()
    {
        return Err(format!(
            "ClusterCatalog {name} not found: pass --catalog IMAGE to create one"
        ));
    }
    // The Namespace, ClusterCatalog and ClusterExtension carry what the user typed (namespace,
    // catalog image, package, version, channels): the API server checks them (schema and CEL
    // rules) in a dry run before anything is written. (Not the installer RBAC: a binding's
    // role does not exist before the install creates it.)
    let manifests = i.manifests();
    for m in &manifests {
        if let Some(r) = Res::of(m)
            && matches!(
                m["kind"].as_str(),
                Some("Namespace" | "ClusterCatalog" | "ClusterExtension")
            )
        {
            api::create_dry_run(&c, r, None, m).await?;
        }
    }
    for m in &manifests {
        let Some(r) = Res::of(m) else {
            return Err(format!("cannot apply a {}", m["kind"]));
        };
        let name = m["metadata"]["name"].as_str().unwrap_or_default();
        let mns = m["metadata"]["namespace"].as_str();
        let what = r.describe(mns, name);
        let verb = match api::create(&c, r, mns, m).await? {
            Created::Created => "created",
            Created::Exists => super::install::apply_existing(&c, r, mns, name, m).await?,
        };
        ui.line(&format!("{what} {verb}"));
    }
    if waiting.no_wait {
        return Ok(EXIT_OK);
    }
    let catalog = i.catalog_name();
    let mut printed: HashSet<String> = HashSet::new();
    let mut waiting_for = format!("operator-controller to install {}", i.package);
    let mut last = None;
    loop {
        let cc = api::get(&c, api::CLUSTER_CATALOG, None, &catalog).await;
        let ce = api::get(&c, api::CLUSTER_EXTENSION, None, &i.package).await;
        let (cc, ce) = match (cc, ce) {
            (Ok(cc), Ok(ce)) => (cc, ce),
            (Err(e), _) | (_, Err(e)) if c.expired() => {
                ui.error(&c.timed_out(&waiting_for, Some(&e)));
                return Ok(EXIT_FINDINGS);
            }
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let a = assess(cc.as_ref(), ce.as_ref());
        for l in &a.lines {
            if printed.insert(l.clone()) {
                ui.line(l);
            }
        }
        last = a.lines.last().cloned().or(last);
        match a.outcome {
            Outcome::Done { bundle, version } => {
                ui.line(&format!("installed {bundle} ({version}) in namespace {ns}"));
                return Ok(EXIT_OK);
            }
            Outcome::Failed { reason, message } => {
                ui.error(&format!("{reason}: {message}"));
                return Ok(EXIT_FINDINGS);
            }
            Outcome::Wait(w) => waiting_for = w,
        }
        if !c.pause(waiting.interval).await {
            let mut m = c.timed_out(&waiting_for, None);
            if let Some(l) = &last {
                m.push_str(&format!("; last seen: {l}"));
            }
            ui.error(&m);
            return Ok(EXIT_FINDINGS);
        }
    }
}
