//! Upgrade-gate benchmark: decisions per second of `olmctl::gate::decide::evaluate` for the
//! example InstallPlan with 10 CRDs (each compared with its live CRD: storedVersions, served
//! versions, schemas), against two baselines in the same run: the same plan with 1 CRD, and
//! with `crdSafety: Ignore` (everything but the CRD checks: readiness, currency, content from
//! the unpacked-bundle ConfigMap, versions, windows).

use std::time::{Duration, Instant};

use jiff::Timestamp;
use olmctl::gate::decide::{Context, Verdict, evaluate};
use olmctl::gate::testing::{self as t, Doc};
use serde_json::{Value, json};

/// The example with `n` CRDs applied inline by the plan, each also live on the cluster.
fn with_crds(n: usize) -> Vec<Doc> {
    let mut docs = t::example_docs();
    let crd = t::safe_crd(&docs);
    let live = t::find(
        &mut docs,
        "CustomResourceDefinition",
        "databases.acme.example.com",
    )
    .clone();
    let steps = t::plan(&mut docs)["status"]["plan"]
        .as_array_mut()
        .expect("steps");
    steps.retain(|s| s["resource"]["kind"] != "CustomResourceDefinition");
    for i in 0..n {
        let name = format!("databases{i}.acme.example.com");
        let mut c = crd.clone();
        c["metadata"]["name"] = json!(name);
        c["spec"]["names"]["plural"] = json!(format!("databases{i}"));
        steps.push(json!({
            "resolving": "acme-db-operator.v1.5.0",
            "resource": {"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
                         "name": name, "version": "v1", "manifest": c.to_string(),
                         "sourceName": "acme-catalog", "sourceNamespace": "olm"},
            "status": "Unknown"
        }));
    }
    docs.retain(|(_, v)| v["kind"] != "CustomResourceDefinition");
    for i in 0..n {
        let mut l: Value = live.clone();
        l["metadata"]["name"] = json!(format!("databases{i}.acme.example.com"));
        l["spec"]["names"]["plural"] = json!(format!("databases{i}"));
        docs.push((format!("crd-{i}.yaml"), l));
    }
    docs
}

/// Decisions per second on a snapshot whose ConfigMaps are already decoded (`warm`: a decision
/// taken again on the same objects) and on a fresh snapshot (`cold`: the operator's case, one
/// snapshot per reconcile; the cost of copying the snapshot is measured apart and taken out).
fn rate(docs: &[Doc], crd_safety: &str) -> (f64, f64) {
    let objects = t::objects(docs);
    let policy = olmctl::gate::policy::parse(&format!(
        "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {{name: p, namespace: acme-system}}\nspec: {{maxVersionJump: minor, crdSafety: {crd_safety}}}\n"
    ))
    .expect("policy");
    let now: Timestamp = "2026-09-20T10:00:00Z".parse().expect("now");
    let kube = semver::Version::new(1, 30, 0);
    let decide = |o: &olmctl::gate::objects::Objects| {
        evaluate(&Context {
            policies: std::slice::from_ref(&policy),
            objects: o,
            now,
            kube: Some(&kube),
        })
    };
    let d = decide(&objects.clone());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].decision, Verdict::Approve, "{:#?}", d[0].reasons);
    // Median seconds per call of `f` over 5 rounds of at least 0.3 s each.
    let per_call = |f: &mut dyn FnMut()| {
        let mut rounds = Vec::new();
        for _ in 0..5 {
            let start = Instant::now();
            let mut n = 0u64;
            while start.elapsed() < Duration::from_millis(300) {
                f();
                n += 1;
            }
            rounds.push(start.elapsed().as_secs_f64() / n as f64);
        }
        rounds.sort_by(f64::total_cmp);
        rounds[2]
    };
    // `objects` stays cold (never decided on); the warm runs use their own copy.
    let warmed = objects.clone();
    let warm = per_call(&mut || {
        std::hint::black_box(decide(&warmed));
    });
    let copy = per_call(&mut || {
        std::hint::black_box(objects.clone());
    });
    let cold = per_call(&mut || {
        let o = objects.clone();
        std::hint::black_box(decide(&o));
    }) - copy;
    (1.0 / warm, 1.0 / cold)
}

fn main() {
    let ten = with_crds(10);
    let one = with_crds(1);
    println!("gate decisions per second (one InstallPlan, 2 CSVs, median of 5 rounds):");
    println!(
        "  {:<30} {:>12} {:>12}",
        "", "fresh snapshot", "same snapshot"
    );
    let mut rows = Vec::new();
    for (what, docs, crd) in [
        ("10 CRDs, crdSafety Enforce", &ten, "Enforce"),
        ("1 CRD,  crdSafety Enforce", &one, "Enforce"),
        ("10 CRDs, crdSafety Ignore", &ten, "Ignore"),
    ] {
        let (warm, cold) = rate(docs, crd);
        println!(
            "  {what:<30} {cold:>8.0}/s ({:.3} ms) {warm:>8.0}/s ({:.3} ms)",
            1000.0 / cold,
            1000.0 / warm
        );
        rows.push(cold);
    }
    println!(
        "  fresh snapshot: 10 CRDs cost {:.2}x one; the CRD checks are {:.0}% of the 10-CRD decision",
        rows[1] / rows[0],
        100.0 * (1.0 - rows[0] / rows[2])
    );
}
