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

fn rate(docs: &[Doc], crd_safety: &str) -> (f64, usize) {
    let objects = t::objects(docs);
    let policy = olmctl::gate::policy::parse(&format!(
        "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {{name: p, namespace: acme-system}}\nspec: {{maxVersionJump: minor, crdSafety: {crd_safety}}}\n"
    ))
    .expect("policy");
    let now: Timestamp = "2026-09-20T10:00:00Z".parse().expect("now");
    let kube = semver::Version::new(1, 30, 0);
    let ctx = Context {
        policy: &policy,
        objects: &objects,
        now,
        kube: Some(&kube),
    };
    let d = evaluate(&ctx);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].decision, Verdict::Approve, "{:#?}", d[0].reasons);
    let reasons = d[0].reasons.len();
    // Median of 5 rounds of at least 0.3 s each.
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < Duration::from_millis(300) {
            std::hint::black_box(evaluate(&ctx));
            n += 1;
        }
        rounds.push(n as f64 / start.elapsed().as_secs_f64());
    }
    rounds.sort_by(f64::total_cmp);
    (rounds[2], reasons)
}

fn main() {
    let ten = with_crds(10);
    let one = with_crds(1);
    let (r10, _) = rate(&ten, "Enforce");
    let (r1, _) = rate(&one, "Enforce");
    let (r10i, _) = rate(&ten, "Ignore");
    println!("gate decisions per second (one InstallPlan, 2 CSVs, median of 5 rounds):");
    println!(
        "  10 CRDs, crdSafety Enforce: {r10:>10.0}/s  ({:.3} ms each)",
        1000.0 / r10
    );
    println!(
        "   1 CRD,  crdSafety Enforce: {r1:>10.0}/s  ({:.3} ms each)",
        1000.0 / r1
    );
    println!(
        "  10 CRDs, crdSafety Ignore:  {r10i:>10.0}/s  ({:.3} ms each)",
        1000.0 / r10i
    );
    println!(
        "  ratio 10 CRDs / 1 CRD time: {:.2}x; CRD checks' share with 10 CRDs: {:.0}%",
        r1 / r10,
        100.0 * (1.0 - r10 / r10i)
    );
}
