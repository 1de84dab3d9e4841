//! `olmctl uninstall` against a cluster: reads the package's Subscription, CSVs, the custom
//! resources of the CRDs they own and the CatalogSource, then deletes in the phases of
//! [`olmctl::install::uninstall`] (Subscription; with `--delete-crds` the custom resources
//! while the operator still runs; every CSV of the package; the CRDs; the CatalogSource),
//! waiting for each phase to be gone before the next. `--timeout` bounds the whole command:
//! every API call has a deadline within it ([`api::Calls`]).

use super::UninstallRequest;
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
use olmctl::install::uninstall::{Deletion, Found};
use serde_json::Value;

use super::api::{self, Calls, Cluster};
use super::ui::Ui;

/// Copied CSVs are copies of a CSV of another namespace, which is listed there.
const NOT_COPIED: &str = "!olm.copiedFrom";

fn gvkp(d: &Deletion) -> api::Dynamic<'_> {
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

/// An image reference read from the cluster, checked to be one: never a path on this machine
/// (which the pull would read as a directory) nor an `oci:` layout.
fn registry_image<'a>(what: &str, image: &'a str) -> Result<&'a str, String> {
    let shown = olmctl::text::esc(image);
    if image.is_empty() {
        return Err(format!("{what} has no image"));
    }
    if !olmctl::oci::deliver::is_image(image) || olmctl::oci::transport::parse(image).is_some() {
        return Err(format!("{what} {shown} is not a registry image reference"));
    }
    Ok(image)
}

/// The installed bundle's CRD manifests, read as OLM read them: the CatalogSource's image
/// pulled, the bundle of the installed CSV found in the package (`olm.bundle` of that name),
/// its image pulled (operator-lifecycle-manager's `resolver.NewStepsFromBundle` makes a step
/// of each of its objects).
fn bundle_crds(
    source: Option<&Value>,
    package: &str,
    csv: &str,
    timeout: std::time::Duration,
) -> Result<olmctl::install::uninstall::BundleCrds, String> {
    use olmctl::oci::deliver::Want;
    let source = source.ok_or("the Subscription's CatalogSource is not there")?;
    let name = format!(
        "CatalogSource {}/{}",
        s(source, "/metadata/namespace"),
        s(source, "/metadata/name")
    );
    if csv.is_empty() {
        return Err("the Subscription names no installed CSV".into());
    }
    let catalog = registry_image(&name, s(source, "/spec/image"))?;
    let (dir, _scratch) = crate::inputs::pulled_dir(catalog, Want::Catalog, timeout)?;
    let cfg = crate::inputs::catalog_cfg(&dir)?;
    let image = olmctl::install::uninstall::bundle_image(&cfg, package, csv).ok_or_else(|| {
        format!(
            "catalog {} has no bundle {} in package {}",
            olmctl::text::esc(catalog),
            olmctl::text::esc(csv),
            olmctl::text::esc(package)
        )
    })?;
    let image = registry_image(&format!("bundle {}", olmctl::text::esc(csv)), image)?;
    let (bdir, _bundle_scratch) = crate::inputs::pulled_dir(image, Want::Bundle, timeout)?;
    let bundle = olmctl::bundle::load::load_bundle(&bdir).map_err(|e| e.to_string())?;
    Ok(olmctl::install::uninstall::BundleCrds::of(
        &bundle,
        format!(
            "bundle {} (catalog {})",
            olmctl::text::esc(image),
            olmctl::text::esc(catalog)
        ),
    ))
}

/// Runs the uninstall; returns the exit status.
///
/// A call the API server does not answer in time is an error (exit 2), as any API error,
/// except a read of the wait for a phase to go that the end of `--timeout` cuts short: that is
/// the wait's timeout (exit 1), with the read that got no answer.
pub async fn run(cluster: &Cluster, req: &UninstallRequest, ui: &mut dyn Ui) -> Result<u8, String> {
    let mut c = Calls::new(cluster, req.waiting.timeout);
    let u = &req.uninstall;
    let ns = u.namespace.as_str();
    let sub_name = u.subscription_name();
    let Some(sub) = api::get(&c, api::SUBSCRIPTION, Some(ns), sub_name).await? else {
        return Err(format!(
            "Subscription {ns}/{sub_name} not found (pass --subscription NAME when it is not named after the package)"
        ));
    };
    let csvs = api::list(&c, api::CSV, Some(ns)).await?;
    let mut found = Found {
        subscription: Some(sub.clone()),
        csvs,
        ..Found::default()
    };
    found.catalog_source = match (
        sub.pointer("/spec/source").and_then(Value::as_str),
        sub.pointer("/spec/sourceNamespace").and_then(Value::as_str),
    ) {
        // Read without --delete-catalog-source too: one `install --bundle` made goes anyway.
        (Some(src), Some(sns)) => api::get(&c, api::CATALOG_SOURCE, Some(sns), src).await?,
        _ => None,
    };
    // Which CRDs are the package's own: with --delete-crds, those its bundle shipped (the
    // namespace's InstallPlans, else the bundle read from the catalog) that no other CSV of
    // the cluster owns or requires.
    let crds = if u.delete_crds {
        found.install_plans = api::list(&c, api::INSTALL_PLAN, Some(ns)).await?;
        found.cluster_csvs = api::list_selected(&c, api::CSV, None, Some(NOT_COPIED)).await?;
        if u.needs_bundle(&found) {
            let csv = olmctl::install::uninstall::Uninstall::csv_name(&sub).unwrap_or_default();
            let timeout = c.remaining();
            let source = found.catalog_source.clone();
            // The pull runs its own runtime: on a thread of its own, not inside this one.
            let read = std::thread::scope(|t| {
                t.spawn(|| bundle_crds(source.as_ref(), &u.package, &csv, timeout))
                    .join()
                    .unwrap_or_else(|_| Err("reading the catalog failed".to_string()))
            });
            match read {
                Ok(b) => found.bundle_crds = Some(b),
                Err(e) => ui.line(&format!(
                    "note: no InstallPlan of {ns} is left to say which CRDs the package's bundle shipped, and its bundle was not read from the catalog: {e}"
                )),
            }
        }
        let owned = olmctl::install::uninstall::Uninstall::owned_crds(
            &u.package_csvs(Some(&sub), &found.csvs),
        );
        for name in owned
            .iter()
            .filter(|n| olmctl::names::problems(olmctl::names::Rule::Subdomain, n).is_empty())
        {
            if let Some(crd) = api::get(&c, api::CRD, None, name).await? {
                found.crds.push(crd);
            }
        }
        u.deletable_crds(&found).0
    } else {
        olmctl::install::uninstall::Uninstall::owned_crds(&u.package_csvs(Some(&sub), &found.csvs))
            .into_iter()
            .filter(|n| olmctl::names::problems(olmctl::names::Rule::Subdomain, n).is_empty())
            .collect()
    };
    for name in &crds {
        let read = match found.crds.iter().find(|c| s(c, "/metadata/name") == name) {
            Some(crd) => Some(crd.clone()),
            None => api::get(&c, api::CRD, None, name).await?,
        };
        let Some(crd) = read else {
            continue;
        };
        let Some(version) = storage_version(&crd) else {
            continue;
        };
        let items = api::list_all(
            &c,
            (
                s(&crd, "/spec/group"),
                &version,
                s(&crd, "/spec/names/kind"),
                s(&crd, "/spec/names/plural"),
            ),
        )
        .await?;
        found.custom_resources.push((crd, items));
    }
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
        let asked = tokio::time::Instant::now();
        let answer = ui.confirm(&q);
        // The time the answer took is not the command's.
        c.extend(asked.elapsed());
        match answer {
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
    for phase in &phases {
        for d in phase {
            let gone = !api::delete_dynamic(&c, gvkp(d), d.namespace.as_deref(), &d.name).await?;
            let verb = if gone { "was already gone" } else { "deleted" };
            ui.line(&format!("{} {verb}", d.describe()));
        }
        if req.waiting.no_wait {
            continue;
        }
        // Each phase is gone before the next starts (finalizers may keep objects a while:
        // a custom resource's, a CRD waiting for its custom resources).
        for d in phase {
            let waiting_for = format!("{} to go", d.describe());
            loop {
                match api::get_dynamic(&c, gvkp(d), d.namespace.as_deref(), &d.name).await {
                    Ok(None) => break,
                    Ok(Some(_)) => {}
                    Err(e) if c.expired() => {
                        ui.error(&c.timed_out(&waiting_for, Some(&e)));
                        return Ok(EXIT_FINDINGS);
                    }
                    Err(e) => return Err(e),
                }
                if !c.pause(req.waiting.interval).await {
                    ui.error(&c.timed_out(&waiting_for, None));
                    return Ok(EXIT_FINDINGS);
                }
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
