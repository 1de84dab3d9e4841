//! Upgrade safety on every fixture package's full bundle history: the edges of the v4.18
//! catalog where it has the package, else the CSVs' replaces/skips/olm.skipRange (and version
//! order per channel for semver-mode packages). No panic, a table of findings by code, and the
//! error-level hazards cross-checked against the files.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use olmctl::checks::safety::Options;
use olmctl::checks::safety::walk::{check_history, load_package};
use olmctl::diag::{Finding, Severity};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures")
}

struct Walk {
    findings: Vec<Finding>,
    checked: usize,
    packages: usize,
    with_catalog: usize,
}

fn walk() -> Walk {
    let f = fixtures();
    let cat = olmctl::fbc::load::load(&[f.join("catalogs/v4.18")]).expect("catalog loads");
    let graphs = olmctl::graph::CatalogGraphs::build(&cat.cfg, None);
    let mut pkgs: Vec<PathBuf> = std::fs::read_dir(f.join("operators"))
        .expect("operators")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    pkgs.sort();
    let mut w = Walk {
        findings: Vec::new(),
        checked: 0,
        packages: pkgs.len(),
        with_catalog: 0,
    };
    let opts = Options::default();
    for pkg in &pkgs {
        let (dirs, semver) = load_package(pkg).expect("package loads");
        let (name, r, used_catalog) = check_history(&dirs, semver, Some(&graphs), "", &opts);
        w.with_catalog += usize::from(used_catalog);
        // The v4.18 catalog has every bundle of these packages.
        assert_eq!(
            r.unchecked, 0,
            "{name}: {} edges without contents",
            r.unchecked
        );
        w.checked += r.checked;
        w.findings.extend(r.findings);
    }
    w
}

#[test]
fn every_fixture_history() {
    let w = walk();
    assert_eq!((w.packages, w.with_catalog), (24, 12));
    let mut table: BTreeMap<(&str, Severity), (usize, BTreeSet<&str>)> = BTreeMap::new();
    for f in &w.findings {
        let e = table.entry((f.code, f.severity)).or_default();
        e.0 += 1;
        e.1.insert(f.subject.package.as_deref().unwrap_or(""));
    }
    let mut text = format!(
        "{} edges checked\ncode     severity  findings  packages\n",
        w.checked
    );
    for ((code, sev), (n, pkgs)) in &table {
        text.push_str(&format!(
            "{code:<8} {:<9} {n:>8}  {}\n",
            sev.as_str(),
            pkgs.len()
        ));
    }
    println!("{text}");
    assert!(w.checked > 400, "{text}");

    // CRV001: every "removes version X" names a version that the new CRD file really lacks
    // and an older bundle of the package really stored.
    let crv001: Vec<&Finding> = w.findings.iter().filter(|f| f.code == "CRV001").collect();
    assert!(!crv001.is_empty(), "{text}");
    for f in &crv001 {
        let v = f
            .message
            .split("removes version ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .expect("version in message");
        let file = &f.location.as_ref().expect("location").file;
        let crd = std::fs::read_to_string(file).expect("crd file");
        assert!(
            !crd.lines()
                .any(|l| l.trim() == format!("name: {v}") || l.trim() == format!("- name: {v}")),
            "{v} is in {}",
            file.display()
        );
        assert_eq!(
            f.subject.package.as_deref(),
            Some("percona-xtradb-cluster-operator")
        );
    }
    // The percona 1.15.0 CRD dropped the 1.9-1.11 storage versions.
    assert!(crv001.iter().any(|f| f.message.starts_with(
        "percona-xtradb-cluster-operator.v1.14.0 -> percona-xtradb-cluster-operator.v1.15.0"
    ) && f.message.contains("removes version v1-9-0")));

    // CRV007: dapr 0.0.3-0.0.5 ship subscriptions.dapr.io with Webhook conversion to a
    // service in namespace "replaceme" and the CSV declares no conversion webhook.
    let crv007: BTreeSet<&str> = w
        .findings
        .iter()
        .filter(|f| f.code == "CRV007")
        .filter_map(|f| f.subject.bundle.as_deref())
        .collect();
    assert_eq!(
        crv007,
        BTreeSet::from([
            "dapr-kubernetes-operator.v0.0.3",
            "dapr-kubernetes-operator.v0.0.4",
            "dapr-kubernetes-operator.v0.0.5"
        ])
    );
    for b in &crv007 {
        let v = b.trim_start_matches("dapr-kubernetes-operator.v");
        let crd = std::fs::read_to_string(fixtures().join(format!(
            "operators/dapr-kubernetes-operator/{v}/manifests/dapr.io_subscriptions.yaml"
        )))
        .expect("crd");
        assert!(crd.contains("strategy: Webhook") && crd.contains("namespace: replaceme"));
    }

    // No finding is about a bundle outside its package, and every error has a location.
    for f in &w.findings {
        if f.severity == Severity::Error {
            assert!(f.location.is_some(), "{f:#?}");
        }
    }
}

/// Same input, same findings.
#[test]
fn deterministic() {
    let a = walk().findings;
    let b = walk().findings;
    assert_eq!(a, b);
}
