//! `olmctl resolve` without -f and `olmctl status --explain`: the namespace read from the API
//! double over TLS (read-only), the CatalogSource's content given with --catalog; the same
//! answer as from files.

#![cfg(unix)]

mod common;

use common::bounded::{Run, run_env};
use common::fixture_catalog;
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use serde_json::{Value, json};

/// The API double over TLS with `objects` (plural, object), and the environment that points a
/// run at it.
fn cluster(objects: &[(&str, Value)]) -> (ApiServer, tempfile::TempDir, Vec<(String, String)>) {
    let api = ApiServer::new();
    olmctl_testkit::fixtures::install_olm_crds(&api);
    for (plural, o) in objects {
        api.insert(plural, o.clone());
    }
    let server = api.serve_tls_on_loopback();
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, kubeconfig(&server, ADMIN_TOKEN, "team")).expect("kubeconfig");
    let env = vec![
        ("KUBECONFIG".to_string(), kc.display().to_string()),
        ("HOME".to_string(), dir.path().display().to_string()),
    ];
    (api, dir, env)
}

fn namespace(ns: &str) -> (&'static str, Value) {
    (
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    )
}

fn operator_group(ns: &str) -> (&'static str, Value) {
    (
        "operatorgroups",
        json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
               "metadata": {"name": ns, "namespace": ns}}),
    )
}

fn community(priority: i64) -> (&'static str, Value) {
    (
        "catalogsources",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
               "metadata": {"name": "community", "namespace": "olm"},
               "spec": {"sourceType": "grpc", "image": "quay.io/example/catalog:v1",
                        "priority": priority}}),
    )
}

fn subscription(ns: &str, name: &str, package: &str, status: Value) -> (&'static str, Value) {
    (
        "subscriptions",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"name": package, "source": "community", "sourceNamespace": "olm"},
               "status": status}),
    )
}

fn run(env: &[(String, String)], args: &[&str]) -> Run {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = run_env(args, &env);
    assert!(!r.hung, "{r:?}");
    r
}

fn catalog_arg() -> String {
    format!("community/olm={}", fixture_catalog().display())
}

#[test]
fn the_live_namespace_resolves_as_its_files_do() {
    let (api, _dir, env) = cluster(&[
        namespace("olm"),
        namespace("team"),
        operator_group("team"),
        community(5),
        subscription(
            "team",
            "topology",
            "rabbitmq-messaging-topology-operator",
            json!({}),
        ),
    ]);
    let cat = catalog_arg();
    let r = run(
        &env,
        &["resolve", "-n", "team", "--catalog", &cat, "-o", "json"],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let doc: Value = serde_json::from_str(&r.stdout).expect("json");
    let got: Vec<(&str, &str, &str)> = doc["bundles"]
        .as_array()
        .expect("bundles")
        .iter()
        .map(|b| {
            (
                b["csv"].as_str().unwrap(),
                b["catalog"].as_str().unwrap(),
                b["new_subscription"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "rabbitmq-cluster-operator.v2.22.3",
                "community/olm",
                "rabbitmq-cluster-operator-stable-community-olm"
            ),
            (
                "rabbitmq-messaging-topology-operator.v1.19.3",
                "community/olm",
                ""
            ),
        ]
    );
    // Read-only: nothing was written.
    assert_eq!(api.list("operators.coreos.com", "subscriptions").len(), 1);
}

/// `status --explain`: a Subscription whose ResolutionFailed condition is set gets the
/// namespace resolved again from the live state, with why; a stale condition is called so.
#[test]
fn status_explains_a_resolution_failure_from_the_live_state() {
    let failed = json!({"conditions": [{"type": "ResolutionFailed", "status": "True",
        "reason": "ConstraintsNotSatisfiable",
        "message": "constraints not satisfiable: an old message"}]});
    let (_api, _dir, env) = cluster(&[
        namespace("olm"),
        namespace("team"),
        namespace("calm"),
        operator_group("team"),
        operator_group("calm"),
        community(0),
        subscription("team", "ship", "shipwright-operator", failed.clone()),
        subscription("calm", "kg", "kube-green", failed),
    ]);
    let cat = catalog_arg();
    let r = run(
        &env,
        &["status", "-n", "team", "--explain", "--catalog", &cat],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("\nSubscription team/ship: ResolutionFailed (ConstraintsNotSatisfiable): constraints not satisfiable: an old message\nOLM cannot resolve namespace team"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("with a bundle providing an API with group: operator.tekton.dev"),
        "{}",
        r.stdout
    );
    let r = run(
        &env,
        &["status", "-n", "calm", "--explain", "--catalog", &cat],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout
            .contains("namespace calm resolves now: the condition is stale"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  install  kube-green."), "{}", r.stdout);
}
