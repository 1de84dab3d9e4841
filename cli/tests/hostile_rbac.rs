//! RBAC rules written to be expensive (issue 39 §3, §4): a 4 KB CSV whose one rule has 100
//! apiGroups, resources and resourceNames and 10 verbs breaks down into ten million rules
//! (Kubernetes' `BreakdownRule`), and a CSV of 2,000 clusterPermissions entries made the
//! installer's minimisation compare every rule with every need. Each command runs as a child
//! under an address-space limit and a watchdog (`common::bounded`), its peak RSS checked.

#![cfg(unix)]

mod common;

use common::bounded::{Run, run};
use common::cli::p;
use serde_json::{Value, json};

const ANNOTATIONS: &str = "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: big\n  operators.operatorframework.io.bundle.channels.v1: stable\n";

/// A bundle whose CSV has these clusterPermissions.
fn bundle(cluster_permissions: Value) -> tempfile::TempDir {
    let csv = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": "big.v1.0.0"},
        "spec": {"version": "1.0.0", "displayName": "Big",
            "installModes": [{"type": "AllNamespaces", "supported": true}, {"type": "OwnNamespace", "supported": true},
                             {"type": "SingleNamespace", "supported": true}, {"type": "MultiNamespace", "supported": false}],
            "install": {"strategy": "deployment", "spec": {"clusterPermissions": cluster_permissions,
                "deployments": [{"name": "big", "spec": {"selector": {"matchLabels": {"app": "big"}},
                    "template": {"metadata": {"labels": {"app": "big"}},
                        "spec": {"serviceAccountName": "big", "containers": [{"name": "m", "image": "quay.io/x/y:v1"}]}}}}]}}}});
    // One line per key, so that the rule has a line of its own to be named by.
    let text = serde_json::to_string_pretty(&csv).expect("csv");
    common::write_tree(&[
        ("metadata/annotations.yaml", ANNOTATIONS),
        ("manifests/csv.yaml", &text),
    ])
}

fn huge_rule(n: usize) -> Value {
    let l = |p: &str| (0..n).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
    let verbs = [
        "get",
        "list",
        "watch",
        "create",
        "update",
        "patch",
        "delete",
        "deletecollection",
        "use",
        "approve",
    ];
    json!([{"serviceAccountName": "big",
        "rules": [{"apiGroups": l("g"), "resources": l("r"), "resourceNames": l("n"), "verbs": verbs}]}])
}

/// `bundle installer-rbac` of `b` into namespace `ops`, with `extra` arguments.
fn installer_rbac(b: &tempfile::TempDir, extra: &[&str]) -> Run {
    let mut args = vec![
        "bundle",
        "installer-rbac",
        p(b.path()),
        "--install-namespace",
        "ops",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// `bundle installer-rbac` of `b` as JSON, run bounded under `max_rss`: the rules of the
/// ClusterRole holding what the bundle grants (`<sa>-rbac-clusterrole`).
fn granted_rules(b: &tempfile::TempDir, max_rss: u64) -> Vec<Value> {
    let r = installer_rbac(b, &["-o", "json"]);
    assert_eq!(r.bounded(max_rss), 0, "{}", r.stderr);
    let objects: Vec<Value> = serde_json::from_str(&r.stdout).expect("json");
    let grant = objects
        .iter()
        .find(|o| o["metadata"]["name"] == "big-installer-rbac-clusterrole")
        .expect("the ClusterRole holding what the bundle grants");
    grant["rules"].as_array().expect("rules").clone()
}

const MB: u64 = 1 << 20;

#[test]
fn a_rule_of_a_hundred_of_everything_is_answered_from_its_lists() {
    let b = bundle(huge_rule(100));
    let dir = p(b.path());
    // The rules as written, their review: no breakdown needed.
    let r = run(&["bundle", "permissions", dir]);
    assert_eq!(r.bounded(100 * MB), 0, "{}", r.stderr);
    assert!(r.stdout.contains("g0,g1,g2"), "{}", r.stdout);
    for olm in [&["--olmv1", "--install-namespace", "ops"][..], &[]] {
        // Listing every right one by one is bounded, and the refusal points at the rule.
        let mut args = vec!["bundle", "permissions", dir, "-o", "json"];
        args.extend_from_slice(olm);
        let r = run(&args);
        assert_eq!(r.bounded(100 * MB), 2, "{}", r.stderr);
        assert!(r.stdout.is_empty());
        let csv = b.path().join("manifests/csv.yaml");
        assert!(
            r.stderr.contains(&format!(
                "{}:",
                csv.display()
            )) && r.stderr.contains("spec.install.spec.clusterPermissions[0].rules[0]")
                && r.stderr.contains("grants 10000000 rights (100 apiGroups x 100 resources x 10 verbs x 100 resourceNames)")
                && r.stderr.contains("more than the 100000"),
            "{}",
            r.stderr
        );
    }
    // The installer's RBAC compares the rule with the rules that cover it on their lists.
    assert_eq!(
        Value::Array(granted_rules(&b, 100 * MB)),
        huge_rule(100)[0]["rules"]
    );
}

#[test]
fn installer_rbac_of_two_thousand_entries_is_derived_near_linearly() {
    // 2,000 entries of 5 rules (a 1 MB CSV); the old minimisation took 55 s in a release
    // build. Bounded by the watchdog only: the growth is measured by `cargo bench --bench rbac`.
    let entries: Vec<Value> = (0..2000)
        .map(|e| {
            let rules: Vec<Value> = (0..5)
                .map(|k| json!({"apiGroups": [format!("g{e}.io")], "resources": [format!("r{k}")], "verbs": ["get", "list", "watch"]}))
                .collect();
            json!({"serviceAccountName": format!("sa{e}"), "rules": rules})
        })
        .collect();
    let b = bundle(Value::Array(entries));
    // Every granted rule is kept (none covers another), merged by group and verbs.
    let rules = granted_rules(&b, 512 * MB);
    assert_eq!(rules.len(), 2000);
    assert_eq!(rules[0]["resources"], json!(["r0", "r1", "r2", "r3", "r4"]));
}

/// One ClusterRole (a clusterPermissions entry) of `n` rules on configmaps, each limited to a
/// name of its own, and with `shared` also to one name they all share.
fn one_role(n: usize, shared: bool) -> Value {
    let rules: Vec<Value> = (0..n)
        .map(|k| {
            let mut names = vec![format!("n{k}")];
            if shared {
                names.push("common".to_string());
            }
            json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": names, "verbs": ["get", "update"]})
        })
        .collect();
    json!([{"serviceAccountName": "big", "rules": rules}])
}

#[test]
fn a_role_of_thousands_of_rules_is_derived_or_refused_within_bounds() {
    // Each rule on a name of its own: compared only with the rules that name it.
    let b = bundle(one_role(4000, false));
    assert_eq!(granted_rules(&b, 100 * MB).len(), 4000);
    // All of them overlapping each other (a name they share): each would meet every other;
    // refused once the work passes its bound, naming the role, before memory grows with it.
    let b = bundle(one_role(2000, true));
    let r = installer_rbac(&b, &[]);
    assert_eq!(r.bounded(100 * MB), 2, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr.contains("ClusterRole big.v1.0.0-big-")
            && r.stderr.contains("overlap each other")
            && r.stderr.contains("merge the rules that overlap"),
        "{}",
        r.stderr
    );
    // It points at the bundle's file, line and rule, not only at the object made from it.
    assert!(
        r.stderr
            .contains(&format!("{}: manifests/csv.yaml:", b.path().display()))
            && r.stderr
                .contains(": spec.install.spec.clusterPermissions[0].rules[0]: ClusterRole "),
        "{}",
        r.stderr
    );
}

#[test]
fn huge_rules_beside_others_are_compared_on_their_lists() {
    let huge = huge_rule(100)[0]["rules"][0].clone();
    // The huge rule and a hundred small ones it covers: one rule is left to grant.
    let mut rules = vec![huge.clone()];
    rules.extend((0..100).map(|i| {
        json!({"apiGroups": [format!("g{i}")], "resources": [format!("r{i}")], "resourceNames": [format!("n{i}")], "verbs": ["get"]})
    }));
    let b = bundle(json!([{"serviceAccountName": "big", "rules": rules}]));
    assert_eq!(granted_rules(&b, 100 * MB), vec![huge.clone()]);
    // A hundred rules of a hundred resources and names, each on a group (or a resource) of its
    // own: looked up by group (by resource), none meets another; all are granted.
    for (field, value) in [("apiGroups", "x{i}.io"), ("resources", "only{i}")] {
        let rules: Vec<Value> = (0..100)
            .map(|i| {
                let mut r = huge.clone();
                r[field] = json!([value.replace("{i}", &i.to_string())]);
                r
            })
            .collect();
        let b = bundle(json!([{"serviceAccountName": "big", "rules": rules}]));
        let granted = granted_rules(&b, 100 * MB);
        assert_eq!(granted.len(), 100);
        assert_eq!(granted[99][field], json!([value.replace("{i}", "99")]));
    }
}
