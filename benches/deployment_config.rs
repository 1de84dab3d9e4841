//! `--deployment-config` benchmark (`cargo bench --bench deployment_config`, `harness = false`):
//! `olmv1::deployment_config::apply` with lists of 10,000 and 20,000 entries, each list on its
//! own (env and volumeMounts merged by name, envFrom and tolerations appended unless equal,
//! volumes merged by name), onto a Deployment of two containers that already hold half as many
//! entries, half of which the config replaces or repeats. The baseline, in the same run, is
//! cloning the Deployment and the config (what any apply costs at least). Medians of 11 runs;
//! a merge that grows linearly shows a 20k/10k ratio near 2 (a quadratic one near 4). Nothing
//! asserts on time; every run checks the merged list's length.

use std::time::Instant;

use olmctl::olmv1::deployment_config::apply;
use serde_json::{Value, json};

const RUNS: usize = 11;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Entry `i` of a list of `key`: names (or whole items) from `i`.
fn entry(key: &str, i: usize) -> Value {
    match key {
        "env" => json!({"name": format!("VAR_{i}"), "value": format!("v{i}")}),
        "envFrom" => json!({"configMapRef": {"name": format!("cm-{i}")}}),
        "volumes" => json!({"name": format!("vol-{i}"), "emptyDir": {}}),
        "volumeMounts" => json!({"name": format!("vol-{i}"), "mountPath": format!("/m/{i}")}),
        _ => json!({"key": format!("k{i}"), "operator": "Exists", "effect": "NoSchedule"}),
    }
}

/// A Deployment whose containers (or pod, for volumes and tolerations) hold `n / 2` entries
/// `0..n/2` of `key`, and a config of `n` entries `n/4..n/4+n`: a quarter of the Deployment's
/// entries are replaced or repeated, the rest of the config is new.
fn case(key: &str, n: usize) -> (Value, Value, usize) {
    let have: Vec<Value> = (0..n / 2).map(|i| entry(key, i)).collect();
    let config: Vec<Value> = (n / 4..n / 4 + n).map(|i| entry(key, i)).collect();
    let container = |name: &str| {
        let mut c = json!({"name": name, "image": "x"});
        if key != "volumes" && key != "tolerations" {
            c[key] = json!(have);
        }
        c
    };
    let mut pod = json!({"containers": [container("a"), container("b")]});
    if key == "volumes" || key == "tolerations" {
        pod[key] = json!(have);
    }
    let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                     "spec": {"template": {"metadata": {}, "spec": pod}}});
    (dep, json!({ key: config }), n / 4 + n)
}

/// The merged list of `key` in `dep` (the first container's, for container lists).
fn merged_len(dep: &Value, key: &str) -> usize {
    let pod = &dep["spec"]["template"]["spec"];
    let l = if key == "volumes" || key == "tolerations" {
        &pod[key]
    } else {
        &pod["containers"][0][key]
    };
    l.as_array().map_or(0, Vec::len)
}

/// Median seconds of applying `config` to a fresh copy of `dep`, and of the copies alone.
fn time(dep: &Value, config: &Value, key: &str, want: usize) -> (f64, f64) {
    let mut applied = Vec::new();
    let mut copied = Vec::new();
    for _ in 0..RUNS {
        let s = Instant::now();
        let (d, c) = std::hint::black_box((dep.clone(), config.clone()));
        copied.push(s.elapsed().as_secs_f64());
        let mut d = d;
        let s = Instant::now();
        apply(&mut d, &c);
        applied.push(s.elapsed().as_secs_f64());
        assert_eq!(merged_len(&d, key), want, "{key}: merged length");
    }
    (median(applied), median(copied))
}

fn main() {
    println!("deploymentConfig applied to a Deployment of 2 containers (median of {RUNS} runs):");
    println!(
        "| list | apply 10k | apply 20k | 20k/10k | copy 10k (baseline) | copy 20k | 20k/10k |"
    );
    println!("|---|---|---|---|---|---|---|");
    for key in ["env", "envFrom", "volumes", "volumeMounts", "tolerations"] {
        let mut row = Vec::new();
        for n in [10_000, 20_000] {
            let (dep, config, want) = case(key, n);
            row.push(time(&dep, &config, key, want));
        }
        println!(
            "| {key} | {:.1} ms | {:.1} ms | {:.2} | {:.1} ms | {:.1} ms | {:.2} |",
            row[0].0 * 1e3,
            row[1].0 * 1e3,
            row[1].0 / row[0].0,
            row[0].1 * 1e3,
            row[1].1 * 1e3,
            row[1].1 / row[0].1
        );
    }
}
