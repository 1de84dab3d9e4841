//! Test support: the in-memory API (olmctl-operator's fake) and an OLM double that moves the
//! objects `olmctl install` creates through OLM's real states (operator.md §2.3, §3.3, §4.2,
//! §6.3), one step each time the client starts a poll (its GET of the CatalogSource), so that
//! every state is seen once and the progress lines are exact.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use olmctl::install::{Catalog, Install};
use olmctl_cli::cluster::{Connection, InstallRequest, Waiting};
use olmctl_testkit::api::ApiServer as FakeApi;
use serde_json::{Value, json};

pub const OLM: &str = "operators.coreos.com";
pub const NS: &str = "operators";
pub const PLAN: &str = "install-7xk2p";
pub const CRD: &str = "widgets.example.com";

/// How the double behaves.
#[derive(Debug, Clone, Default)]
pub struct Scenario {
    /// The solver's message: resolution fails with ConstraintsNotSatisfiable.
    pub resolution_fails: Option<String>,
    /// The CSV fails at Installing with this reason and message.
    pub csv_fails: Option<(String, String)>,
    /// The catalog never gets past CONNECTING.
    pub catalog_stuck: bool,
    /// olmctl-operator's gate approves a plan that requires approval.
    pub gate_approves: bool,
    /// A condition OLM sets and retries (type, reason, message) for this many polls before
    /// resolving (cluster.md R5.6); `u32::MAX`: it never clears.
    pub transient: Option<(String, String, String, u32)>,
    /// After the first plan created its CSV, OLM makes the follow-up plan for the channel's
    /// next version p.v1.1.0 (cluster.md R5.5), approved at once when the Subscription is
    /// Automatic.
    pub follow_up: bool,
}

/// The double's memory.
pub struct Olm {
    fake: FakeApi,
    sc: Scenario,
    /// Steps taken (for assertions).
    pub steps: Vec<&'static str>,
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

impl Olm {
    fn one(&self, plural: &str) -> Option<Value> {
        self.fake.list(OLM, plural).into_iter().next()
    }

    fn sub_status(&self, sub: &Value, patch: Value) {
        self.fake.merge(
            OLM,
            "subscriptions",
            s(sub, "/metadata/namespace"),
            s(sub, "/metadata/name"),
            &json!({ "status": patch }),
            true,
        );
    }

    /// One OLM step, or none when OLM has nothing to do.
    pub fn tick(&mut self) {
        let step = self.step();
        if let Some(st) = step {
            self.steps.push(st);
        }
    }

    fn step(&mut self) -> Option<&'static str> {
        let f = &self.fake;
        let cs = self.one("catalogsources")?;
        let (cs_ns, cs_name) = (s(&cs, "/metadata/namespace"), s(&cs, "/metadata/name"));
        match s(&cs, "/status/connectionState/lastObservedState") {
            "" => {
                f.merge(
                    OLM,
                    "catalogsources",
                    cs_ns,
                    cs_name,
                    &json!({"status": {"connectionState": {"lastObservedState": "CONNECTING"}}}),
                    true,
                );
                return Some("catalog CONNECTING");
            }
            "CONNECTING" if !self.sc.catalog_stuck => {
                f.merge(
                    OLM,
                    "catalogsources",
                    cs_ns,
                    cs_name,
                    &json!({"status": {"connectionState": {"lastObservedState": "READY"}}}),
                    true,
                );
                return Some("catalog READY");
            }
            "READY" => {}
            _ => return None,
        }
        let sub = self.one("subscriptions")?;
        let ns = s(&sub, "/metadata/namespace").to_string();
        let pkg = s(&sub, "/spec/name").to_string();
        let csv_name = match s(&sub, "/spec/startingCSV") {
            "" => format!("{pkg}.v1.0.0"),
            c => c.to_string(),
        };
        let manual = s(&sub, "/spec/installPlanApproval") == "Manual";
        let plan = f.get(OLM, "installplans", &ns, PLAN);
        if s(&sub, "/status/currentCSV").is_empty()
            && let Some((ty, reason, message, times)) = self.sc.transient.clone()
        {
            if times > 0 {
                self.sc.transient = Some((
                    ty.clone(),
                    reason.clone(),
                    message.clone(),
                    times.saturating_sub(if times == u32::MAX { 0 } else { 1 }),
                ));
                let had = sub
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .is_some_and(|c| c.iter().any(|c| c["type"] == ty.as_str()));
                if had {
                    return None;
                }
                self.sub_status(
                    &sub,
                    json!({"conditions": [
                    {"type": ty, "status": "True", "reason": reason, "message": message}]}),
                );
                return Some("transient condition");
            }
            // OLM's next sync succeeds and drops the condition.
            self.sc.transient = None;
            self.sub_status(&sub, json!({"conditions": null}));
            return Some("transient condition cleared");
        }
        if s(&sub, "/status/currentCSV").is_empty() {
            if let Some(msg) = &self.sc.resolution_fails {
                if sub.pointer("/status/conditions").is_some() {
                    return None;
                }
                self.sub_status(&sub, json!({"state": "", "conditions": [
                    {"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "AllCatalogSourcesHealthy",
                     "message": "all available catalogsources are healthy"},
                    {"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable",
                     "message": msg}]}));
                return Some("ResolutionFailed");
            }
            match plan {
                // OLM's first write: the plan, spec only.
                None => {
                    f.insert("installplans", json!({
                        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                        "metadata": {"name": PLAN, "namespace": ns},
                        "spec": {"approval": if manual {"Manual"} else {"Automatic"}, "approved": !manual,
                                 "clusterServiceVersionNames": [csv_name], "generation": 1}}));
                    return Some("plan created");
                }
                // The second: its status, then the Subscription points at it.
                Some(_) => {
                    f.merge(
                        OLM,
                        "installplans",
                        &ns,
                        PLAN,
                        &json!({"status": {
                        "phase": if manual {"RequiresApproval"} else {"Installing"},
                        "catalogSources": [cs_name],
                        // The bundle's objects, one step each (resolver.NewStepsFromBundle).
                        "plan": [
                            {"resolving": csv_name, "status": "Unknown", "resource": {
                                "group": OLM, "version": "v1alpha1", "kind": "ClusterServiceVersion",
                                "name": csv_name, "sourceName": cs_name, "sourceNamespace": "olm",
                                "manifest": "{}"}},
                            {"resolving": csv_name, "status": "Unknown", "resource": {
                                "group": "apiextensions.k8s.io", "version": "v1",
                                "kind": "CustomResourceDefinition", "name": CRD,
                                "sourceName": cs_name, "sourceNamespace": "olm", "manifest": "{}"}}]}}),
                        true,
                    );
                    self.sub_status(&sub, json!({"state": "UpgradePending", "currentCSV": csv_name,
                        "installPlanGeneration": 1,
                        "installPlanRef": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                                           "name": PLAN, "namespace": ns},
                        "conditions": [{"type": "InstallPlanPending", "status": "True",
                            "reason": if manual {"RequiresApproval"} else {"Installing"}}]}));
                    return Some("plan status");
                }
            }
        }
        let plan = plan?;
        let approved = plan.pointer("/spec/approved") == Some(&json!(true));
        match s(&plan, "/status/phase") {
            "RequiresApproval" if approved => {
                f.merge(
                    OLM,
                    "installplans",
                    &ns,
                    PLAN,
                    &json!({"status": {"phase": "Installing"}}),
                    true,
                );
                return Some("plan Installing");
            }
            "RequiresApproval" if self.sc.gate_approves => {
                f.merge(
                    OLM,
                    "installplans",
                    &ns,
                    PLAN,
                    &json!({"spec": {"approved": true}}),
                    false,
                );
                return Some("gate approved");
            }
            "RequiresApproval" => return None,
            "Installing" => {
                // The CSV step, then the CRD step; the plan is Complete.
                f.insert("customresourcedefinitions", widget_crd());
                f.insert("clusterserviceversions", json!({
                    "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                    "metadata": {"name": csv_name, "namespace": ns, "labels": {"olm.managed": "true",
                        format!("operators.coreos.com/{pkg}.{ns}"): ""}},
                    "spec": {"version": "1.0.0", "customresourcedefinitions": {"owned": [
                        {"name": CRD, "version": "v1", "kind": "Widget"}]}}}));
                f.merge(
                    OLM,
                    "installplans",
                    &ns,
                    PLAN,
                    &json!({"status": {"phase": "Complete",
                    "conditions": [{"type": "Installed", "status": "True"}],
                    // Each step carried out (ExecutePlan: Created).
                    "plan": [
                        {"resolving": csv_name, "status": "Created", "resource": {
                            "group": OLM, "version": "v1alpha1", "kind": "ClusterServiceVersion",
                            "name": csv_name, "sourceName": cs_name, "sourceNamespace": "olm",
                            "manifest": "{}"}},
                        {"resolving": csv_name, "status": "Created", "resource": {
                            "group": "apiextensions.k8s.io", "version": "v1",
                            "kind": "CustomResourceDefinition", "name": CRD,
                            "sourceName": cs_name, "sourceNamespace": "olm", "manifest": "{}"}}]}}),
                    true,
                );
                self.sub_status(
                    &sub,
                    json!({"state": "AtLatestKnown", "installedCSV": csv_name,
                    "conditions": null}),
                );
                return Some("plan Complete");
            }
            _ => {}
        }
        // The follow-up plan for the next version, once the first CSV exists (R5.5).
        if self.sc.follow_up && f.get(OLM, "installplans", &ns, "install-next").is_none() {
            f.insert(
                "installplans",
                json!({
                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                "metadata": {"name": "install-next", "namespace": ns},
                "spec": {"approval": if manual {"Manual"} else {"Automatic"}, "approved": !manual,
                         "clusterServiceVersionNames": [format!("{pkg}.v1.1.0")], "generation": 2},
                "status": {"phase": if manual {"RequiresApproval"} else {"Installing"},
                           "catalogSources": [cs_name]}}),
            );
            self.sub_status(&sub, json!({"state": "UpgradePending", "currentCSV": format!("{pkg}.v1.1.0"),
                "installPlanGeneration": 2,
                "installPlanRef": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                                   "name": "install-next", "namespace": ns}}));
            return Some("follow-up plan");
        }
        if let Some(next_plan) = f.get(OLM, "installplans", &ns, "install-next")
            && next_plan.pointer("/spec/approved") == Some(&json!(true))
            && f.get(OLM, "clusterserviceversions", &ns, &format!("{pkg}.v1.1.0"))
                .is_none()
        {
            // An approved follow-up plan installs the next version.
            let mut c = f.get(OLM, "clusterserviceversions", &ns, &csv_name)?;
            c["metadata"] = json!({"name": format!("{pkg}.v1.1.0"), "namespace": ns,
                "labels": {format!("operators.coreos.com/{pkg}.{ns}"): ""}});
            c["spec"]["version"] = json!("1.1.0");
            c["spec"]["replaces"] = json!(csv_name);
            f.insert("clusterserviceversions", c);
            f.merge(
                OLM,
                "installplans",
                &ns,
                "install-next",
                &json!({"status": {"phase": "Complete"}}),
                true,
            );
            self.sub_status(
                &sub,
                json!({"state": "AtLatestKnown", "installedCSV": format!("{pkg}.v1.1.0")}),
            );
            return Some("follow-up installed");
        }
        let csv = f.get(OLM, "clusterserviceversions", &ns, &csv_name)?;
        let next = match s(&csv, "/status/phase") {
            "" => (
                "Pending",
                "RequirementsUnknown",
                "requirements not yet checked",
            ),
            "Pending" => (
                "InstallReady",
                "AllRequirementsMet",
                "all requirements found, attempting install",
            ),
            "InstallReady" => (
                "Installing",
                "InstallSucceeded",
                "waiting for install components to report healthy",
            ),
            "Installing" => match &self.sc.csv_fails {
                Some((r, m)) => {
                    let (r, m) = (r.clone(), m.clone());
                    f.merge(
                        OLM,
                        "clusterserviceversions",
                        &ns,
                        &csv_name,
                        &json!({"status": {"phase": "Failed", "reason": r, "message": m}}),
                        true,
                    );
                    return Some("csv Failed");
                }
                None => (
                    "Succeeded",
                    "InstallSucceeded",
                    "install strategy completed with no errors",
                ),
            },
            _ => return None,
        };
        f.merge(
            OLM,
            "clusterserviceversions",
            &ns,
            &csv_name,
            &json!({"status": {"phase": next.0, "reason": next.1, "message": next.2}}),
            true,
        );
        Some(next.0)
    }
}

/// The CRD the double's package owns.
pub fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

/// The package's operator while one of its CSVs exists: it removes its finalizer
/// `example.com/cleanup` from Widgets being deleted (as a controller serving a finalizer does).
pub fn widget_operator(fake: &FakeApi) {
    let running = fake
        .list(OLM, "clusterserviceversions")
        .iter()
        .any(|c| s(c, "/metadata/name").starts_with("p.v"));
    if !running {
        return;
    }
    for w in fake.list("example.com", "widgets") {
        if w.pointer("/metadata/deletionTimestamp").is_some() {
            fake.merge(
                "example.com",
                "widgets",
                s(&w, "/metadata/namespace"),
                s(&w, "/metadata/name"),
                &json!({"metadata": {"finalizers": null}}),
                false,
            );
        }
    }
}

/// A fake cluster with namespace `operators` and OLM's double hooked to the client's polls.
pub fn cluster(sc: Scenario) -> (FakeApi, Arc<Mutex<Olm>>) {
    let fake = FakeApi::new();
    olmctl_testkit::fixtures::install_olm_crds(&fake);
    fake.insert(
        "customresourcedefinitions",
        olmctl_testkit::fixtures::operator_crd(),
    );
    fake.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    );
    fake.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "olm"}}),
    );
    let olm = Arc::new(Mutex::new(Olm {
        fake: fake.clone(),
        sc,
        steps: Vec::new(),
    }));
    let o = olm.clone();
    let f2 = fake.clone();
    fake.set_hook(Arc::new(move |m, path| {
        if m == http::Method::GET && path.contains("/catalogsources/") {
            o.lock().expect("lock").tick();
        }
        if m == http::Method::GET {
            widget_operator(&f2);
        }
    }));
    (fake, olm)
}

/// `olmctl install p --catalog quay.io/example/p-catalog:v1` with fast polls.
pub fn request(approval: &str, yes: bool) -> InstallRequest {
    InstallRequest {
        install: Install {
            package: "p".into(),
            catalog: Catalog::Image("quay.io/example/p-catalog:v1".into()),
            catalog_namespace: "olm".into(),
            channel: Some("stable".into()),
            version: None,
            starting_csv: None,
            namespace: NS.into(),
            target_namespaces: Vec::new(),
            operator_group: true,
            create_namespace: false,
            approval: approval.into(),
            gate: None,
            poll_interval: "30m".into(),
            catalog_annotations: Default::default(),
        },
        connection: Connection::default(),
        waiting: waiting(yes),
    }
}

/// Fast polls, a short timeout.
pub fn waiting(yes: bool) -> Waiting {
    Waiting {
        timeout: Duration::from_secs(10),
        interval: Duration::from_millis(1),
        yes,
        no_wait: false,
    }
}

/// A kube client over the fake, in-process (no server URL).
pub fn client(fake: &FakeApi) -> olmctl_cli::cluster::api::Cluster {
    olmctl_cli::cluster::api::Cluster {
        client: kube::Client::new(fake.clone(), "default"),
        server: "(in-process)".into(),
    }
}
