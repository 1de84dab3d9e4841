//! OLM's catalog operator: CatalogSource health, the namespace sync that resolves
//! Subscriptions into InstallPlans, and the execution of approved plans.
//!
//! Namespace sync (`catalog/operator.go :: syncResolvingNamespace`):
//! 1. exactly one OperatorGroup, else `ResolutionFailed`/`ErrorPreventedResolution`
//!    (`expected 1 OperatorGroup in the namespace, found N`), retried (R5.6);
//! 2. state corrections first, and no resolution in a pass that made one (R5.4): a
//!    Subscription whose `currentCSV` exists becomes `AtLatestKnown` with `installedCSV`; one
//!    whose pending plan was deleted is reset;
//! 3. nothing to resolve while every Subscription has a plan and is `UpgradePending` (R5.4);
//! 4. resolution: `startingCSV` only while nothing is installed, else the channel's successor
//!    of the installed CSV (R5.5); `ConstraintsNotSatisfiable` when nothing fits;
//! 5. unpacking (failures injectable: `BundleUnpackFailed`, retried, R5.6, R5.7), the bundle
//!    written to a ConfigMap in the CatalogSource's namespace as OLM's extractor writes it
//!    (name: the first 63 hex characters of sha256 of the image; `binaryData` gzip+base64;
//!    operator.md §3.5);
//! 6. one plan per generation (R5.2): created with `generateName: install-`, its spec only,
//!    every Subscription of the namespace as owner (R5.1), Manual when any Subscription is;
//!    then its status (steps: the CSV, the bundle's files in name order, the RBAC generated
//!    from the CSV, each a reference to the ConfigMap); then the Subscriptions (R5.3).
//!
//! Plan execution (`catalog/operator.go :: syncInstallPlans, ExecutePlan`): an approved
//! `RequiresApproval` plan goes `Installing`; each step is applied in order (CSV with its
//! rewrites, CRDs with OLM's checks A and B, the bundle's objects with the CSV's uid filled
//! into owner references, the RBAC); an error is retried until the retry timeout, then the
//! plan is `Failed`; done, it is `Complete`.

use std::io::Write;

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{OLM, OlmInner, now};
use crate::olm::catalog::Bundle;

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

/// The ConfigMap name of an unpacked bundle.
pub fn bundle_config_map(image: &str) -> String {
    let h = Sha256::digest(image.as_bytes());
    let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
    hex[..63].to_string()
}

/// A file as a `binaryData` value of an unpacked-bundle ConfigMap, as the API shows it: the
/// extractor stores base64 of the gzipped file as the bytes, and JSON shows bytes as base64
/// again (operator.md §3.5: a client decodes base64 twice, then gunzips).
fn gzip_b64(text: &str) -> String {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = e.write_all(text.as_bytes());
    let bytes = e.finish().unwrap_or_default();
    let b64 = base64::engine::general_purpose::STANDARD;
    b64.encode(b64.encode(bytes))
}

fn set_condition(conds: &Value, ty: &str, status: &str, reason: &str, message: &str) -> Value {
    let mut out: Vec<Value> = conds
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["type"] != ty)
        .collect();
    out.push(
        json!({"type": ty, "status": status, "reason": reason, "message": message,
                    "lastTransitionTime": now()}),
    );
    json!(out)
}

fn without(conds: &Value, types: &[&str]) -> Value {
    json!(
        conds
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|c| !types.iter().any(|t| c["type"] == *t))
            .collect::<Vec<_>>()
    )
}

impl OlmInner {
    /// CatalogSources served by a registered catalog are READY (`grpc` registry pods are not
    /// modelled: the double answers for them).
    pub(super) fn sync_catalog_sources(&self) {
        for cs in self.api.list(OLM, "catalogsources") {
            let image = s(&cs, "/spec/image");
            let known = self.catalog_of_image(image).is_some();
            let want = if known { "READY" } else { "TRANSIENT_FAILURE" };
            if s(&cs, "/status/connectionState/lastObservedState") != want {
                let name = s(&cs, "/metadata/name");
                let ns = s(&cs, "/metadata/namespace");
                let svc = name.replace('.', "-");
                self.api.merge(
                    OLM,
                    "catalogsources",
                    ns,
                    name,
                    &json!({"status": {
                        "connectionState": {"address": format!("{svc}.{ns}.svc:50051"),
                            "lastObservedState": want, "lastConnect": now()},
                        "registryService": {"protocol": "grpc", "serviceName": svc,
                            "serviceNamespace": ns, "port": "50051", "createdAt": now()}}}),
                    true,
                );
                self.step(format!("CatalogSource {ns}/{name} {want}"));
            }
        }
    }

    fn sub_status(&self, sub: &Value, patch: Value) {
        self.api.merge(
            OLM,
            "subscriptions",
            s(sub, "/metadata/namespace"),
            s(sub, "/metadata/name"),
            &json!({"status": patch}),
            true,
        );
    }

    /// One namespace sync.
    pub(super) async fn sync_namespace(&self, ns: &str) {
        let subs: Vec<Value> = self
            .api
            .list_in(OLM, "subscriptions", ns)
            .into_iter()
            .collect();
        if subs.is_empty() {
            return;
        }
        // The OperatorGroup's status: the namespaces it targets.
        let groups: Vec<Value> = self
            .api
            .list_in(OLM, "operatorgroups", ns)
            .into_iter()
            .collect();
        for g in &groups {
            if g["status"]["namespaces"].is_null() {
                let targets = match g["spec"]["targetNamespaces"].as_array() {
                    Some(t) if !t.is_empty() => json!(t),
                    _ => json!([""]),
                };
                self.api.merge(
                    OLM,
                    "operatorgroups",
                    ns,
                    s(g, "/metadata/name"),
                    &json!({"status": {"namespaces": targets, "lastUpdated": now()}}),
                    true,
                );
            }
        }
        let injected = {
            let mut k = self.knobs.lock().expect("knobs");
            if k.resolution_errors > 0 {
                k.resolution_errors -= 1;
                true
            } else {
                false
            }
        };
        if injected || groups.len() != 1 {
            let message = if injected {
                "error using catalogsource olm/catalog: failed to list bundles: rpc error: code = Unavailable".to_string()
            } else {
                format!(
                    "expected 1 OperatorGroup in the namespace, found {}",
                    groups.len()
                )
            };
            for sub in &subs {
                let c = set_condition(
                    &sub["status"]["conditions"],
                    "ResolutionFailed",
                    "True",
                    "ErrorPreventedResolution",
                    &message,
                );
                if c != sub["status"]["conditions"] {
                    self.sub_status(sub, json!({"conditions": c, "lastUpdated": now()}));
                }
            }
            self.step(format!("{ns}: ResolutionFailed (ErrorPreventedResolution)"));
            return;
        }
        // State corrections (no resolution in a pass that changed a Subscription).
        let mut changed = false;
        for sub in &subs {
            let current = s(sub, "/status/currentCSV");
            let plan_ref = s(sub, "/status/installPlanRef/name");
            let state = s(sub, "/status/state");
            if !current.is_empty()
                && self
                    .api
                    .get(OLM, "clusterserviceversions", ns, current)
                    .is_some()
            {
                if state != "AtLatestKnown" || s(sub, "/status/installedCSV") != current {
                    self.sub_status(
                        sub,
                        json!({"state": "AtLatestKnown", "installedCSV": current, "lastUpdated": now()}),
                    );
                    self.step(format!(
                        "Subscription {ns}/{} AtLatestKnown {current}",
                        s(sub, "/metadata/name")
                    ));
                    changed = true;
                }
            } else if !plan_ref.is_empty()
                && state == "UpgradePending"
                && self.api.get(OLM, "installplans", ns, plan_ref).is_none()
            {
                self.sub_status(
                    sub,
                    json!({"state": "", "installPlanRef": null, "installplan": null,
                           "currentCSV": null, "installPlanGeneration": null, "lastUpdated": now()}),
                );
                changed = true;
            }
        }
        if changed {
            return;
        }
        if subs.iter().all(|x| {
            !s(x, "/status/installPlanRef/name").is_empty()
                && s(x, "/status/state") == "UpgradePending"
        }) {
            return;
        }
        // Resolution.
        let mut changes: Vec<(Value, Bundle, String)> = Vec::new();
        for sub in &subs {
            let name = s(sub, "/metadata/name");
            let pkg = s(sub, "/spec/name");
            let source = s(sub, "/spec/source");
            let source_ns = s(sub, "/spec/sourceNamespace");
            let Some(cs) = self.api.get(OLM, "catalogsources", source_ns, source) else {
                continue;
            };
            let Some(catalog) = self.catalog_of_image(s(&cs, "/spec/image")) else {
                continue;
            };
            let channel = match s(sub, "/spec/channel") {
                "" => catalog.default_channel(pkg).unwrap_or_default(),
                c => c.to_string(),
            };
            let installed = s(sub, "/status/installedCSV");
            let (target, failure) = if installed.is_empty() {
                match s(sub, "/spec/startingCSV") {
                    "" => (
                        catalog.head(pkg, &channel),
                        format!(
                            "no operators found in channel {channel} of package {pkg} in the catalog referenced by subscription {name}"
                        ),
                    ),
                    start => (
                        catalog
                            .channel(pkg, &channel)
                            .into_iter()
                            .find(|b| b.name == start),
                        format!(
                            "no operators found with name {start} in channel {channel} of package {pkg} in the catalog referenced by subscription {name}"
                        ),
                    ),
                }
            } else {
                let version = self
                    .api
                    .get(OLM, "clusterserviceversions", ns, installed)
                    .and_then(|c| {
                        c["spec"]["version"]
                            .as_str()
                            .and_then(|v| semver::Version::parse(v).ok())
                    });
                (
                    catalog.successor(pkg, &channel, installed, version.as_ref()),
                    String::new(),
                )
            };
            let Some(target) = target else {
                if installed.is_empty() {
                    let c = set_condition(
                        &sub["status"]["conditions"],
                        "ResolutionFailed",
                        "True",
                        "ConstraintsNotSatisfiable",
                        &failure,
                    );
                    if c != sub["status"]["conditions"] {
                        self.sub_status(sub, json!({"conditions": c, "lastUpdated": now()}));
                    }
                }
                continue;
            };
            if target.name == s(sub, "/status/currentCSV") {
                continue;
            }
            changes.push((sub.clone(), target, format!("{source_ns}/{source}")));
        }
        if changes.is_empty() {
            return;
        }
        // Unpacking.
        let unpack_fails = {
            let mut k = self.knobs.lock().expect("knobs");
            if k.unpack_failures > 0 {
                k.unpack_failures -= 1;
                true
            } else {
                false
            }
        };
        if unpack_fails {
            for (sub, _, _) in &changes {
                let c = set_condition(
                    &sub["status"]["conditions"],
                    "BundleUnpackFailed",
                    "True",
                    "BundleUnpackFailed",
                    "Bundle unpacking failed - DeadlineExceeded: Job was active longer than specified deadline. Auto-retry in ~5 min after job cleanup (TTL)",
                );
                self.sub_status(sub, json!({"conditions": c, "lastUpdated": now()}));
            }
            self.step(format!("{ns}: BundleUnpackFailed"));
            return;
        }
        let generation = 1 + subs
            .iter()
            .filter_map(|x| x["status"]["installPlanGeneration"].as_i64())
            .chain(
                self.api
                    .list_in(OLM, "installplans", ns)
                    .iter()
                    .filter_map(|p| p["spec"]["generation"].as_i64()),
            )
            .max()
            .unwrap_or(0);
        let manual = subs
            .iter()
            .any(|x| s(x, "/spec/installPlanApproval") == "Manual");
        // Steps, bundle after bundle: the CSV, the files by name, the RBAC from the CSV.
        let mut steps = Vec::new();
        let mut lookups = Vec::new();
        let mut csv_names = Vec::new();
        let mut sources = Vec::new();
        for (sub, b, source) in &changes {
            let (cs_ns, cs_name) = source.split_once('/').unwrap_or_default();
            let cm = bundle_config_map(&b.image);
            let mut data = serde_json::Map::new();
            for (file, obj) in &b.files {
                let key: String = file
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                            c
                        } else {
                            '-'
                        }
                    })
                    .collect();
                let text = serde_json::to_string(obj).unwrap_or_default();
                let entry = data.entry(key).or_insert(json!(""));
                let prev = entry.as_str().unwrap_or_default().to_string();
                // Several documents of one file: one object per line (a YAML stream of JSON).
                let merged = if prev.is_empty() {
                    text
                } else {
                    format!("{prev}\n---\n{text}")
                };
                *entry = json!(merged);
            }
            let binary: serde_json::Map<String, Value> = data
                .into_iter()
                .map(|(k, v)| (k, json!(gzip_b64(v.as_str().unwrap_or_default()))))
                .collect();
            let mut annotations: serde_json::Map<String, Value> = b
                .annotations
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            annotations.insert("olm.sourceImage".into(), json!(b.image));
            annotations.insert("olm.contentEncoding".into(), json!("gzip+base64"));
            let cs_obj = self
                .api
                .get(OLM, "catalogsources", cs_ns, cs_name)
                .unwrap_or_default();
            self.api.insert(
                "configmaps",
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": cm, "namespace": cs_ns, "labels": {"olm.managed": "true"},
                        "annotations": annotations,
                        "ownerReferences": [{"apiVersion": "operators.coreos.com/v1alpha1",
                            "kind": "CatalogSource", "name": cs_name, "uid": cs_obj["metadata"]["uid"],
                            "controller": false, "blockOwnerDeletion": false}]},
                    "binaryData": binary}),
            );
            let replaces = s(sub, "/status/installedCSV");
            let properties = json!({"properties": [{"type": "olm.package",
                "value": {"packageName": b.package, "version": b.version.to_string()}}]})
            .to_string();
            let reference = json!({"kind": "ConfigMap", "name": cm, "namespace": cs_ns,
                "catalogSourceName": cs_name, "catalogSourceNamespace": cs_ns,
                "replaces": replaces, "properties": properties})
            .to_string();
            let step = |kind: &str, group: &str, version: &str, name: &str| {
                json!({"resolving": b.name, "status": "Unknown", "resource": {
                    "sourceName": cs_name, "sourceNamespace": cs_ns, "group": group,
                    "version": version, "kind": kind, "name": name, "manifest": reference}})
            };
            steps.push(step("ClusterServiceVersion", OLM, "v1alpha1", &b.name));
            for (_, o) in &b.files {
                let kind = s(o, "/kind");
                if kind == "ClusterServiceVersion" {
                    continue;
                }
                let (g, v) = s(o, "/apiVersion")
                    .rsplit_once('/')
                    .unwrap_or(("", s(o, "/apiVersion")));
                steps.push(step(kind, g, v, s(o, "/metadata/name")));
            }
            let mut csv = b.csv().clone();
            csv["metadata"]["namespace"] = json!(ns);
            for o in crate::olm::rbac::for_csv(&csv, ns) {
                let (g, v) = s(&o, "/apiVersion")
                    .rsplit_once('/')
                    .unwrap_or(("", s(&o, "/apiVersion")));
                steps.push(step(s(&o, "/kind"), g, v, s(&o, "/metadata/name")));
            }
            lookups.push(json!({"path": b.image, "identifier": b.name, "replaces": replaces,
                "catalogSourceRef": {"name": cs_name, "namespace": cs_ns}, "properties": properties}));
            csv_names.push(b.name.clone());
            if !sources.contains(&cs_name.to_string()) {
                sources.push(cs_name.to_string());
            }
        }
        // One plan per generation (`ensureInstallPlan`).
        let existing = self
            .api
            .list_in(OLM, "installplans", ns)
            .into_iter()
            .find(|p| p["spec"]["generation"] == generation);
        let plan = match existing {
            Some(p) => p,
            None => {
                let owners: Vec<Value> = subs
                    .iter()
                    .map(|x| json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                        "name": x["metadata"]["name"], "uid": x["metadata"]["uid"],
                        "controller": false, "blockOwnerDeletion": false}))
                    .collect();
                let body = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                    "metadata": {"generateName": "install-", "namespace": ns, "ownerReferences": owners},
                    "spec": {"clusterServiceVersionNames": csv_names, "approval": if manual {"Manual"} else {"Automatic"},
                             "approved": !manual, "generation": generation}});
                match self
                    .create(OLM, "v1alpha1", "installplans", ns, &body)
                    .await
                {
                    Ok(p) => p,
                    Err(e) => {
                        self.step(format!("{ns}: creating the InstallPlan failed: {e}"));
                        return;
                    }
                }
            }
        };
        let plan_name = s(&plan, "/metadata/name").to_string();
        self.step(format!(
            "InstallPlan {ns}/{plan_name} created (generation {generation}, {}) for {}",
            if manual { "Manual" } else { "Automatic" },
            csv_names.join(", ")
        ));
        if self.api.merge(
            OLM,
            "installplans",
            ns,
            &plan_name,
            &json!({"status": {"phase": if manual {"RequiresApproval"} else {"Installing"},
                "catalogSources": sources, "plan": steps, "bundleLookups": lookups,
                "startTime": if manual { Value::Null } else { json!(now()) }}}),
            true,
        ) {
            self.step(format!("InstallPlan {ns}/{plan_name} status written"));
        }
        let plan = self
            .api
            .get(OLM, "installplans", ns, &plan_name)
            .unwrap_or_default();
        // The Subscriptions: those resolved point at the plan; all lose the conditions.
        for sub in &subs {
            let name = s(sub, "/metadata/name");
            let change = changes
                .iter()
                .find(|(x, _, _)| s(x, "/metadata/name") == name);
            let conds = without(
                &sub["status"]["conditions"],
                &["ResolutionFailed", "BundleUnpacking", "BundleUnpackFailed"],
            );
            let patch = match change {
                Some((_, b, _)) => json!({
                    "state": "UpgradePending", "currentCSV": b.name, "lastUpdated": now(),
                    "installPlanGeneration": generation,
                    "installPlanRef": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                        "name": plan_name, "namespace": ns, "uid": plan["metadata"]["uid"],
                        "resourceVersion": plan["metadata"]["resourceVersion"]},
                    "installplan": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                        "name": plan_name, "uuid": plan["metadata"]["uid"]},
                    "conditions": set_condition(&conds, "InstallPlanPending", "True",
                        if manual {"RequiresApproval"} else {"Installing"}, "")}),
                None => json!({"conditions": conds}),
            };
            self.sub_status(sub, patch);
        }
        self.step(format!(
            "{ns}: Subscriptions point at InstallPlan {plan_name}"
        ));
    }

    /// One InstallPlan's sync.
    pub(super) async fn sync_plan(&self, plan: &Value) {
        let ns = s(plan, "/metadata/namespace");
        let name = s(plan, "/metadata/name");
        let approved = plan["spec"]["approved"] == true;
        match s(plan, "/status/phase") {
            "RequiresApproval"
                if approved
                    && self.api.merge(
                        OLM,
                        "installplans",
                        ns,
                        name,
                        &json!({"status": {"phase": "Installing", "startTime": now(), "message": null}}),
                        true,
                    ) =>
            {
                self.step(format!("InstallPlan {ns}/{name} Installing"));
            }
            "Installing" => self.execute(plan).await,
            _ => {}
        }
    }

    /// The objects of the unpacked bundle a step references.
    fn unpacked(&self, reference: &Value) -> Result<Vec<Value>, String> {
        let cm = self
            .api
            .get(
                "",
                "configmaps",
                s(reference, "/namespace"),
                s(reference, "/name"),
            )
            .ok_or_else(|| {
                format!("error finding unpacked bundle configmap for ref {reference}")
            })?;
        let mut out = Vec::new();
        let mut keys: Vec<&String> = cm["binaryData"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        keys.sort();
        for k in keys {
            let b64 = cm["binaryData"][k].as_str().unwrap_or_default();
            let engine = base64::engine::general_purpose::STANDARD;
            let inner = engine.decode(b64).map_err(|e| e.to_string())?;
            let gz = engine.decode(inner).map_err(|e| e.to_string())?;
            let mut text = String::new();
            use std::io::Read;
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_string(&mut text)
                .map_err(|e| e.to_string())?;
            out.extend(crate::fixtures::yaml_objects(&text));
        }
        Ok(out)
    }

    async fn execute(&self, plan: &Value) {
        let ns = s(plan, "/metadata/namespace").to_string();
        let name = s(plan, "/metadata/name").to_string();
        let mut steps = plan["status"]["plan"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut error = None;
        for step in steps.iter_mut() {
            if matches!(s(step, "/status"), "Created" | "Present") {
                continue;
            }
            match self.apply_step(&ns, step).await {
                Ok(st) => step["status"] = json!(st),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        match error {
            None => {
                if self.api.merge(
                    OLM,
                    "installplans",
                    &ns,
                    &name,
                    &json!({"status": {"plan": steps, "phase": "Complete", "message": null,
                        "conditions": [{"type": "Installed", "status": "True", "lastUpdateTime": now(),
                            "lastTransitionTime": now()}]}}),
                    true,
                ) {
                    self.step(format!("InstallPlan {ns}/{name} Complete"));
                }
            }
            Some(e) => {
                let started = plan["status"]["startTime"]
                    .as_str()
                    .and_then(|t| t.parse::<jiff::Timestamp>().ok());
                let timeout = self.knobs.lock().expect("knobs").retry_timeout;
                let expired = started.is_some_and(|t| {
                    jiff::Timestamp::now().duration_since(t).as_secs_f64() > timeout.as_secs_f64()
                });
                let patch = if expired {
                    self.step(format!("InstallPlan {ns}/{name} Failed: {e}"));
                    json!({"status": {"plan": steps, "phase": "Failed",
                        "conditions": [{"type": "Installed", "status": "False",
                            "reason": "InstallComponentFailed", "message": e,
                            "lastUpdateTime": now(), "lastTransitionTime": now()}]}})
                } else {
                    json!({"status": {"plan": steps,
                        "message": format!("retrying execution due to error: {e}")}})
                };
                self.api
                    .merge(OLM, "installplans", &ns, &name, &patch, true);
            }
        }
    }

    /// Applies one step; returns its status.
    async fn apply_step(&self, ns: &str, step: &Value) -> Result<&'static str, String> {
        let r = &step["resource"];
        let kind = s(r, "/kind");
        let name = s(r, "/name");
        let reference: Value =
            serde_json::from_str(s(r, "/manifest")).map_err(|e| format!("step {name}: {e}"))?;
        let objects = self.unpacked(&reference)?;
        let csv = objects
            .iter()
            .find(|o| o["kind"] == "ClusterServiceVersion")
            .cloned()
            .ok_or("the unpacked bundle has no CSV")?;
        let mut obj = if matches!(
            kind,
            "ServiceAccount" | "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding"
        ) && !objects
            .iter()
            .any(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        {
            // RBAC generated from the CSV (not files of the bundle).
            let mut c = csv.clone();
            c["metadata"]["namespace"] = json!(ns);
            if let Some(live) =
                self.api
                    .get(OLM, "clusterserviceversions", ns, s(&csv, "/metadata/name"))
            {
                c["metadata"]["uid"] = live["metadata"]["uid"].clone();
            }
            crate::olm::rbac::for_csv(&c, ns)
                .into_iter()
                .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
                .ok_or_else(|| format!("couldn't find unpacked step for {kind} {name}"))?
        } else {
            objects
                .into_iter()
                .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
                .ok_or_else(|| format!("couldn't find unpacked step for {kind} {name}"))?
        };
        obj["metadata"]["labels"]["olm.managed"] = json!("true");
        // A bundle's Service or ConfigMap gets a non-blocking owner reference to the CSV the step
        // resolves (`ExecutePlan`, cases serviceKind and configMapKind:
        // `ownerutil.AddNonBlockingOwner`, which skips an equal reference), so the garbage
        // collector deletes it with the CSV. Roles and RoleBindings keep only their own.
        if matches!(kind, "Service" | "ConfigMap") {
            let csv_name = s(&csv, "/metadata/name").to_string();
            let refs = &mut obj["metadata"]["ownerReferences"];
            if !refs.is_array() {
                *refs = json!([]);
            }
            if let Some(refs) = refs.as_array_mut()
                && !refs.iter().any(|o| {
                    o["kind"] == "ClusterServiceVersion"
                        && o["name"] == csv_name.as_str()
                        && o["uid"].as_str().unwrap_or_default().is_empty()
                })
            {
                refs.push(json!({"apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "ClusterServiceVersion", "name": csv_name, "uid": "",
                    "blockOwnerDeletion": false, "controller": false}));
            }
        }
        let plural = match kind {
            "ClusterServiceVersion" => "clusterserviceversions",
            "CustomResourceDefinition" => "customresourcedefinitions",
            "Service" => "services",
            "ServiceAccount" => "serviceaccounts",
            "ConfigMap" => "configmaps",
            "Secret" => "secrets",
            "Role" => "roles",
            "RoleBinding" => "rolebindings",
            "ClusterRole" => "clusterroles",
            "ClusterRoleBinding" => "clusterrolebindings",
            _ => return Err("the InstallPlan contains invalid data".into()),
        };
        let cluster_scoped = matches!(
            kind,
            "CustomResourceDefinition" | "ClusterRole" | "ClusterRoleBinding"
        );
        if !cluster_scoped {
            obj["metadata"]["namespace"] = json!(ns);
        }
        if kind == "ClusterServiceVersion" {
            obj["spec"]["replaces"] = json!(s(&reference, "/replaces"));
            if s(&reference, "/replaces").is_empty()
                && let Some(m) = obj["spec"].as_object_mut()
            {
                m.remove("replaces");
            }
            obj["metadata"]["annotations"]["operatorframework.io/properties"] =
                json!(s(&reference, "/properties"));
        }
        // Owner references to CSVs get the CSV's uid (`getUpdatedOwnerReferences`).
        if let Some(refs) = obj["metadata"]["ownerReferences"].as_array_mut() {
            for o in refs.iter_mut() {
                if o["kind"] == "ClusterServiceVersion" {
                    let csv_name = o["name"].as_str().unwrap_or_default().to_string();
                    let live = self
                        .api
                        .get(OLM, "clusterserviceversions", ns, &csv_name)
                        .ok_or_else(|| {
                            format!("no ClusterServiceVersion {csv_name} to own {kind} {name}")
                        })?;
                    o["uid"] = live["metadata"]["uid"].clone();
                }
            }
        }
        let group = s(r, "/group");
        let live = self
            .api
            .get(group, plural, if cluster_scoped { "" } else { ns }, name);
        match (kind, live) {
            (_, None) => {
                self.api.insert(plural, obj);
                self.step(format!("{kind} {name} created"));
                Ok("Created")
            }
            ("ClusterServiceVersion", Some(_)) => Ok("Present"),
            ("CustomResourceDefinition", Some(old)) => {
                self.check_crd(&old, &obj).await?;
                // The whole CRD is replaced by the bundle's (its status kept).
                let mut new = obj;
                new["status"] = old["status"].clone();
                new["metadata"]["uid"] = old["metadata"]["uid"].clone();
                self.api.insert(plural, new);
                self.step(format!("CustomResourceDefinition {name} updated"));
                Ok("Present")
            }
            (_, Some(old)) => {
                let mut new = obj;
                new["metadata"]["uid"] = old["metadata"]["uid"].clone();
                if old["status"].is_object() {
                    new["status"] = old["status"].clone();
                }
                self.api.insert(plural, new);
                Ok("Present")
            }
        }
    }

    /// OLM's checks before updating a CRD (operator.md §5): existing objects must validate
    /// against the new schema of every version served before and after (check A; only a
    /// warning when the new CRD converts by webhook), and every stored version must still be
    /// listed (check B).
    async fn check_crd(&self, old: &Value, new: &Value) -> Result<(), String> {
        let name = s(new, "/metadata/name");
        let new_versions = new["spec"]["versions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for v in old["status"]["storedVersions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let v = v.as_str().unwrap_or_default();
            if !new_versions.iter().any(|x| x["name"] == v) {
                return Err(format!(
                    "risk of data loss updating \"{name}\": new CRD removes version {v} that is listed as a stored version on the existing CRD"
                ));
            }
        }
        let group = s(new, "/spec/group");
        let plural = s(new, "/spec/names/plural");
        let kind = s(new, "/spec/names/kind");
        let webhook = s(new, "/spec/conversion/strategy") == "Webhook";
        for nv in &new_versions {
            let vname = s(nv, "/name");
            let served_before = old["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|x| x["name"] == vname && x["served"] == true);
            if !(served_before && nv["served"] == true) {
                continue;
            }
            let schema = &nv["schema"]["openAPIV3Schema"];
            // Listed at that version: the API server converts them (through the CRD's
            // webhook when it has one), as OLM's list does.
            let listed = {
                use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
                let ar = ApiResource::from_gvk_with_plural(
                    &GroupVersionKind::gvk(group, vname, kind),
                    plural,
                );
                let api: Api<DynamicObject> = Api::all_with(self.api.client(), &ar);
                api.list(&ListParams::default())
                    .await
                    .map_err(|e| format!("error listing {plural}.{group} at {vname}: {e}"))?
                    .items
            };
            for item in listed {
                let cr = serde_json::to_value(&item).map_err(|e| e.to_string())?;
                let mut o = cr.clone();
                o["apiVersion"] = json!(format!("{group}/{vname}"));
                o["kind"] = json!(kind);
                let errs = crate::api::schema::validate(schema, &o);
                if let Some(e) = errs.first() {
                    let at = match s(&cr, "/metadata/namespace") {
                        "" => s(&cr, "/metadata/name").to_string(),
                        ns => format!("{ns}/{}", s(&cr, "/metadata/name")),
                    };
                    let msg = format!(
                        "error validating existing CRs against new CRD's schema for \"{name}\": error validating {group}/{vname}, Kind={kind} \"{at}\": updated validation is too restrictive: {e}"
                    );
                    if webhook {
                        self.step(format!("Warning CRDValidation: {msg}"));
                    } else {
                        return Err(msg);
                    }
                }
            }
        }
        Ok(())
    }
}
