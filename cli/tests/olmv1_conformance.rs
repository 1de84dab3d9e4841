//! `bundle render --olmv1` against operator-controller's own renderer: every fixture bundle in
//! every configuration recorded in `shared/fixtures/olmv1-render` renders to the recorded
//! objects (compared as data, in upstream's order), or is refused with upstream's reason.
//!
//! Two orders upstream leaves to Go's map iteration are compared as sets: the ServiceAccounts
//! (`generators.go :: BundleCSVServiceAccountGenerator` lists a `sets.Set`) and the
//! cert-manager Issuer and Certificate of each webhook deployment
//! (`CertProviderResourceGenerator`, likewise); olmctl writes both sorted by name.

mod common;

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;

use common::cli::{code, olmctl};

fn recorded() -> PathBuf {
    common::shared_fixtures().join("olmv1-render")
}

/// The objects with the runs upstream orders at random put in name order.
fn in_stable_order(objs: &[Value]) -> Vec<Value> {
    let kind = |o: &Value| o["kind"].as_str().unwrap_or_default().to_string();
    let name = |o: &Value| {
        o["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let sas = objs
        .iter()
        .take_while(|o| kind(o) == "ServiceAccount")
        .count();
    let certs = objs
        .iter()
        .rev()
        .take_while(|o| matches!(kind(o).as_str(), "Issuer" | "Certificate"))
        .count();
    let mut out: Vec<Value> = objs[..sas].to_vec();
    out.sort_by_key(name);
    out.extend_from_slice(&objs[sas..objs.len() - certs]);
    // Each webhook deployment's Issuer and Certificate, in that order.
    let mut pairs: Vec<&[Value]> = objs[objs.len() - certs..].chunks(2).collect();
    pairs.sort_by_key(|p| p.last().map(name));
    out.extend(pairs.into_iter().flatten().cloned());
    out
}

/// One recorded case against `bundle render --olmv1`: `None` when they agree, else what
/// differs.
fn compare(file: &str) -> Option<String> {
    let text = std::fs::read_to_string(recorded().join(file)).expect("recorded case");
    let case: Value = serde_json::from_str(&text).expect("recorded JSON");
    let bundle = common::shared_fixtures()
        .join("operators")
        .join(case["bundle"].as_str().expect("bundle"));
    let bundle = bundle.display().to_string();
    let ns = case["install_namespace"].as_str().expect("namespace");
    let flags: Vec<&str> = case["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .map(|f| f.as_str().expect("flag"))
        .collect();
    let mut args = vec![
        "bundle",
        "render",
        "--olmv1",
        &bundle,
        "--install-namespace",
        ns,
        "-o",
        "json",
    ];
    args.extend(&flags);
    let o = olmctl(&args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    match case["exit"].as_i64() {
        Some(0) => {
            if code(&o) != 0 {
                return Some(format!("{file}: upstream renders it, olmctl: {stderr}"));
            }
            let got: Vec<Value> = serde_json::from_slice(&o.stdout).expect("rendered JSON");
            let want: Vec<Value> =
                serde_json::from_value(case["objects"].clone()).expect("recorded objects");
            let (got, want) = (in_stable_order(&got), in_stable_order(&want));
            if got.len() != want.len() {
                return Some(format!(
                    "{file}: {} objects, upstream {}",
                    got.len(),
                    want.len()
                ));
            }
            got.iter().zip(&want).enumerate().find_map(|(i, (g, w))| {
                (g != w)
                    .then(|| format!("{file}: object {i} differs:\n  olmctl   {g}\n  upstream {w}"))
            })
        }
        _ => {
            // The reason as the ClusterExtension's condition shows it: without
            // controller-runtime's "terminal error: " prefix, which upstream unwraps
            // (`common_controller.go`); a line break is escaped on the terminal.
            let reason = case["error"]
                .as_str()
                .expect("error")
                .trim_start_matches("terminal error: ")
                .replace('\n', "\\n");
            let want = format!(
                "error: {bundle}: operator-controller would not install this bundle: {reason}\n"
            );
            (code(&o) != 1 || stderr != want).then(|| {
                format!(
                    "{file}: upstream refuses it with\n  {want}olmctl exits {} with\n  {stderr}",
                    code(&o)
                )
            })
        }
    }
}

#[test]
fn every_fixture_bundle_renders_as_operator_controller_renders_it() {
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(recorded().join("index.json")).expect("index.json"),
    )
    .expect("index JSON");
    let files: Vec<String> = index
        .as_array()
        .expect("index")
        .iter()
        .map(|e| e["file"].as_str().expect("file").to_string())
        .collect();
    assert!(files.len() > 900, "{}", files.len());
    let next = Mutex::new(files.iter());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let Some(f) = next.lock().expect("lock").next() else {
                        break;
                    };
                    if let Some(d) = compare(f) {
                        failures.lock().expect("lock").push(d);
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("lock");
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The renderer renders a bundle that declares dependencies (operator-controller's resolver,
/// not its renderer, refuses it from a catalog): the objects, and a warning that says so.
#[test]
fn a_bundle_with_dependencies_is_rendered_with_a_warning() {
    let bundle = common::shared_fixtures().join("operators/cluster-aas-operator/0.0.1");
    let b = bundle.display().to_string();
    let o = olmctl(&[
        "bundle",
        "render",
        "--olmv1",
        &b,
        "--install-namespace",
        "olmv1-system",
        "-o",
        "json",
    ]);
    assert_eq!(code(&o), 0);
    let objs: Vec<Value> = serde_json::from_slice(&o.stdout).expect("json");
    assert!(objs.iter().any(|x| x["kind"] == "Deployment"));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "warning: {b}: operator-controller's resolver would not install this bundle from a catalog: bundle \"cluster-aas-operator.v0.0.1\" has a dependency declared via property \"olm.gvk.required\" which is currently not supported; these are the objects its renderer makes of it\n"
        )
    );
}
