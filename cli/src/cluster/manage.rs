//! kubectl-operator's commands against a cluster: `packages` (list-available), `describe`,
//! `upgrade`, `list-operands` and `catalog add|list|remove`, over the untyped [`api`]; what
//! they decide is [`olmctl::manage`]'s.

use std::time::Duration;

use serde_json::{Value, json};

use super::Connection;
use super::api::{self, Calls, Cluster};
use super::ui::Ui;
use crate::term::{EXIT_FINDINGS, EXIT_OK};
use olmctl::manage::upgrade::{self, Next};

/// What every one of these commands reads.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The cluster.
    pub connection: Connection,
    /// `--namespace`; `None`: the kubeconfig context's (else `default`), as kubectl.
    pub namespace: Option<String>,
    /// Give up after this long.
    pub timeout: Duration,
}

/// The namespace of a command: the flag, else the kubeconfig context's, checked.
fn namespace(cluster: &Cluster, scope: &Scope) -> Result<String, String> {
    let (ns, what) = match &scope.namespace {
        Some(ns) => (ns.clone(), "--namespace"),
        None => (
            cluster.client.default_namespace().to_string(),
            "the kubeconfig context's namespace",
        ),
    };
    olmctl::names::check(olmctl::names::Rule::Label, what, &ns).map_err(|e| e.to_string())?;
    Ok(ns)
}

/// `f` on a runtime of its own, connected; an error is printed, as exit status 2.
fn run<T>(
    scope: &Scope,
    f: impl AsyncFnOnce(&Cluster, &Calls, String) -> Result<T, String>,
) -> Result<T, u8> {
    super::block_on(async {
        let cluster = super::connect::client(&scope.connection).await?;
        let ns = namespace(&cluster, scope)?;
        let c = Calls::new(&cluster, scope.timeout);
        f(&cluster, &c, ns).await
    })
}

/// The error of a missing package-server.
fn packages_api(e: String) -> String {
    if e.contains("does not serve this resource") {
        format!(
            "{e}: packages.operators.coreos.com is served by OLM's package-server: install OLM (v0) on this cluster, or check `kubectl get apiservice v1.packages.operators.coreos.com`"
        )
    } else {
        e
    }
}

/// The PackageManifests of the namespace (and of OLM's global one, as package-server answers),
/// those of a catalog with `selector`, or the one named `package`
/// (`operator_list_available.go :: OperatorListAvailable.Run`). A package no catalog offers
/// is an error naming the namespace.
pub fn packages(
    scope: &Scope,
    package: Option<&str>,
    selector: Option<&str>,
) -> Result<(String, Vec<Value>), u8> {
    run(scope, async |_, c, ns| {
        let all = api::list_selected(c, api::PACKAGE_MANIFEST, Some(&ns), selector)
            .await
            .map_err(packages_api)?;
        let Some(p) = package else {
            return Ok((ns, all));
        };
        let found: Vec<Value> = if selector.is_some() {
            all.into_iter()
                .filter(|m| m["metadata"]["name"] == p)
                .collect()
        } else {
            api::get(c, api::PACKAGE_MANIFEST, Some(&ns), p)
                .await
                .map_err(packages_api)?
                .into_iter()
                .collect()
        };
        if found.is_empty() {
            return Err(format!(
                "packagemanifests.packages.operators.coreos.com {p:?} not found in namespace {ns}{} (list them with `olmctl packages -n {ns}`)",
                selector.map(|s| format!(" with {s}")).unwrap_or_default()
            ));
        }
        Ok((ns, found))
    })
}

/// The custom resources of `package`'s operator ([`olmctl::manage::operands`]), as a `List`.
pub fn operands(scope: &Scope, package: &str) -> Result<Vec<Value>, u8> {
    use olmctl::manage::operands as op;
    run(scope, async |_, c, ns| {
        let subs = api::list(c, api::SUBSCRIPTION, Some(&ns)).await?;
        let csv_name = op::installed_csv(&subs, package, &ns).map_err(|e| e.to_string())?;
        let csv = api::get(c, api::CSV, Some(&ns), &csv_name)
            .await?
            .ok_or_else(|| format!("could not get {ns}/{csv_name} CSV on cluster: not found"))?;
        let owned = op::owned(&csv).map_err(|e| e.to_string())?;
        let groups = api::list(c, api::OPERATOR_GROUP, Some(&ns)).await?;
        let namespaces = op::target_namespaces(&groups, &ns).map_err(|e| e.to_string())?;
        let mut all = Vec::new();
        for (crd_name, version) in owned {
            let crd = api::get(c, api::CRD, None, &crd_name)
                .await?
                .ok_or_else(|| format!("get crd {crd_name:?}: not found"))?;
            let k = op::kind(&crd, &version);
            let items = api::list_all(c, (&k.group, &k.version, &k.kind, &k.plural)).await?;
            all.extend(items);
        }
        Ok(op::select(all, &namespaces))
    })
}

/// The CatalogSources of the namespace, or of all (`catalog_list.go`).
pub fn catalogs(scope: &Scope, all_namespaces: bool) -> Result<(String, Vec<Value>), u8> {
    run(scope, async |_, c, ns| {
        let which = (!all_namespaces).then_some(ns.as_str());
        let list = api::list(c, api::CATALOG_SOURCE, which).await?;
        Ok((ns, list))
    })
}

/// `catalog add`: what to create.
#[derive(Debug, Clone)]
pub struct AddCatalog {
    /// The CatalogSource's name.
    pub name: String,
    /// The index image.
    pub image: String,
    /// `spec.displayName`.
    pub display_name: String,
    /// `spec.publisher`.
    pub publisher: String,
    /// Return once created.
    pub no_wait: bool,
    /// Poll interval.
    pub interval: Duration,
}

/// `catalog add`: the CatalogSource created, then waited for until READY; one that does not
/// get there in time is deleted again (`catalog_add.go :: CatalogAdd.Run`, `cleanup`).
pub fn add_catalog(scope: &Scope, add: &AddCatalog, ui: &mut dyn Ui) -> u8 {
    let AddCatalog {
        name,
        image,
        display_name,
        publisher,
        no_wait,
        interval,
    } = add;
    let (name, image, no_wait, interval) = (name.as_str(), image.as_str(), *no_wait, *interval);
    let r = run(scope, async |cluster, c, ns| {
        let cs = olmctl::manage::catalog_source::catalog_source(
            name,
            &ns,
            image,
            display_name,
            publisher,
        );
        let what = api::CATALOG_SOURCE.describe(Some(&ns), name);
        if api::create(c, api::CATALOG_SOURCE, Some(&ns), &cs).await? == api::Created::Exists {
            return Err(format!(
                "create catalogsource: {what} already exists: remove it first (`olmctl catalog remove {name} -n {ns}`)"
            ));
        }
        if no_wait {
            ui.line(&format!("created catalogsource {name:?}"));
            return Ok(EXIT_OK);
        }
        loop {
            let live = api::get(c, api::CATALOG_SOURCE, Some(&ns), name).await?;
            if live
                .as_ref()
                .is_some_and(olmctl::manage::catalog_source::ready)
            {
                ui.line(&format!("created catalogsource {name:?}"));
                return Ok(EXIT_OK);
            }
            if !c.pause(interval).await {
                let state = live
                    .as_ref()
                    .and_then(|l| l.pointer("/status/connectionState/lastObservedState"))
                    .and_then(Value::as_str)
                    .unwrap_or("no connection state")
                    .to_string();
                // The cleanup gets a fresh deadline, as upstream's --cleanup-timeout.
                let cleanup = Calls::new(cluster, Duration::from_secs(60));
                let _ = api::delete(&cleanup, api::CATALOG_SOURCE, Some(&ns), name).await;
                ui.error(&format!(
                    "{}; {what} is {state}: it was deleted again (check the image {image} and the catalog's pod in namespace {ns})",
                    c.timed_out(&format!("{what} to be READY"), None)
                ));
                return Ok(EXIT_FINDINGS);
            }
        }
    });
    r.unwrap_or_else(|code| code)
}

/// `catalog remove`: the CatalogSource deleted, then waited for until gone
/// (`catalog_remove.go :: CatalogRemove.Run`, `waitForDeletion`).
pub fn remove_catalog(scope: &Scope, name: &str, interval: Duration, ui: &mut dyn Ui) -> u8 {
    let r = run(scope, async |_, c, ns| {
        let what = api::CATALOG_SOURCE.describe(Some(&ns), name);
        if !api::delete(c, api::CATALOG_SOURCE, Some(&ns), name).await? {
            return Err(format!(
                "failed to remove catalog {name:?}: delete catalogsource {name:?}: {what} not found (list them with `olmctl catalog list -n {ns}`)"
            ));
        }
        while api::get(c, api::CATALOG_SOURCE, Some(&ns), name)
            .await?
            .is_some()
        {
            if !c.pause(interval).await {
                ui.error(&c.timed_out(&format!("{what} to be deleted"), None));
                return Ok(EXIT_FINDINGS);
            }
        }
        ui.line(&format!("catalogsource {name:?} removed"));
        Ok(EXIT_OK)
    });
    r.unwrap_or_else(|code| code)
}

/// `upgrade`: what to do and how.
#[derive(Debug, Clone)]
pub struct UpgradeRequest {
    /// The Subscription (or its package).
    pub subscription: String,
    /// Move the Subscription to this channel first.
    pub channel: Option<String>,
    /// Return once the plan is approved (or the channel moved).
    pub no_wait: bool,
    /// Poll interval.
    pub interval: Duration,
}

/// `upgrade` ([`olmctl::manage::upgrade`]); returns the exit status.
pub fn upgrade(scope: &Scope, req: &UpgradeRequest, ui: &mut dyn Ui) -> u8 {
    run(scope, async |_, c, ns| run_upgrade(c, &ns, req, ui).await).unwrap_or_else(|code| code)
}

/// The upgrade, against a cluster (also for tests, in process).
pub async fn run_upgrade(
    c: &Calls,
    ns: &str,
    req: &UpgradeRequest,
    ui: &mut dyn Ui,
) -> Result<u8, String> {
    let subs = api::list(c, api::SUBSCRIPTION, Some(ns)).await?;
    let sub = upgrade::find(&subs, &req.subscription, ns).map_err(|e| e.to_string())?;
    let name = sub["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let package = sub["spec"]["name"].as_str().unwrap_or_default().to_string();
    let what = api::SUBSCRIPTION.describe(Some(ns), &name);
    if let Some(ch) = req
        .channel
        .as_deref()
        .filter(|ch| sub["spec"]["channel"].as_str() != Some(ch))
    {
        // The channel must be one of the package's, when package-server can tell.
        if let Ok(Some(pm)) = api::get(c, api::PACKAGE_MANIFEST, Some(ns), &package).await
            && let Err(e) = olmctl::manage::describe::describe(&pm, Some(ch))
        {
            return Err(e.to_string());
        }
        let before = sub["status"]["installPlanRef"]["name"].clone();
        api::merge(
            c,
            api::SUBSCRIPTION,
            Some(ns),
            &name,
            &json!({"spec": {"channel": ch}}),
        )
        .await?;
        ui.line(&format!("{what} moved to channel {ch}"));
        if req.no_wait {
            return Ok(EXIT_OK);
        }
        // OLM resolves the new channel: a new plan, or the Subscription at its channel's head.
        loop {
            let s = api::get(c, api::SUBSCRIPTION, Some(ns), &name)
                .await?
                .ok_or_else(|| format!("{what} is gone"))?;
            let installed = s["status"]["installedCSV"].as_str().unwrap_or_default();
            if s["status"]["installPlanRef"]["name"] != before
                && s["status"]["currentCSV"].as_str() != Some(installed)
            {
                break;
            }
            if !c.pause(req.interval).await {
                ui.error(&c.timed_out(
                    &format!("OLM to resolve an upgrade of {what} in channel {ch} (nothing newer than {installed} in it?)"),
                    None,
                ));
                return Ok(EXIT_FINDINGS);
            }
        }
    }
    let mut approved = false;
    let mut said = std::collections::BTreeSet::new();
    let mut first = true;
    loop {
        let sub = api::get(c, api::SUBSCRIPTION, Some(ns), &name)
            .await?
            .ok_or_else(|| format!("{what} is gone"))?;
        if first {
            upgrade::check(&sub).map_err(|e| e.to_string())?;
            first = false;
        }
        let plan_name = sub["status"]["installPlanRef"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let plan = match plan_name.as_str() {
            "" => None,
            p => api::get(c, api::INSTALL_PLAN, Some(ns), p).await?,
        };
        let policies = match api::list(c, api::UPGRADE_POLICY, Some(ns)).await {
            Ok(p) => p,
            // olmctl-operator's CRD is not installed: no policy applies.
            Err(e) if e.contains("does not serve this resource") => Vec::new(),
            Err(e) => return Err(e),
        };
        let gate = upgrade::gate(&sub, &policies);
        let mut line = |l: String, ui: &mut dyn Ui| {
            if said.insert(l.clone()) {
                ui.line(&l);
            }
        };
        match upgrade::next(&sub, plan.as_ref(), gate) {
            Next::Resolving => line(format!("waiting for OLM to resolve {what}"), ui),
            Next::Approve {
                plan,
                resource_version,
                csvs,
            } if !approved => {
                let patch = json!({"metadata": {"resourceVersion": resource_version},
                    "spec": {"approved": true}});
                if api::merge(c, api::INSTALL_PLAN, Some(ns), &plan, &patch)
                    .await?
                    .is_some()
                {
                    approved = true;
                    line(
                        format!(
                            "InstallPlan {plan} approved: it installs {}",
                            csvs.join(", ")
                        ),
                        ui,
                    );
                    if req.no_wait {
                        return Ok(EXIT_OK);
                    }
                }
                continue;
            }
            Next::Approve { .. } => {}
            Next::Gate { plan, gate } => {
                let by = gate.policies.join(", ");
                let reasons = if gate.reasons.is_empty() {
                    String::new()
                } else {
                    format!(": {}", gate.reasons.join("; "))
                };
                match gate.decision.as_deref() {
                    Some("Held") => {
                        ui.error(&format!(
                            "InstallPlan {ns}/{plan} is held by the upgrade gate (UpgradePolicy {by}){reasons}; it is not approved behind the policy: change the policy, or see `olmctl status -n {ns}`"
                        ));
                        return Ok(EXIT_FINDINGS);
                    }
                    Some("Waiting") => {
                        let next = gate
                            .next_check
                            .map(|n| format!("; it looks again at {n}"))
                            .unwrap_or_default();
                        ui.error(&format!(
                            "InstallPlan {ns}/{plan} waits for the upgrade gate (UpgradePolicy {by}){reasons}{next}; it is not approved behind the policy"
                        ));
                        return Ok(EXIT_FINDINGS);
                    }
                    _ => {
                        line(
                            format!(
                                "InstallPlan {plan} is left to the upgrade gate (UpgradePolicy {by})"
                            ),
                            ui,
                        );
                        if req.no_wait {
                            return Ok(EXIT_OK);
                        }
                    }
                }
            }
            Next::Installing { plan, phase } => {
                line(format!("InstallPlan {plan} is {phase}"), ui);
                if req.no_wait {
                    return Ok(EXIT_OK);
                }
            }
            Next::Done { csv, .. } => {
                ui.line(&format!(
                    "operator {package:?} upgraded; installed csv is {csv:?}"
                ));
                return Ok(EXIT_OK);
            }
            Next::Failed { plan, message } => {
                ui.error(&format!("InstallPlan {ns}/{plan} failed: {message}"));
                return Ok(EXIT_FINDINGS);
            }
        }
        if !c.pause(req.interval).await {
            ui.error(&c.timed_out(&format!("the upgrade of {what}"), None));
            return Ok(EXIT_FINDINGS);
        }
    }
}
