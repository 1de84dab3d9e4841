//! The operator's RBAC is exactly what its code calls (defect K). The API double enforces the
//! rules OLM creates for the bundle under an AllNamespaces OperatorGroup: a ClusterRole and
//! binding per `clusterPermissions` entry (`resolver/rbac.go`), the lift to cluster scope of
//! owner-labelled Roles (none: the bundle has no `permissions`), and the bundle's own Role and
//! RoleBinding for the Lease, installed as they are in the install namespace, never lifted
//! (cluster.md R7.1–R7.3).
//!
//! The scenario: the operator (in-process, as its ServiceAccount) takes the Lease (owned by its
//! Deployment), removes an earlier release's finalizer, approves a plan after reading it again
//! with its CRDs and unpacked bundle, annotates the Subscription, moves the pin of an OLM v1
//! ClusterExtension the policy selects (watching extensions and catalogs, reading both again,
//! the content from catalogd's HTTP API), writes the policy's status and Events, and releases
//! the Lease on stop. With the bundle's rules no request is
//! refused; without any one verb of any one rule, some request is.

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use common::*;
use olmctl_operator::controller::LEGACY_FINALIZER;
use olmctl_operator::leader::Timing;
use olmctl_operator::run::{Options, run};
use olmctl_testkit::api::ApiServer;
use olmctl_testkit::api::rbac::UserInfo;
use serde_json::{Value, json};

/// The operator's user when installed in `ns`.
fn sa_user(ns: &str) -> String {
    format!("system:serviceaccount:{ns}:olmctl-operator")
}

/// The rules the bundle grants, one entry per (object, rule, verb).
fn verbs(rbac: &[(String, Value)]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for (i, (_, o)) in rbac.iter().enumerate() {
        for (j, r) in o["rules"].as_array().into_iter().flatten().enumerate() {
            for v in r["verbs"].as_array().into_iter().flatten() {
                out.push((i, j, v.as_str().unwrap_or_default().to_string()));
            }
        }
    }
    out
}

/// What a run keeps alive: OLM v1's doubles, the catalog's files and its HTTP server.
struct V1 {
    _olm: olmctl_testkit::olmv1::OlmV1,
    _dir: tempfile::TempDir,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for V1 {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The cluster with `rbac` granted; returns it, the operator's token, and OLM v1 (a
/// ClusterExtension at pelorus-operator 0.0.3, installed, with 0.0.4 in its catalog).
async fn cluster_with(rbac: &[(String, Value)], csv: &Value, ns: &str) -> (ApiServer, String, V1) {
    let api = cluster();
    api.use_system_clock();
    let olm = olmctl_testkit::olmv1::OlmV1::start(&api, olmctl_testkit::olmv1::Line::V1_11);
    let dir = tempfile::tempdir().expect("tempdir");
    let server = olmv1::publish(&api, &olm, dir.path(), "1", 3, 4, NS).await;
    let mut ce = olmv1::extension("0.0.3");
    ce["spec"]["namespace"] = json!(NS);
    api.insert("clusterextensions", ce);
    olm.tick();
    assert_eq!(
        olmv1::installed(&api),
        olmv1::bundle_name(3),
        "{:#?}",
        olm.steps()
    );
    api.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    );
    api.insert("clusterserviceversions", csv.clone());
    for (plural, o) in rbac {
        api.insert(plural, o.clone());
    }
    api.insert(
        "deployments",
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "olmctl-operator", "namespace": ns},
               "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}}}),
    );
    for (_, v) in safe_docs() {
        api.insert(plural(v["kind"].as_str().expect("kind")), v);
    }
    let mut p = policy(json!({"maxVersionJump": "minor",
        "clusterExtensionSelector": {"matchLabels": {"app": "pelorus"}}}));
    p["metadata"]["finalizers"] = json!([LEGACY_FINALIZER]);
    api.insert("upgradepolicies", p);
    let token = api.token_for(UserInfo::service_account(ns, "olmctl-operator"));
    (
        api,
        token,
        V1 {
            _olm: olm,
            _dir: dir,
            server,
        },
    )
}

fn denied(api: &ApiServer, ns: &str) -> Vec<String> {
    api.log()
        .into_iter()
        .filter(|l| l.user == sa_user(ns) && l.code == 403)
        .map(|l| format!("{} {}", l.method, l.uri))
        .collect()
}

/// Everything the scenario does, done.
fn done(api: &ApiServer, ns: &str) -> bool {
    let plan = api.get(OLM, "installplans", NS, PLAN).unwrap_or_default();
    let p = api
        .get("olmctl.dev", "upgradepolicies", NS, "default")
        .unwrap_or_default();
    let sub = api
        .get(OLM, "subscriptions", NS, "acme-db-operator")
        .unwrap_or_default();
    let lease = api
        .get("coordination.k8s.io", "leases", ns, "olmctl-operator")
        .unwrap_or_default();
    plan["spec"]["approved"] == true
        && p["metadata"]["finalizers"].is_null()
        && p["status"]["subscriptions"][0]["decision"] == "Approved"
        && !sub["metadata"]["annotations"]["olmctl.dev/gate-decision"].is_null()
        && !api.list("events.k8s.io", "events").is_empty()
        && lease["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
        // Renewed at least once (an update).
        && lease["spec"]["renewTime"] != lease["spec"]["acquireTime"]
        && olmv1::pin(api) == "0.0.4"
        && p["status"]["clusterExtensions"][0]["name"] == "pelorus"
}

fn state(api: &ApiServer, ns: &str) -> String {
    let p = api
        .get("olmctl.dev", "upgradepolicies", NS, "default")
        .unwrap_or_default();
    let lease = api
        .get("coordination.k8s.io", "leases", ns, "olmctl-operator")
        .unwrap_or_default();
    let log: Vec<String> = api
        .log()
        .into_iter()
        .filter(|l| l.user == sa_user(ns))
        .map(|l| format!("{} {} {}", l.code, l.method, l.uri))
        .collect();
    format!(
        "policy: {p:#}\nlease: {lease:#}\nplan approved: {}\nevents: {}\nrequests:\n{}",
        api.get(OLM, "installplans", NS, PLAN).unwrap_or_default()["spec"]["approved"],
        api.list("events.k8s.io", "events").len(),
        log.join("\n")
    )
}

/// Runs the operator as its ServiceAccount until the scenario is done, a request is refused,
/// or 20 s pass; then stops it (the Lease is released). Returns the refused requests and
/// whether the scenario was done.
async fn scenario(api: &ApiServer, token: &str, ns: &str) -> (Vec<String>, bool) {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let opts = Options {
        namespace: None,
        lease_namespace: ns.into(),
        lease_name: "olmctl-operator".into(),
        identity: "olmctl-operator-a_test".into(),
        probe_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        webhook_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        cert_dir: PathBuf::from("/nonexistent"),
        timing: Timing {
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_millis(1500),
            retry_period: Duration::from_millis(200),
        },
        resync: Duration::from_secs(600),
        lease_owner_deployment: Some("olmctl-operator".into()),
        limits: Default::default(),
        catalogd_cas_dir: None,
    };
    let client = api.client_with_token(token);
    let task = tokio::spawn(run(client, opts, async {
        let _ = stop_rx.await;
    }));
    let end = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut ok = false;
    while tokio::time::Instant::now() < end {
        if !denied(api, ns).is_empty() {
            break;
        }
        if done(api, ns) {
            // A few renewals more (Lease updates), then stop (get and update to release).
            tokio::time::sleep(Duration::from_millis(500)).await;
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = stop_tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    (denied(api, ns), ok)
}

/// The bundle's CSV as OLM stores it in `ns`.
fn csv(ns: &str) -> Value {
    let mut csv = bundle_csv_in(ns);
    csv["metadata"]["uid"] = json!("11111111-2222-4333-8444-555555555555");
    csv
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundles_rbac_is_enough_and_nothing_is_refused() {
    nothing_refused_in(OPERATOR_NS).await;
}

/// `olmctl install` puts operators in `operators` by default: the bundle's RoleBinding, which
/// OLM creates there with its subjects as the bundle wrote them, still grants the Lease (its
/// ServiceAccount subject has no namespace, so it is the binding's own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_right_follows_the_install_namespace() {
    nothing_refused_in("operators").await;
}

async fn nothing_refused_in(ns: &str) {
    let csv = csv(ns);
    let rbac = bundle_rbac_in(&csv, ns);
    let (api, token, _v1) = cluster_with(&rbac, &csv, ns).await;
    let (denied, ok) = scenario(&api, &token, ns).await;
    assert!(denied.is_empty(), "refused in {ns}: {denied:#?}");
    assert!(ok, "the scenario did not finish\n{}", state(&api, ns));
    // The Lease was released on stop, and is owned by the Deployment.
    let lease = api
        .get("coordination.k8s.io", "leases", ns, "olmctl-operator")
        .expect("lease");
    assert_eq!(lease["spec"]["holderIdentity"], "");
    assert_eq!(
        lease["metadata"]["ownerReferences"][0]["name"],
        "olmctl-operator"
    );
    // The Lease right is namespaced: nothing grants leases at cluster scope.
    let cluster_leases = api
        .list("rbac.authorization.k8s.io", "clusterroles")
        .into_iter()
        .any(|r| {
            r["rules"].as_array().into_iter().flatten().any(|x| {
                x["resources"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|v| v == "leases" || v == "*")
            }) && r["metadata"]["name"] != "cluster-admin"
                // The OLM v1 extension's own roles (pelorus's) are not the operator's.
                && r["metadata"]["labels"]["olm.operatorframework.io/owner-kind"].is_null()
        });
    assert!(!cluster_leases, "no ClusterRole grants leases");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_verb_of_every_rule_is_needed() {
    let ns = OPERATOR_NS;
    let csv = csv(ns);
    let rbac = bundle_rbac_in(&csv, ns);
    let all = verbs(&rbac);
    assert!(all.len() >= 15, "{all:?}");
    // Each verb removed in turn, a few runs at a time (each its own API and operator).
    use futures::StreamExt;
    let runs = futures::stream::iter(all.into_iter().map(|(i, j, verb)| {
        let mut less = rbac.clone();
        let what = format!(
            "{} {}: {verb} on {}",
            less[i].1["kind"].as_str().unwrap_or_default(),
            less[i].1["metadata"]["name"].as_str().unwrap_or_default(),
            less[i].1["rules"][j]["resources"]
        );
        let rule = &mut less[i].1["rules"][j];
        let left: Vec<Value> = rule["verbs"]
            .as_array()
            .expect("verbs")
            .iter()
            .filter(|v| **v != verb.as_str())
            .cloned()
            .collect();
        rule["verbs"] = json!(left);
        let csv = csv.clone();
        async move {
            let (api, token, _v1) = cluster_with(&less, &csv, ns).await;
            let (denied, ok) = scenario(&api, &token, ns).await;
            (what, denied, ok)
        }
    }))
    .buffer_unordered(5)
    .collect::<Vec<_>>()
    .await;
    for (what, denied, ok) in runs {
        assert!(
            !denied.is_empty() && !ok,
            "without {what} the scenario still passed: the verb is not needed"
        );
    }
}
