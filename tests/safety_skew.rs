//! Skew findings over several edges (issue 40): a skipRange fan-in is one finding naming the
//! old bundles (`a, b and 2 more -> c`), and calendar versions crossing a year are no major hop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use olmctl::bundle::load::{BundleDir, Manifest};
use olmctl::checks::safety::walk::{Edge, check_package};
use olmctl::checks::safety::{Facts, Options};
use olmctl::graph::EdgeKind;

/// An in-memory bundle `demo.v<version>` with only a CSV.
fn bundle(version: &str) -> BundleDir {
    let csv = format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {{name: demo.v{version}}}\nspec: {{version: {version}}}\n"
    );
    let mut docs = Vec::new();
    olmctl::fbc::yaml::parse_documents(&csv, |d| docs.push(d)).expect("yaml");
    BundleDir {
        dir: PathBuf::from(version),
        manifests: vec![Manifest {
            path: Arc::from(Path::new(&format!("{version}/manifests/csv.yaml"))),
            docs,
        }],
        skipped: Vec::new(),
        annotations: None,
        dependencies: None,
        properties: None,
        problems: Vec::new(),
    }
}

/// The findings of edges `froms -> to` (every version a bundle).
fn check(froms: &[&str], to: &str) -> Vec<olmctl::diag::Finding> {
    let dirs: Vec<BundleDir> = froms.iter().chain([&to]).map(|v| bundle(v)).collect();
    let facts: BTreeMap<String, Facts<'_>> = dirs
        .iter()
        .map(Facts::of)
        .map(|f| (f.name.clone(), f))
        .collect();
    let edges: Vec<Edge> = froms
        .iter()
        .map(|f| Edge {
            from: format!("demo.v{f}"),
            to: format!("demo.v{to}"),
            kinds: BTreeSet::from([EdgeKind::SkipRange]),
            channels: BTreeSet::new(),
            v0: true,
        })
        .collect();
    check_package("demo", &facts, &edges, &Options::default()).findings
}

fn codes(f: &[olmctl::diag::Finding], code: &str) -> Vec<String> {
    f.iter()
        .filter(|x| x.code == code)
        .map(|x| x.message.clone())
        .collect()
}

#[test]
fn a_major_hop_fanned_in_by_a_skip_range_is_one_finding() {
    let f = check(&["0.1.0", "0.2.0", "0.3.0", "0.4.0"], "1.0.0");
    assert_eq!(
        codes(&f, "SKW002"),
        vec![
            "demo.v0.1.0, demo.v0.2.0 and 2 more -> demo.v1.0.0: crosses major version 0 -> 1 (to 1.0.0)"
        ],
        "{f:#?}"
    );
}

#[test]
fn calendar_versions_crossing_a_year_are_no_major_hop() {
    // portworx, stackable
    for (old, new) in [
        ("24.2.1", "25.1.0"),
        ("24.11.0", "25.3.0"),
        ("2024.1.0", "2025.2.0"),
    ] {
        let f = check(&[old], new);
        assert!(codes(&f, "SKW002").is_empty(), "{old} -> {new}: {f:#?}");
    }
    // Semantic versions still are.
    assert_eq!(codes(&check(&["1.2.0"], "2.0.0"), "SKW002").len(), 1);
    assert_eq!(codes(&check(&["20.40.0"], "21.0.0"), "SKW002").len(), 1);
}
