//! `olmctl uninstall` against a cluster: deletes the Subscription, then its CSV (OLM's garbage
//! collection removes the operator's Deployments, RBAC and Services the CSV owns), then, when
//! asked and confirmed, the CRDs the CSV owns and the CatalogSource `olmctl install` created;
//! then waits until they are gone.

use kube::Client;
use olmctl::cli::cluster::UninstallRequest;
use olmctl::cli::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
use olmctl::install::uninstall::{Deletion, Uninstall};

use crate::api::{self, Res};
use crate::ui::Ui;

fn res(d: &Deletion) -> Res {
    [api::SUBSCRIPTION, api::CSV, api::CRD, api::CATALOG_SOURCE]
        .into_iter()
        .find(|r| r.kind == d.kind)
        .unwrap_or(api::SUBSCRIPTION)
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
    let csv = match Uninstall::csv_name(&sub) {
        Some(c) => api::get(client, api::CSV, Some(ns), &c).await?,
        None => None,
    };
    let catalog_source = match (
        sub.pointer("/spec/source").and_then(|v| v.as_str()),
        sub.pointer("/spec/sourceNamespace")
            .and_then(|v| v.as_str()),
    ) {
        (Some(s), Some(sns)) if u.delete_catalog_source => {
            api::get(client, api::CATALOG_SOURCE, Some(sns), s).await?
        }
        _ => None,
    };
    let (deletions, notes) = u.plan(csv.as_ref(), catalog_source.as_ref());
    let crds: Vec<&Deletion> = deletions
        .iter()
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
    for d in &deletions {
        let gone = !api::delete(client, res(d), d.namespace.as_deref(), &d.name).await?;
        let verb = if gone { "was already gone" } else { "deleted" };
        ui.line(&format!("{} {verb}", d.describe()));
    }
    for n in &notes {
        ui.line(n);
    }
    if req.waiting.no_wait {
        return Ok(EXIT_OK);
    }
    // Finalizers (CRDs wait for their custom resources) may keep objects a while.
    let deadline = tokio::time::Instant::now() + req.waiting.timeout;
    for d in &deletions {
        while api::get(client, res(d), d.namespace.as_deref(), &d.name)
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
    ui.line(&format!("uninstalled {} from namespace {ns}", u.package));
    Ok(EXIT_OK)
}
