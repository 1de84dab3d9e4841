//! `olmctl install` against a cluster: creates what OLM needs (the manifests of
//! [`olmctl::install::Install`]), then follows OLM as it moves ([`olmctl::install::progress`]):
//! CatalogSource READY, Subscription resolved, InstallPlan (approved here when it waits for
//! approval and the user agrees or passed `--yes`), CSV `Succeeded`. OLM's own reason stops it
//! (ResolutionFailed, InstallPlan or CSV Failed); so does `--timeout`, which bounds the whole
//! command: every API call has a deadline within it ([`api::Calls`]).

use std::collections::HashSet;

use super::InstallRequest;
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
use olmctl::install::progress::{Outcome, Snapshot, assess};
use serde_json::{Value, json};

use super::api::{self, Calls, Cluster, Created, Res};
use super::ui::Ui;

/// Consecutive failed reads tolerated while waiting (a restarting API server, a dropped
/// connection) before giving up.
const READ_RETRIES: u32 = 3;

/// Runs the install; returns the exit status (errors are written as `error:` lines by the
/// caller from `Err`).
///
/// A call the API server does not answer in time is an error (exit 2) before the wait for OLM,
/// as any API error; while waiting, a read is retried ([`READ_RETRIES`]) and the end of
/// `--timeout` is the wait's timeout (exit 1), with the read that got no answer.
pub async fn run(cluster: &Cluster, req: &InstallRequest, ui: &mut dyn Ui) -> Result<u8, String> {
    let mut c = Calls::new(cluster, req.waiting.timeout);
    let i = &req.install;
    let ns = i.namespace.as_str();
    let (source, source_ns) = i.source();

    // What the namespace has already.
    let ns_exists = api::get(&c, api::NAMESPACE, None, ns).await?.is_some();
    if !ns_exists && !i.create_namespace {
        return Err(format!(
            "namespace {ns} not found: create it, or pass --create-namespace"
        ));
    }
    let mut skip_operator_group = false;
    if i.operator_group && ns_exists {
        let groups = api::list(&c, api::OPERATOR_GROUP, Some(ns)).await?;
        let ours = groups.iter().any(|g| g["metadata"]["name"] == ns);
        match groups.len() {
            0 => {}
            1 if ours => {}
            1 => {
                skip_operator_group = true;
                ui.line(&format!(
                    "OperatorGroup {ns}/{} manages namespace {ns}: none created",
                    groups[0]["metadata"]["name"].as_str().unwrap_or_default()
                ));
            }
            n => {
                return Err(format!(
                    "namespace {ns} has {n} OperatorGroups; OLM resolves nothing there (\"expected 1 OperatorGroup in the namespace, found {n}\"): delete all but one"
                ));
            }
        }
    }
    if let olmctl::install::Catalog::Source(name) = &i.catalog
        && api::get(&c, api::CATALOG_SOURCE, Some(&source_ns), name)
            .await?
            .is_none()
    {
        return Err(format!(
            "CatalogSource {source_ns}/{name} not found: pass --catalog IMAGE to create one, or --catalog-namespace"
        ));
    }

    // Apply.
    for m in i.manifests() {
        let Some(r) = Res::of(&m) else { continue };
        if skip_operator_group && r.kind == "OperatorGroup" {
            continue;
        }
        let name = m["metadata"]["name"].as_str().unwrap_or_default();
        let mns = m["metadata"]["namespace"].as_str();
        let what = r.describe(mns, name);
        let verb = match api::create(&c, r, mns, &m).await? {
            Created::Created => "created",
            Created::Exists => apply_existing(&c, r, mns, name, &m).await?,
        };
        ui.line(&format!("{what} {verb}"));
    }
    if req.waiting.no_wait {
        return Ok(EXIT_OK);
    }

    // Follow OLM.
    let catalog = format!("{source_ns}/{source}");
    let sub_name = i.package.as_str();
    let pinned = i.pinned();
    let mut printed: HashSet<String> = HashSet::new();
    let mut waiting_for = format!("OLM to install {} in namespace {ns}", i.package);
    let mut gate_noted = false;
    let mut failures = 0;
    loop {
        let snap = match snapshot(&c, &source_ns, &source, ns, sub_name, pinned.as_deref()).await {
            Ok(s) => {
                failures = 0;
                s
            }
            Err(e) if c.expired() => {
                ui.error(&c.timed_out(&waiting_for, Some(&e)));
                return Ok(EXIT_FINDINGS);
            }
            Err(e) if failures < READ_RETRIES => {
                failures += 1;
                ui.line(&format!("retrying after a failed read: {e}"));
                if !c.pause(req.waiting.interval).await {
                    ui.error(&c.timed_out(&waiting_for, Some(&e)));
                    return Ok(EXIT_FINDINGS);
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        let a = assess(&snap, &catalog, pinned.as_deref());
        for l in &a.lines {
            if printed.insert(l.clone()) {
                ui.line(l);
            }
        }
        match a.outcome {
            Outcome::Done { csv } => {
                ui.line(&format!("installed {csv} in namespace {ns}"));
                if pinned.is_some() {
                    ui.line(&format!(
                        "pinned to {csv}: the Subscription's approval is Manual, so OLM installs no newer version until its InstallPlan is approved"
                    ));
                }
                return Ok(EXIT_OK);
            }
            Outcome::Failed { reason, message } => {
                ui.error(&format!("{reason}: {message}"));
                return Ok(EXIT_FINDINGS);
            }
            Outcome::Wait(w) => waiting_for = w,
            Outcome::Approve {
                plan,
                resource_version,
                csvs,
            } => {
                if i.gate.is_some() {
                    if !gate_noted {
                        ui.line(&format!(
                            "InstallPlan {plan} is left to olmctl-operator's UpgradePolicy in {ns}"
                        ));
                        gate_noted = true;
                    }
                    waiting_for = format!("olmctl-operator to approve InstallPlan {plan}");
                } else {
                    let asked = tokio::time::Instant::now();
                    let yes = req.waiting.yes
                        || match ui.confirm(&format!(
                            "Approve InstallPlan {ns}/{plan}, which installs {}?",
                            csvs.join(", ")
                        )) {
                            Some(answer) => {
                                // The time the answer took is not the command's.
                                c.extend(asked.elapsed());
                                answer
                            }
                            None => {
                                ui.error(&format!(
                                    "InstallPlan {ns}/{plan} requires approval and there is no terminal to ask: pass --yes, or approve it with `kubectl patch installplan {plan} -n {ns} --type merge -p '{{\"spec\":{{\"approved\":true}}}}'`"
                                ));
                                return Ok(EXIT_USAGE);
                            }
                        };
                    if !yes {
                        ui.line(&format!(
                            "InstallPlan {ns}/{plan} not approved: it stays RequiresApproval"
                        ));
                        return Ok(EXIT_FINDINGS);
                    }
                    // Approve exactly the plan read (its resourceVersion as precondition); a
                    // conflict means it changed: read again and decide again.
                    let patch = json!({"metadata": {"resourceVersion": resource_version},
                        "spec": {"approved": true}});
                    if api::merge(&c, api::INSTALL_PLAN, Some(ns), &plan, &patch)
                        .await?
                        .is_some()
                    {
                        let l = format!("InstallPlan {plan} approved");
                        ui.line(&l);
                        printed.insert(l);
                    }
                    continue;
                }
            }
        }
        if !c.pause(req.waiting.interval).await {
            ui.error(&c.timed_out(&waiting_for, None));
            return Ok(EXIT_FINDINGS);
        }
    }
}

/// An object that exists: unchanged when its spec and annotations are ours, else they are merged
/// with ours.
/// A role's `rules` and a binding's `subjects` (they have no spec) are replaced by ours.
pub(super) async fn apply_existing(
    c: &Calls,
    r: Res,
    ns: Option<&str>,
    name: &str,
    desired: &Value,
) -> Result<&'static str, String> {
    let Some(live) = api::get(c, r, ns, name).await? else {
        return Ok("gone while applying");
    };
    for key in ["rules", "subjects"] {
        if let Some(want) = desired.get(key) {
            if live.get(key) == Some(want) {
                return Ok("unchanged");
            }
            api::merge(c, r, ns, name, &json!({ key: want })).await?;
            return Ok("configured");
        }
    }
    // Our annotations (the bundles `install --bundle` records) are merged as the spec is.
    let annotations = desired
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .filter(|want| {
            want.iter().any(|(k, v)| {
                live.pointer("/metadata/annotations").and_then(|a| a.get(k)) != Some(v)
            })
        });
    let mut patch = json!({});
    if let Some(a) = annotations {
        patch["metadata"] = json!({ "annotations": a });
    }
    if let Some(spec) = desired.get("spec") {
        let mut merged = live.clone();
        json_patch::merge(&mut merged["spec"], spec);
        if merged.get("spec") != live.get("spec") {
            patch["spec"] = spec.clone();
        }
    }
    if patch.as_object().is_none_or(|p| p.is_empty()) {
        return Ok("unchanged");
    }
    api::merge(c, r, ns, name, &patch).await?;
    Ok("configured")
}

/// Reads what OLM has written: the CatalogSource, the Subscription, its current InstallPlan,
/// and the CSV to wait for (the pinned one, else the Subscription's current one).
async fn snapshot(
    c: &Calls,
    source_ns: &str,
    source: &str,
    ns: &str,
    sub_name: &str,
    pinned: Option<&str>,
) -> Result<Snapshot, String> {
    let catalog_source = api::get(c, api::CATALOG_SOURCE, Some(source_ns), source).await?;
    let subscription = api::get(c, api::SUBSCRIPTION, Some(ns), sub_name).await?;
    let field = |p: &str| {
        subscription
            .as_ref()
            .and_then(|s| s.pointer(p))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
    };
    let install_plan = match field("/status/installPlanRef/name") {
        Some(p) => api::get(c, api::INSTALL_PLAN, Some(ns), &p).await?,
        None => None,
    };
    let csv = match pinned
        .map(str::to_string)
        .or_else(|| field("/status/currentCSV"))
    {
        Some(name) => api::get(c, api::CSV, Some(ns), &name).await?,
        None => None,
    };
    Ok(Snapshot {
        catalog_source,
        subscription,
        install_plan,
        csv,
    })
}
