//! `olmctl status` on a namespace a stranger filled (issue 39 §13): 1,200 Subscriptions, one
//! with a 1 MB `spec.channel`. Before, every row was padded to the widest cell (a 1.2 GB
//! table) and the Subscriptions came in one LIST; now a cell shows at most
//! `MAX_CELL` characters (an ellipsis says it was cut) and lists come 500 at a time, as kubectl
//! pages them (`limit`, `continue`).

#![cfg(unix)]

mod common;

use common::bounded::run_env;
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use serde_json::{Value, json};

const MB: u64 = 1 << 20;

#[test]
fn a_huge_cell_is_cut_and_lists_are_paged() {
    let api = ApiServer::new();
    olmctl_testkit::fixtures::install_olm_crds(&api);
    api.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "many"}}),
    );
    let huge = "c".repeat(1 << 20);
    for i in 0..1200 {
        let channel = if i == 7 {
            huge.clone()
        } else {
            "stable".to_string()
        };
        api.insert(
            "subscriptions",
            json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                "metadata": {"name": format!("sub-{i:04}"), "namespace": "many"},
                "spec": {"name": format!("pkg-{i}"), "channel": channel, "source": "s", "sourceNamespace": "olm"}}),
        );
    }
    let server = api.serve_tls_on_loopback();
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, kubeconfig(&server, ADMIN_TOKEN, "many")).expect("kubeconfig");
    let env = [
        ("KUBECONFIG", kc.to_str().expect("utf-8")),
        ("HOME", dir.path().to_str().expect("utf-8")),
    ];
    let r = run_env(&["status"], &env);
    assert_eq!(r.bounded(200 * MB), 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1201);
    assert!(r.stdout.len() < 600_000, "{} bytes", r.stdout.len());
    let row = lines
        .iter()
        .find(|l| l.starts_with("sub-0007 "))
        .expect("the row");
    let cell = row.split_whitespace().nth(2).expect("channel");
    assert_eq!(cell, format!("{}…", "c".repeat(255)));
    // Every other row is as wide as the cut cell makes it, not a megabyte.
    assert!(lines.iter().all(|l| l.chars().count() < 400));
    // Three pages of Subscriptions (and one each of CSVs and InstallPlans), 500 at a time.
    let lists: Vec<String> = api
        .log()
        .into_iter()
        .filter(|l| l.uri.contains("/subscriptions?"))
        .map(|l| l.uri)
        .collect();
    assert_eq!(lists.len(), 3, "{lists:?}");
    assert!(lists.iter().all(|u| u.contains("limit=500")), "{lists:?}");
    assert!(!lists[0].contains("continue=") && lists[1..].iter().all(|u| u.contains("continue=")));
    // JSON keeps every value whole.
    let r = run_env(&["status", "-o", "json"], &env);
    assert_eq!(r.bounded(200 * MB), 0, "{}", r.stderr);
    let rows: Vec<Value> = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(rows.len(), 1200);
    assert_eq!(rows[7]["channel"].as_str().map(str::len), Some(1 << 20));
}
