//! Hand-written upgrade cases, one directory per code under `tests/data/upgrade/cases/<CODE>/`:
//!
//! - the old bundle is `base/` overlaid with `old/` (whole files replaced or added);
//! - the new bundle is `base/` + `next/` (version 1.1.0 replacing 1.0.0) overlaid with `bad/` for
//!   the failing case and with `good/` for the passing one (the realistic fix);
//! - `old-good/`, when present, replaces `old/` for the passing case (fixes that belong to the
//!   old release, such as marking a version deprecated before it is removed);
//! - `policy.yaml` applies to the passing case only; `k8s-version` to both;
//! - `also` lists other codes the failing case rightly reports (CRV005's storage switch also
//!   serves two different schemas: CRV006).
//!
//! The failing case must report its code (and nothing else but `also`), at a file of the new
//! bundle, with help; the passing case must report nothing at all. Every upgrade code has a
//! case.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
mod common;

use std::process::Command;

use olmctl::bundle::load::load_bundle;
use olmctl::checks::safety::{K8sRange, Options, Policy, check_upgrade};
use olmctl::diag::{Finding, Severity};

fn data() -> PathBuf {
    common::root().join("tests/data/upgrade")
}

/// Copies every file below each of `layers` (in order, later ones win) into `dest`.
fn layer(dest: &Path, layers: &[PathBuf]) {
    for l in layers {
        if !l.is_dir() {
            continue;
        }
        let mut stack = vec![l.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read dir") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n != "README") {
                    let to = dest.join(p.strip_prefix(l).expect("below layer"));
                    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
                    std::fs::copy(&p, &to).expect("copy");
                }
            }
        }
    }
}

struct Pair {
    _tmp: tempfile::TempDir,
    old: PathBuf,
    new: PathBuf,
}

fn pair(case: &Path, old: &str, new: &str) -> Pair {
    let tmp = tempfile::tempdir().expect("tmp");
    let (o, n) = (tmp.path().join("old"), tmp.path().join("new"));
    let old_layer = if case.join(old).is_dir() { old } else { "old" };
    layer(&o, &[data().join("base"), case.join(old_layer)]);
    layer(
        &n,
        &[data().join("base"), data().join("next"), case.join(new)],
    );
    Pair {
        _tmp: tmp,
        old: o,
        new: n,
    }
}

fn check(p: &Pair, opts: &Options) -> Vec<Finding> {
    let old = load_bundle(&p.old).expect("old bundle loads");
    let new = load_bundle(&p.new).expect("new bundle loads");
    check_upgrade(&old, &new, opts)
}

fn cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data().join("cases"))
        .expect("cases")
        .map(|e| e.expect("entry").path())
        .collect();
    v.sort();
    v
}

fn show(f: &[Finding]) -> String {
    f.iter()
        .map(|x| format!("{} {}: {}", x.code, x.severity.as_str(), x.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs on a thread with the stack the CLI gives its worker: SCH013's schema nests 2,000
/// levels deep, and deep values are walked recursively.
#[test]
fn each_code_fails_on_its_bad_case_and_passes_on_its_good_case() {
    std::thread::Builder::new()
        .stack_size(olmctl::fbc::load::PARSER_STACK)
        .spawn(every_case)
        .expect("thread")
        .join()
        .expect("cases pass");
}

fn every_case() {
    let mut covered = BTreeSet::new();
    for case in cases() {
        let code = case.file_name().unwrap().to_string_lossy().into_owned();
        let target = std::fs::read_to_string(case.join("k8s-version"))
            .ok()
            .map(|t| K8sRange::parse(t.trim()).expect("k8s-version"));
        let strict = Options {
            policy: Policy::default(),
            target: target.clone(),
            target_from: None,
        };
        let bad = pair(&case, "old", "bad");
        let found = check(&bad, &strict);
        let hits: Vec<&Finding> = found.iter().filter(|f| f.code == code).collect();
        assert!(
            !hits.is_empty(),
            "{code}: not reported on bad/:\n{}",
            show(&found)
        );
        let also = std::fs::read_to_string(case.join("also")).unwrap_or_default();
        let others: Vec<&Finding> = found
            .iter()
            .filter(|f| f.code != code && !also.split_whitespace().any(|a| a == f.code))
            .collect();
        assert!(
            others.is_empty(),
            "{code}: bad/ also reports:\n{}",
            show(&found)
        );
        for h in &hits {
            let loc = h.location.as_ref().expect("location");
            assert!(
                loc.file.starts_with(&bad.new),
                "{code}: points outside the new bundle: {}",
                loc.file.display()
            );
            assert!(h.help.is_some(), "{code}: no help: {h:#?}");
        }
        let policy = match case.join("policy.yaml") {
            p if p.exists() => olmctl::codes::load_policy(&p).expect("policy"),
            _ => Policy::default(),
        };
        let good = pair(&case, "old-good", "good");
        let found = check(
            &good,
            &Options {
                policy,
                target,
                target_from: None,
            },
        );
        assert!(found.is_empty(), "{code}: good/ reports:\n{}", show(&found));
        covered.insert(code);
    }
    let mut all: BTreeSet<String> = olmctl::checks::safety::codes()
        .iter()
        .map(|c| c.code.to_string())
        // EDGE001 and EDGE002 judge a whole catalog check (an edge without its bundles, a
        // check of no edge at all), not one upgrade: safety_paths.rs covers them.
        .filter(|c| c != "EDGE001" && c != "EDGE002")
        .collect();
    all.insert("API005".into());
    assert_eq!(covered, all, "every upgrade code has a case");
}

/// The base bundles are clean: 1.0.0 -> 1.1.0 has no finding at all.
#[test]
fn base_upgrade_is_clean() {
    let tmp = tempfile::tempdir().expect("tmp");
    let new = tmp.path().join("new");
    layer(&new, &[data().join("base"), data().join("next")]);
    let old = load_bundle(&data().join("base")).expect("base");
    let new = load_bundle(&new).expect("next");
    let f = check_upgrade(&old, &new, &Options::default());
    assert!(f.is_empty(), "{}", show(&f));
}

fn olmctl(args: &[&str]) -> std::process::Output {
    Command::new(crate::common::olmctl_bin())
        .args(args)
        .output()
        .expect("olmctl runs")
}

#[test]
fn cli_outputs_and_exit_codes() {
    let case = data().join("cases/CRV001");
    let bad = pair(&case, "old", "bad");
    let (o, n) = (bad.old.to_str().unwrap(), bad.new.to_str().unwrap());
    let out = olmctl(&["check", "upgrade", o, n, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["passed"], false);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "CRV001" && f["severity"] == "error"),
        "{v:#}"
    );
    let out = olmctl(&["check", "upgrade", o, n, "-o", "sarif"]);
    assert_eq!(out.status.code(), Some(1));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).expect("sarif json");
    assert_eq!(s["version"], "2.1.0");
    let results = s["runs"][0]["results"].as_array().unwrap();
    let r = results
        .iter()
        .find(|r| r["ruleId"] == "CRV001")
        .expect("CRV001 result");
    assert_eq!(r["level"], "error");
    let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.ends_with("new/manifests/widgets.crd.yaml"), "{uri}");
    assert!(r["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64() > Some(0));
    // Text names the file and line.
    let out = olmctl(&["check", "upgrade", o, n]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[CRV001]") && text.contains("widgets.crd.yaml:"),
        "{text}"
    );

    // The passing pair exits 0.
    let good = pair(&case, "old", "good");
    let out = olmctl(&[
        "check",
        "upgrade",
        good.old.to_str().unwrap(),
        good.new.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // A bad policy file or range is a usage error naming it.
    let dir = tempfile::tempdir().unwrap();
    let pol = dir.path().join("policy.yaml");
    std::fs::write(&pol, "severity:\n  NOPE: error\n").unwrap();
    let out = olmctl(&["check", "upgrade", o, n, "--policy", pol.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("policy.yaml:2:") && err.contains("NOPE"),
        "{err}"
    );
    let out = olmctl(&["check", "upgrade", o, n, "--k8s-version", "1.31-1.28"]);
    assert_eq!(out.status.code(), Some(2));
    // A policy turning the code off makes the run pass.
    std::fs::write(&pol, "severity:\n  CRV001: off\n  CRV002: warning\n").unwrap();
    let out = olmctl(&[
        "check",
        "upgrade",
        o,
        n,
        "--policy",
        pol.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["code"] != "CRV001"),
        "{v:#}"
    );
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    // A missing bundle directory that is not an image reference either: exit 2.
    let out = olmctl(&["check", "upgrade", o, "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Warnings stay warnings: SKW003 and CRV010 do not fail a run on their own.
#[test]
fn warning_codes_do_not_fail() {
    for code in ["SKW003", "CRV010"] {
        let p = pair(&data().join("cases").join(code), "old", "bad");
        let f = check(&p, &Options::default());
        assert!(
            f.iter()
                .any(|x| x.code == code && x.severity == Severity::Warning),
            "{}",
            show(&f)
        );
        assert!(
            f.iter().all(|x| x.severity != Severity::Error),
            "{code}: {}",
            show(&f)
        );
    }
}

/// A new bundle whose files do not parse, or that has no CSV, is an error (the other checks
/// would be blind), not a silent pass.
#[test]
fn unreadable_new_bundle_is_an_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let new = tmp.path().join("new");
    layer(&new, &[data().join("base"), data().join("next")]);
    std::fs::write(
        new.join("manifests/demo.clusterserviceversion.yaml"),
        "spec: [\n",
    )
    .unwrap();
    let old = load_bundle(&data().join("base")).expect("base");
    let new = load_bundle(&new).expect("new");
    let f = check_upgrade(&old, &new, &Options::default());
    let codes: BTreeSet<&str> = f
        .iter()
        .filter(|x| x.severity == Severity::Error)
        .map(|x| x.code)
        .collect();
    assert_eq!(codes, BTreeSet::from(["BND001", "BND004"]), "{}", show(&f));
}

/// CRV006 counts only what the upgrade introduces: when the old bundle's CRD already served the
/// same two versions with different schemas and no conversion, the edge does not report it
/// again (crdify ratchets its served-version checks the same way); a new pair still counts.
#[test]
fn crv006_is_ratcheted_against_the_old_crd() {
    let case = data().join("cases/CRV006");
    let tmp = tempfile::tempdir().expect("tmp");
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    // The old release already had the problem; the new one keeps it.
    layer(&old, &[data().join("base"), case.join("bad")]);
    layer(
        &new,
        &[data().join("base"), data().join("next"), case.join("bad")],
    );
    let o = load_bundle(&old).expect("old");
    let n = load_bundle(&new).expect("new");
    let f = check_upgrade(&o, &n, &Options::default());
    assert!(
        !f.iter().any(|x| x.code == "CRV006"),
        "ratcheted: {}",
        show(&f)
    );
    // Without an old release (its own bundle checks), or from a clean one, it is reported.
    let clean = tmp.path().join("clean");
    layer(&clean, &[data().join("base")]);
    let c = load_bundle(&clean).expect("clean");
    let f = check_upgrade(&c, &n, &Options::default());
    assert!(f.iter().any(|x| x.code == "CRV006"), "{}", show(&f));
    let alone = olmctl::checks::safety::check_bundle(
        &olmctl::checks::safety::Facts::of(&n),
        &Options::default(),
    );
    assert!(alone.iter().any(|x| x.code == "CRV006"));
}
