//! Memory of the operator process (the real `olmctl-operator run` binary), idle and with 1,000
//! Subscriptions and their InstallPlans in its watch streams: the in-memory API
//! (`olmctl_operator::fake`) is served over HTTP on 127.0.0.1 from this process, and the
//! operator connects to it through a kubeconfig. RSS is read from /proc. Baseline in the same
//! run: the operator idle (no policies, no Subscriptions).
//!
//! Run with `cargo bench -p olmctl-operator --bench memory` (it builds the release binary).

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer};
use serde_json::json;

const NAMESPACES: usize = 100;
const PER_NAMESPACE: usize = 10;

/// A `/proc/PID/status` field in KiB (`VmRSS`, `VmHWM`).
fn status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn subscription(ns: &str, i: usize) -> serde_json::Value {
    json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": {"name": format!("operator-{i}"), "namespace": ns,
                     "labels": {"operators.coreos.com/operator.ns": ""}},
        "spec": {"channel": "stable", "name": format!("operator-{i}"), "source": "catalog",
                 "sourceNamespace": "olm", "installPlanApproval": "Manual"},
        "status": {"state": "AtLatestKnown", "currentCSV": format!("operator-{i}.v1.0.0"),
                   "installedCSV": format!("operator-{i}.v1.0.0"),
                   "installPlanRef": {"name": format!("install-{i}"), "namespace": ns}}
    })
}

fn plan(ns: &str, i: usize) -> serde_json::Value {
    json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
        "metadata": {"name": format!("install-{i}"), "namespace": ns,
                     "ownerReferences": [{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                                          "name": format!("operator-{i}"), "uid": "u"}]},
        "spec": {"approval": "Manual", "approved": true,
                 "clusterServiceVersionNames": [format!("operator-{i}.v1.0.0")], "generation": 1},
        "status": {"phase": "Complete", "plan": []}
    })
}

async fn wait(what: &str, mut f: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed()
}

fn main() {
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "olmctl-operator",
            "--bin",
            "olmctl-operator",
        ])
        .status()
        .expect("cargo");
    assert!(status.success());
    let bin =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/olmctl-operator");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let fake = ApiServer::new();
        olmctl_testkit::fixtures::install_olm_crds(&fake);
        fake.insert(
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "olmctl-system"}}),
        );
        fake.insert(
            "customresourcedefinitions",
            serde_json::to_value(olmctl_operator::crd::crd()).expect("crd"),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(fake.clone().serve_http(listener));
        let dir = tempfile::tempdir().expect("tmp");
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: fake\n  context: {{cluster: fake, user: admin, namespace: default}}\ncurrent-context: fake\nusers:\n- name: admin\n  user: {{token: {ADMIN_TOKEN}}}\n"
            ),
        )
        .expect("kubeconfig");
        let probes = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("probe port");
            l.local_addr().expect("addr")
        };
        let mut child: Child = Command::new(&bin)
            .args(["run", "--probe-addr", &probes.to_string(), "--webhook-addr", "127.0.0.1:0",
                   "--cert-dir", "/nonexistent"])
            .env("KUBECONFIG", &kubeconfig)
            .env("RUST_LOG", "error")
            .spawn()
            .expect("operator starts");
        let pid = child.id();
        let leased = wait("the Lease", || {
            fake.get("coordination.k8s.io", "leases", "olmctl-system", "olmctl-operator").is_some()
        })
        .await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let idle = status_kib(pid, "VmRSS");

        for n in 0..NAMESPACES {
            let ns = format!("team-{n:03}");
            for i in 0..PER_NAMESPACE {
                let sub = fake.insert("subscriptions", subscription(&ns, i));
                let mut p = plan(&ns, i);
                p["metadata"]["ownerReferences"][0]["uid"] = sub["metadata"]["uid"].clone();
                fake.insert("installplans", p);
            }
            fake.insert("upgradepolicies", json!({
                "apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
                "metadata": {"name": "default", "namespace": ns},
                "spec": {"maxVersionJump": "minor"}
            }));
        }
        let settled = wait("every policy's status", || {
            fake.list("olmctl.dev", "upgradepolicies")
                .iter()
                .all(|p| p["status"]["conditions"][0]["status"] == "True")
        })
        .await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let loaded = status_kib(pid, "VmRSS");
        let peak = status_kib(pid, "VmHWM");
        let _ = child.kill();
        let _ = child.wait();
        println!("olmctl-operator process memory (its RSS from /proc; the API runs in this benchmark process):");
        println!("  idle (Lease held after {:.2} s):             {:>7} KiB", leased.as_secs_f64(), idle);
        println!(
            "  {} Subscriptions + {} InstallPlans, {} policies: {:>7} KiB (peak {} KiB); all evaluated {:.2} s after the writes",
            NAMESPACES * PER_NAMESPACE,
            NAMESPACES * PER_NAMESPACE,
            NAMESPACES,
            loaded,
            peak,
            settled.as_secs_f64()
        );
        println!("  ratio loaded / idle: {:.2}x", loaded as f64 / idle.max(1) as f64);
    });
}
