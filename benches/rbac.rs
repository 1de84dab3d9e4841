//! Installer-RBAC benchmark (`olmctl::rbac::installer::installer_rbac`): how the derivation
//! grows with the bundle, against a baseline in the same run.
//!
//! - Entries: a CSV whose `clusterPermissions` has N entries of 5 rules (each a ClusterRole
//!   and its ClusterRoleBinding as operator-controller renders them), for N = 500 (the
//!   baseline), 1,000, 2,000 and 4,000. Linear is a ratio of N/500 (2, 4, 8); measured here
//!   (release, 2 cores): 2.3, 5.2 and 13.7, about 2.2 to 2.6 times per doubling, the maps and
//!   allocations growing with the input. The first minimisation compared every rule with every
//!   need and grew as about N^2.2 (4.6 times per doubling: 2.6 s at 500 entries, 55.5 s at 2,000).
//! - One role of N rules on one resource, each with a name of its own, for N = 250, 500 and
//!   1,000: each rule is compared with the rules that touch it (candidates looked up by name),
//!   so linear; then with one name they all share too, for N = 75, 150 and 300: every rule
//!   overlaps every other, the work grows as N² and is bounded (`MAX_COVER_WORK`).
//! - One rule of N groups, resources and names and 10 verbs (10·N³ broken-down rules), for
//!   N = 10 (the baseline), 40 and 100: answered from the rule's lists, so the time grows
//!   with the lists (N), not with their product.
//!
//! `cargo bench --bench rbac` (a release build); prints the median of 5 rounds.

use std::time::{Duration, Instant};

use olmctl::rbac::installer::{Options, installer_rbac};
use serde_json::{Value, json};

/// The objects operator-controller renders for `entries` clusterPermissions of 5 rules each.
fn entries(n: usize) -> Vec<Value> {
    let mut out = vec![json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "op", "namespace": "ops"}})];
    for e in 0..n {
        let rules: Vec<Value> = (0..5)
            .map(|k| {
                json!({"apiGroups": [format!("g{e}.example.com")],
                       "resources": [format!("r{k}"), format!("s{k}")], "verbs": ["get", "list", "watch"]})
            })
            .collect();
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": format!("op-{e}")}, "rules": rules}),
        );
        out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("op-{e}")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": format!("op-{e}")},
            "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "ops"}]}));
    }
    out
}

/// One ClusterRole with one rule of `n` groups, resources and names and 10 verbs, bound.
fn huge_rule(n: usize) -> Vec<Value> {
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
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "huge"},
            "rules": [{"apiGroups": l("g"), "resources": l("r"), "resourceNames": l("n"), "verbs": verbs}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "huge"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "huge"},
            "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "ops"}]}),
    ]
}

/// One ClusterRole of `n` rules on one resource, each limited to a name of its own (and,
/// with `shared`, to a name they all share: every rule then overlaps every other), bound.
fn one_role(n: usize, shared: bool) -> Vec<Value> {
    let rules: Vec<Value> = (0..n)
        .map(|k| {
            let mut names = vec![format!("n{k}")];
            if shared {
                names.push("common".to_string());
            }
            json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": names, "verbs": ["get", "update"]})
        })
        .collect();
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "many"}, "rules": rules}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "many"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "many"},
            "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "ops"}]}),
    ]
}

/// Median seconds of one derivation over 5 rounds (each at least 0.2 s or one call).
fn seconds(objects: &[Value]) -> f64 {
    let opts = Options {
        namespace: "ops".into(),
        service_account: "installer".into(),
        extension: "ext".into(),
    };
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut calls = 0u32;
        while calls == 0 || start.elapsed() < Duration::from_millis(200) {
            let rbac = installer_rbac(objects, &[], &opts).expect("derived");
            assert!(rbac.len() > 2);
            calls += 1;
        }
        rounds.push(start.elapsed().as_secs_f64() / f64::from(calls));
    }
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

fn main() {
    println!("clusterPermissions entries (5 rules each):");
    let base = seconds(&entries(500));
    for n in [500, 1000, 2000, 4000] {
        let s = if n == 500 { base } else { seconds(&entries(n)) };
        println!(
            "  {n:>5} entries: {:>8.1} ms  {:>5.2}x the 500-entry baseline (linear: {:.0}x)",
            s * 1e3,
            s / base,
            n as f64 / 500.0
        );
    }
    for shared in [false, true] {
        println!(
            "one role of N rules on one resource, a name each{}:",
            if shared { " and one they share" } else { "" }
        );
        // Rules that all overlap each other are compared each with each: past a few hundred
        // they are refused (MAX_COVER_WORK), so that case is measured on fewer.
        let sizes: [usize; 3] = if shared {
            [75, 150, 300]
        } else {
            [250, 500, 1000]
        };
        let base = seconds(&one_role(sizes[0], shared));
        for n in sizes {
            let s = if n == sizes[0] {
                base
            } else {
                seconds(&one_role(n, shared))
            };
            println!(
                "  N = {n:>5}: {:>8.1} ms  {:>5.2}x N = {} (linear: {:.0}x)",
                s * 1e3,
                s / base,
                sizes[0],
                n as f64 / sizes[0] as f64
            );
        }
    }
    println!("one rule of N groups, resources, names and 10 verbs:");
    let base = seconds(&huge_rule(10));
    for n in [10, 40, 100] {
        let s = if n == 10 {
            base
        } else {
            seconds(&huge_rule(n))
        };
        println!(
            "  N = {n:>3} ({:>10} broken-down rules): {:>8.3} ms  {:>6.2}x N = 10",
            10 * n * n * n,
            s * 1e3,
            s / base
        );
    }
}
