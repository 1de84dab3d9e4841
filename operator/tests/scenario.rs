//! The end-to-end scenario of issue 27, against the raised doubles: the API double (schemas,
//! RBAC, conversion through the webhook over TLS, garbage collection), the kubelet double
//! running the real `olmctl-operator` binary as the Deployment's two replicas, and the OLM
//! double (catalog operator and OLM operator), driven by the real `olmctl` binary.
//!
//! 1. `olmctl install --version 0.1.0` (pinned: Manual approval, only 0.1.0's plan approved):
//!    both replicas Ready, the CSV Succeeded;
//! 2. a `v1alpha1` UpgradePolicy, converted by the operator's webhook to the stored `v1`;
//! 3. 0.2.0 released into the catalog: the gate approves it inside the window; OLM rolls the
//!    Deployment and replaces the CSV;
//! 4. 0.3.0 released, whose CRD stops serving `v1alpha1`: held, with the reason on the
//!    policy's status and a Warning Event;
//! 5. the leader is killed: the standby takes the Lease over and keeps the hold;
//! 6. the override annotation approves 0.3.0, which installs;
//! 7. `olmctl uninstall --delete-crds` leaves no CSV, CRD, custom resource, Lease, RBAC, Service or
//!    finalizer behind.
//!
//! The scenario's bundles are the repository's `bundle/` at three versions, with leader
//! election timings shortened through the operator's flags (lease 4 s, renew deadline 3 s,
//! retry 500 ms) so that a takeover takes seconds.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::OLM;

/// Where `olmctl install` puts the operator by default (no `--namespace`): not the namespace its
/// manifests name (`olmctl-system`), so the bundle's RBAC must follow the install namespace.
const OPERATOR_NS: &str = "operators";
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use olmctl_testkit::kubelet::{ImageSpec, Kubelet};
use olmctl_testkit::olm::Olm;
use olmctl_testkit::olm::catalog::{Bundle, Catalog};
use serde_json::{Value, json};

const CATALOG_IMAGE: &str = "ghcr.io/olmctl/olmctl-catalog:scenario";
const PACKAGE: &str = "olmctl-operator";

fn csv_name(v: &str) -> String {
    format!("{PACKAGE}.v{v}")
}

/// The repository's bundle at version `v` (replacing `previous`), its CRD's v1alpha1 not
/// deprecated; with `drop_alpha`, its CRD stops serving v1alpha1 (and the CSV no longer owns
/// that version).
fn bundle(v: &str, previous: Option<&str>, drop_alpha: bool) -> Bundle {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bundle");
    let b = Bundle::from_dir(&dir, "unused").expect("the repository's bundle");
    let mut files = Vec::new();
    for (name, mut o) in b.files.clone() {
        match o["kind"].as_str().unwrap_or_default() {
            "ClusterServiceVersion" => {
                o["metadata"]["name"] = json!(csv_name(v));
                o["spec"]["version"] = json!(v);
                match previous {
                    Some(p) => o["spec"]["replaces"] = json!(csv_name(p)),
                    None => {
                        if let Some(m) = o["spec"].as_object_mut() {
                            m.remove("replaces");
                        }
                    }
                }
                let text = o.to_string().replace(":0.3.0\"", &format!(":{v}\""));
                o = serde_json::from_str(&text).expect("json");
                let c = &mut o["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]
                    ["containers"][0];
                let args = c["args"].as_array_mut().expect("args");
                for a in [
                    "--lease-duration=4s",
                    "--renew-deadline=3s",
                    "--retry-period=500ms",
                ] {
                    args.push(json!(a));
                }
                if drop_alpha {
                    o["spec"]["customresourcedefinitions"]["owned"]
                        .as_array_mut()
                        .expect("owned")
                        .retain(|x| x["version"] != "v1alpha1");
                }
            }
            "CustomResourceDefinition" => {
                for ver in o["spec"]["versions"].as_array_mut().expect("versions") {
                    if ver["name"] == "v1alpha1" {
                        // Not deprecated before (as 0.2.0 shipped it): stopping to serve it
                        // breaks its clients.
                        if let Some(m) = ver.as_object_mut() {
                            m.remove("deprecated");
                            m.remove("deprecationWarning");
                        }
                        if drop_alpha {
                            ver["served"] = json!(false);
                        }
                    }
                }
            }
            "Role" | "RoleBinding" => {
                o["metadata"]["ownerReferences"][0]["name"] = json!(csv_name(v));
            }
            _ => {}
        }
        files.push((name, o));
    }
    Bundle::new(
        files,
        b.annotations.clone(),
        &format!("ghcr.io/olmctl/olmctl-operator-bundle:{v}"),
    )
    .expect("bundle")
}

fn olmctl_bin() -> PathBuf {
    let p = olmctl_testkit::process::workspace_bin("olmctl");
    assert!(
        p.exists(),
        "{} is missing: build it with `cargo build -p olmctl-cli` (cargo test --workspace does)",
        p.display()
    );
    p
}

/// Runs `olmctl` with `args` (off the runtime's threads); returns (exit code, stdout+stderr).
async fn olmctl(kc: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.extend(["--kubeconfig".to_string(), kc.display().to_string()]);
    let bin = olmctl_bin();
    tokio::task::spawn_blocking(move || {
        let o = std::process::Command::new(bin)
            .args(&all)
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("olmctl runs");
        (
            o.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    })
    .await
    .expect("joined")
}

struct World {
    api: ApiServer,
    kubelet: Kubelet,
    olm: Olm,
    catalog: Catalog,
    kc: PathBuf,
    _dir: tempfile::TempDir,
}

impl World {
    fn diagnostics(&self) -> String {
        let csvs: Vec<String> = self
            .api
            .list(OLM, "clusterserviceversions")
            .iter()
            .map(|c| {
                format!(
                    "{} {} {}",
                    c["metadata"]["name"], c["status"]["phase"], c["status"]["message"]
                )
            })
            .collect();
        let plans: Vec<String> = self
            .api
            .list(OLM, "installplans")
            .iter()
            .map(|p| {
                format!(
                    "{} {:?} approved={} {} {}",
                    p["metadata"]["name"],
                    p["spec"]["clusterServiceVersionNames"],
                    p["spec"]["approved"],
                    p["status"]["phase"],
                    p["status"]["message"]
                )
            })
            .collect();
        let policies: Vec<String> = self
            .api
            .list("olmctl.dev", "upgradepolicies")
            .iter()
            .map(|p| p["status"].to_string())
            .collect();
        let deletes: Vec<String> = self
            .api
            .log()
            .into_iter()
            .filter(|l| l.method == http::Method::DELETE)
            .map(|l| format!("{} {} {} {}", l.code, l.user, l.method, l.uri))
            .collect();
        let crds: Vec<String> = self
            .api
            .list("apiextensions.k8s.io", "customresourcedefinitions")
            .iter()
            .map(|c| c["metadata"]["name"].to_string())
            .collect();
        let namespaces: Vec<String> = self
            .api
            .list("", "namespaces")
            .iter()
            .map(|c| format!("{} {}", c["metadata"]["name"], c["status"]["phase"]))
            .collect();
        format!(
            "deletes: {deletes:#?}\nCRDs: {crds:?}\nnamespaces: {namespaces:?}\nOLM:\n{}\nCSVs: {csvs:#?}\nplans: {plans:#?}\nsubscription: {}\npolicies: {policies:#?}\nlease: {}\n{}",
            self.olm.steps().join("\n"),
            self.api
                .get(OLM, "subscriptions", OPERATOR_NS, PACKAGE)
                .map(|s| s["status"].to_string())
                .unwrap_or_default(),
            self.api
                .get(
                    "coordination.k8s.io",
                    "leases",
                    OPERATOR_NS,
                    "olmctl-operator"
                )
                .map(|l| l.to_string())
                .unwrap_or_default(),
            self.kubelet.all_logs()
        )
    }

    /// Waits until `f` holds (polling every 50 ms); fails with everything the doubles know.
    async fn until(&self, what: &str, timeout: Duration, mut f: impl FnMut(&ApiServer) -> bool) {
        let end = Instant::now() + timeout;
        while !f(&self.api) {
            if Instant::now() >= end {
                panic!("timed out waiting for {what}\n{}", self.diagnostics());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn csv_phase(&self, v: &str) -> Option<String> {
        self.api
            .get(OLM, "clusterserviceversions", OPERATOR_NS, &csv_name(v))
            .map(|c| {
                c["status"]["phase"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
    }

    fn policy(&self) -> Value {
        self.api
            .get("olmctl.dev", "upgradepolicies", OPERATOR_NS, "gate")
            .unwrap_or_default()
    }

    fn pending_plan_for(&self, v: &str) -> Option<Value> {
        self.api
            .list(OLM, "installplans")
            .into_iter()
            .find(|p| p["spec"]["clusterServiceVersionNames"][0] == csv_name(v).as_str())
    }
}

async fn world() -> World {
    let api = ApiServer::new();
    api.use_system_clock();
    olmctl_testkit::fixtures::install_olm_crds(&api);
    api.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "olm"}}),
    );
    let url = api.serve_on_loopback();
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, kubeconfig(&url, ADMIN_TOKEN, "default")).expect("kubeconfig");
    let kubelet = Kubelet::start(
        &api,
        &url,
        vec![(
            "ghcr.io/olmctl/olmctl-operator:".into(),
            ImageSpec {
                bin: PathBuf::from(env!("CARGO_BIN_EXE_olmctl-operator")),
                listen_flags: vec![
                    ("--probe-addr".into(), "probes".into()),
                    ("--webhook-addr".into(), "webhook".into()),
                ],
                mount_flags: vec![(
                    "--cert-dir".into(),
                    "/tmp/k8s-webhook-server/serving-certs".into(),
                )],
            },
        )],
    );
    let olm = Olm::start(&api);
    let catalog = Catalog::new();
    catalog.release("stable-v0", bundle("0.1.0", None, false));
    olm.serve(CATALOG_IMAGE, catalog.clone());
    World {
        api,
        kubelet,
        olm,
        catalog,
        kc,
        _dir: dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_gate_upgrade_hold_failover_override_uninstall() {
    let started = Instant::now();
    let w = world().await;

    // 1. Install 0.1.0, pinned. `--version` is looked up in the catalog; the double's image
    // is not in a registry, so a copy of the catalog is given as a directory, as a user
    // without access to the registry would.
    let fbc = w._dir.path().join("catalog");
    std::fs::create_dir_all(&fbc).expect("catalog dir");
    let blobs = [
        json!({"schema": "olm.package", "name": PACKAGE, "defaultChannel": "stable-v0"}),
        json!({"schema": "olm.channel", "package": PACKAGE, "name": "stable-v0",
               "entries": [{"name": csv_name("0.1.0")}]}),
        json!({"schema": "olm.bundle", "package": PACKAGE, "name": csv_name("0.1.0"),
               "image": format!("ghcr.io/olmctl/olmctl-operator-bundle:v0.1.0"),
               "properties": [{"type": "olm.package",
                               "value": {"packageName": PACKAGE, "version": "0.1.0"}}]}),
    ];
    let text: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    std::fs::write(fbc.join("catalog.json"), text).expect("catalog.json");
    let fbc_arg = fbc.display().to_string();
    let (code, out) = olmctl(
        &w.kc,
        &[
            "install",
            PACKAGE,
            "--catalog",
            CATALOG_IMAGE,
            "--catalog-dir",
            &fbc_arg,
            "--channel",
            "stable-v0",
            "--create-namespace",
            "--version",
            "0.1.0",
            "--yes",
            "--interval",
            "100ms",
            "--timeout",
            "60s",
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{out}\n{}", w.diagnostics());
    assert!(
        out.contains("installed olmctl-operator.v0.1.0 in namespace operators")
            && out.contains("pinned to olmctl-operator.v0.1.0"),
        "{out}"
    );
    assert_eq!(w.csv_phase("0.1.0").as_deref(), Some("Succeeded"));
    let pods = w.kubelet.pods(OPERATOR_NS, "olmctl-operator");
    assert_eq!(
        pods.iter().filter(|p| p.ready && !p.terminating).count(),
        2,
        "both replicas Ready: {pods:?}"
    );
    let sub = w
        .api
        .get(OLM, "subscriptions", OPERATOR_NS, PACKAGE)
        .expect("sub");
    assert_eq!(sub["spec"]["installPlanApproval"], "Manual");

    // 2. A v1alpha1 policy, stored as v1 by the operator's conversion webhook.
    let open = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1);
    let start = open.strftime("%H:%M").to_string();
    let created = {
        use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("olmctl.dev", "v1alpha1", "UpgradePolicy"),
            "upgradepolicies",
        );
        let api: Api<DynamicObject> = Api::namespaced_with(w.api.client(), OPERATOR_NS, &ar);
        let p: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "olmctl.dev/v1alpha1", "kind": "UpgradePolicy",
            "metadata": {"name": "gate", "namespace": OPERATOR_NS},
            "spec": {"subscriptionSelector": {"matchLabels": {}}, "maxUpgrade": "minor",
                     "crdChecks": "Enforce", "maintenanceWindows": [format!("* {start}+4h UTC")]}
        }))
        .expect("policy");
        api.create(&PostParams::default(), &p).await
    };
    let created = created.unwrap_or_else(|e| panic!("{e}\n{}", w.diagnostics()));
    assert_eq!(
        created.types.as_ref().map(|t| t.api_version.as_str()),
        Some("olmctl.dev/v1alpha1")
    );
    let stored = w.policy();
    assert_eq!(
        stored["apiVersion"], "olmctl.dev/v1",
        "stored in the storage version"
    );
    assert_eq!(stored["spec"]["maxVersionJump"], "minor");
    assert_eq!(stored["spec"]["maintenanceWindows"][0]["duration"], "4h");
    w.until("the policy reconciled", Duration::from_secs(20), |_| {
        w.policy()["status"]["conditions"][0]["status"] == "True"
    })
    .await;

    // 3. 0.2.0 released: approved inside the window, installed, 0.1.0 replaced.
    w.catalog
        .release("stable-v0", bundle("0.2.0", Some("0.1.0"), false));
    w.until(
        "0.2.0 installed and 0.1.0 gone",
        Duration::from_secs(40),
        |_| w.csv_phase("0.2.0").as_deref() == Some("Succeeded") && w.csv_phase("0.1.0").is_none(),
    )
    .await;
    let plan2 = w.pending_plan_for("0.2.0").expect("0.2.0's plan");
    let approvals: Vec<_> = w
        .api
        .log()
        .into_iter()
        .filter(|l| {
            l.method == http::Method::PATCH
                && l.uri.contains(&format!(
                    "installplans/{}",
                    plan2["metadata"]["name"].as_str().unwrap_or_default()
                ))
        })
        .collect();
    assert_eq!(approvals.len(), 1, "one approval");
    assert_eq!(
        approvals[0].user,
        "system:serviceaccount:operators:olmctl-operator"
    );
    assert_eq!(approvals[0].code, 200);

    // 4. 0.3.0 stops serving v1alpha1: held, with the reason on the policy and an Event.
    w.catalog
        .release("stable-v0", bundle("0.3.0", Some("0.2.0"), true));
    w.until("0.3.0 held", Duration::from_secs(30), |_| {
        let e = &w.policy()["status"]["subscriptions"];
        e.as_array().is_some_and(|e| {
            e.iter()
                .any(|x| x["pendingCsv"] == csv_name("0.3.0").as_str() && x["decision"] == "Held")
        })
    })
    .await;
    let p = w.policy();
    let entry = p["status"]["subscriptions"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|x| x["pendingCsv"] == csv_name("0.3.0").as_str())
        .cloned()
        .expect("entry");
    assert!(
        entry["reasons"]
            .as_array()
            .expect("reasons")
            .iter()
            .any(|r| r["code"] == "GATE007"
                && r["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("v1alpha1"))),
        "{entry:#}"
    );
    assert!(
        w.api
            .list("events.k8s.io", "events")
            .iter()
            .any(|e| e["reason"] == "Held"
                && e["type"] == "Warning"
                && e["regarding"]["kind"] == "UpgradePolicy"),
        "a Warning Event on the policy"
    );
    let plan3 = w.pending_plan_for("0.3.0").expect("0.3.0's plan");
    let plan3_name = plan3["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(plan3["spec"]["approved"], false);

    // 5. The leader is killed: the standby takes over and keeps the hold.
    let holder = |api: &ApiServer| -> String {
        api.get(
            "coordination.k8s.io",
            "leases",
            OPERATOR_NS,
            "olmctl-operator",
        )
        .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
        .unwrap_or_default()
    };
    let leader = holder(&w.api);
    let leader_pod = leader.split('_').next().unwrap_or_default().to_string();
    assert!(
        w.kubelet
            .pods(OPERATOR_NS, "olmctl-operator")
            .iter()
            .any(|p| p.name == leader_pod),
        "the holder {leader:?} is one of the pods"
    );
    w.kubelet.kill(OPERATOR_NS, &leader_pod);
    w.until("the standby to take over", Duration::from_secs(20), |api| {
        let h = holder(api);
        !h.is_empty() && !h.starts_with(&leader_pod)
    })
    .await;
    // The new leader judges the plan again: still held, still not approved.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        w.api
            .get(OLM, "installplans", OPERATOR_NS, &plan3_name)
            .expect("plan")["spec"]["approved"],
        false
    );
    assert!(
        w.policy()["status"]["subscriptions"]
            .as_array()
            .expect("entries")
            .iter()
            .any(|x| x["installPlan"] == plan3_name.as_str() && x["decision"] == "Held")
    );

    // 6. The override approves 0.3.0, which installs.
    w.api.merge(
        OLM,
        "subscriptions",
        OPERATOR_NS,
        PACKAGE,
        &json!({"metadata": {"annotations": {"olmctl.dev/approve": plan3_name}}}),
        false,
    );
    w.until(
        "0.3.0 installed and 0.2.0 gone",
        Duration::from_secs(40),
        |_| w.csv_phase("0.3.0").as_deref() == Some("Succeeded") && w.csv_phase("0.2.0").is_none(),
    )
    .await;
    let crd = w
        .api
        .get(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "upgradepolicies.olmctl.dev",
        )
        .expect("crd");
    assert_eq!(
        crd["spec"]["conversion"]["strategy"], "Webhook",
        "OLM's own conversion config"
    );
    // This cluster has no OLM v1: the pods said so per kind, and logged no failed watch for it
    // (the watcher keeps looking with backoff, at debug level).
    let logs = w.kubelet.all_logs();
    for kind in ["ClusterExtension", "ClusterCatalog"] {
        let said = logs
            .lines()
            .filter(|l| l.contains("not served by this cluster") && l.contains(kind))
            .count();
        assert!(said >= 1, "{kind}: {logs}");
    }
    assert!(
        !logs
            .lines()
            .any(|l| l.contains("watch failed") && l.contains("404")),
        "{logs}"
    );

    // 7. Uninstall with the CRDs: nothing left behind.
    let (code, out) = olmctl(
        &w.kc,
        &[
            "uninstall",
            PACKAGE,
            "--delete-crds",
            "--yes",
            "--interval",
            "100ms",
            "--timeout",
            "30s",
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{out}\n{}", w.diagnostics());
    w.until("the operator's pods to go", Duration::from_secs(20), |_| {
        w.kubelet.pods(OPERATOR_NS, "olmctl-operator").is_empty()
    })
    .await;
    let api = &w.api;
    assert!(api.list(OLM, "clusterserviceversions").is_empty(), "no CSV");
    assert!(
        api.get(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "upgradepolicies.olmctl.dev"
        )
        .is_none(),
        "no CRD"
    );
    assert!(
        api.list("olmctl.dev", "upgradepolicies").is_empty(),
        "no custom resource"
    );
    assert!(
        api.list("coordination.k8s.io", "leases").is_empty(),
        "no Lease: {:?}",
        api.list("coordination.k8s.io", "leases")
    );
    assert!(api.list("apps", "deployments").is_empty(), "no Deployment");
    for (plural, what) in [
        ("roles", "Role"),
        ("rolebindings", "RoleBinding"),
        ("clusterroles", "ClusterRole"),
        ("clusterrolebindings", "ClusterRoleBinding"),
    ] {
        let left: Vec<String> = api
            .list("rbac.authorization.k8s.io", plural)
            .iter()
            .filter(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("olmctl-operator"))
                    || o["metadata"]["labels"]["olm.owner"]
                        .as_str()
                        .is_some_and(|n| n.starts_with(PACKAGE))
            })
            .map(|o| o["metadata"]["name"].to_string())
            .collect();
        assert!(left.is_empty(), "no {what}: {left:?}");
    }
    assert!(
        api.get("", "serviceaccounts", OPERATOR_NS, "olmctl-operator")
            .is_none(),
        "no ServiceAccount"
    );
    assert!(
        api.get("", "services", OPERATOR_NS, "olmctl-operator-webhook")
            .is_none(),
        "no webhook Service (OLM made the CSV its owner)"
    );
    let finalized: Vec<String> = ["olmctl.dev"]
        .iter()
        .flat_map(|g| api.list(g, "upgradepolicies"))
        .filter(|o| !o["metadata"]["finalizers"].is_null())
        .map(|o| o["metadata"]["name"].to_string())
        .collect();
    assert!(finalized.is_empty(), "no finalizer: {finalized:?}");
    eprintln!("scenario took {:?}", started.elapsed());
}
