//! `olmctl uninstall` against a cluster: reads the package's Subscription, CSVs, the custom
//! resources of the CRDs they own and the CatalogSource, then deletes in the phases of
//! [`olmctl::install::uninstall`] (Subscription; with `--delete-crds` the custom resources
//! while the operator still runs; every CSV of the package; the CRDs; the CatalogSource),
//! waiting for each phase to be gone before the next.

use kube::Client;
use olmctl::cli::cluster::UninstallRequest;
use olmctl::cli::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
use olmctl::install::uninstall::{Deletion, Found};
use serde_json::Value;

use crate::api;
use crate::ui::Ui;

fn gvkp(d: &Deletion) -> (&str, &str, &str, &str) {
    (&d.group, &d.version, &d.kind, &d.plural)
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

/// The storage version of a CRD (its custom resources are listed in it).
fn storage_version(crd: &Value) -> Option<String> {
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .map(str::to_string)
}

/// Runs the uninstall; returns the exit status.
pub async fn run(client: &Client, req: &UninstallRequest, ui: &mut dyn Ui) -> Result<u8, String> {
    let u = &req.uninstall;
    let ns = u.namespace.as_str();
    let sub_name = u.subscription_name();
    let Some(sub) = api::get(client, api::SUBSCRIPTION, Some(ns), sub_name).await? else {
        return Err(format!(
            "Subscription {ns}/{sub_name} not found (pass --subscription NAME when it is not named after the package)"
        ));
    };
    let csvs = api::list(client, api::CSV, Some(ns)).await?;
    let mut found = Found {
        subscription: Some(sub.clone()),
        csvs,
        ..Found::default()
    };
    let owned =
        olmctl::install::uninstall::Uninstall::owned_crds(&u.package_csvs(Some(&sub), &found.csvs));
    for name in &owned {
        let Some(crd) = api::get(client, api::CRD, None, name).await? else {
            continue;
        };
        let Some(version) = storage_version(&crd) else {
            continue;
        };
        let items = api::list_all(
            client,
            s(&crd, "/spec/group"),
            &version,
            s(&crd, "/spec/names/kind"),
            s(&crd, "/spec/names/plural"),
        )
        .await?;
        found.custom_resources.push((crd, items));
    }
    found.catalog_source = match (
        sub.pointer("/spec/source").and_then(Value::as_str),
        sub.pointer("/spec/sourceNamespace").and_then(Value::as_str),
    ) {
        (Some(src), Some(sns)) if u.delete_catalog_source => {
            api::get(client, api::CATALOG_SOURCE, Some(sns), src).await?
        }
        _ => None,
    };
    let (phases, notes) = u.plan(&found);
    let crds: Vec<&Deletion> = phases
        .iter()
        .flatten()
        .filter(|d| d.kind == "CustomResourceDefinition")
        .collect();
    if !crds.is_empty() && !req.waiting.yes {
        let names: Vec<&str> = crds.iter().map(|d| d.name.as_str()).collect();
        let q = format!(
            "Delete the CRDs {} and every custom resource of them, in all namespaces?",
            names.join(", ")
        );
        match ui.confirm(&q) {
            Some(true) => {}
            Some(false) => {
                ui.line("nothing deleted");
                return Ok(EXIT_FINDINGS);
            }
            None => {
                ui.error(
                    "--delete-crds deletes every custom resource of the CRDs and there is no terminal to ask: pass --yes",
                );
                return Ok(EXIT_USAGE);
            }
        }
    }
    for n in notes.iter().filter(|n| n.starts_with("warning: ")) {
        ui.line(n);
    }
    let deadline = tokio::time::Instant::now() + req.waiting.timeout;
    for phase in &phases {
        for d in phase {
            let gone =
                !api::delete_dynamic(client, gvkp(d), d.namespace.as_deref(), &d.name).await?;
            let verb = if gone { "was already gone" } else { "deleted" };
            ui.line(&format!("{} {verb}", d.describe()));
        }
        if req.waiting.no_wait {
            continue;
        }
        // Each phase is gone before the next starts (finalizers may keep objects a while:
        // a custom resource's, a CRD waiting for its custom resources).
        for d in phase {
            while api::get_dynamic(client, gvkp(d), d.namespace.as_deref(), &d.name)
                .await?
                .is_some()
            {
                if tokio::time::Instant::now() >= deadline {
                    ui.error(&format!(
                        "timed out after {:?} waiting for {} to go",
                        req.waiting.timeout,
                        d.describe()
                    ));
                    return Ok(EXIT_FINDINGS);
                }
                tokio::time::sleep(req.waiting.interval).await;
            }
        }
    }
    for n in notes.iter().filter(|n| !n.starts_with("warning: ")) {
        ui.line(n);
    }
    if req.waiting.no_wait {
        return Ok(EXIT_OK);
    }
    ui.line(&format!("uninstalled {} from namespace {ns}", u.package));
    Ok(EXIT_OK)
}
