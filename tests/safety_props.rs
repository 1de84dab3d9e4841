//! Property tests for the upgrade-safety layer: policy and range parsing never panic, and the
//! path fixpoints terminate and are deterministic on random graphs (cycles included).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use olmctl::bundle::load::{BundleDir, Manifest};
use olmctl::checks::safety::walk::{Edge, check_package, histories};
use olmctl::checks::safety::{Facts, K8sRange, Options};
use olmctl::graph::EdgeKind;
use proptest::prelude::*;

fn doc(text: &str) -> olmctl::fbc::node::Node {
    let mut docs = Vec::new();
    olmctl::fbc::yaml::parse_documents(text, |d| docs.push(d)).expect("yaml");
    docs.remove(0)
}

/// An in-memory bundle `demo.v1.<i>.0` whose CRD has versions `(served, storage, deprecated)`.
fn bundle(i: usize, versions: &[(bool, bool, bool)]) -> BundleDir {
    let mut crd = String::from(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.d.io}\nspec:\n  group: d.io\n  names: {kind: W, plural: ws}\n  scope: Namespaced\n  versions:\n",
    );
    for (j, (served, storage, deprecated)) in versions.iter().enumerate() {
        crd.push_str(&format!("  - {{name: v{j}, served: {served}, storage: {storage}, deprecated: {deprecated}, schema: {{openAPIV3Schema: {{type: object, properties: {{f{j}: {{type: string}}}}}}}}}}\n"));
    }
    let csv = format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {{name: demo.v1.{i}.0}}\nspec: {{version: 1.{i}.0}}\n"
    );
    let file = |n: &str| -> Arc<Path> {
        Arc::from(PathBuf::from(format!("b{i}/manifests/{n}")).as_path())
    };
    BundleDir {
        dir: PathBuf::from(format!("b{i}")),
        manifests: vec![
            Manifest {
                path: file("csv.yaml"),
                docs: vec![doc(&csv)],
            },
            Manifest {
                path: file("crd.yaml"),
                docs: vec![doc(&crd)],
            },
        ],
        skipped: Vec::new(),
        annotations: None,
        dependencies: None,
        properties: None,
        problems: Vec::new(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn policy_and_ranges_never_panic(text in ".{0,200}") {
        let _ = olmctl::codes::parse_policy(&text);
        let _ = K8sRange::parse(&text);
    }

    #[test]
    fn policy_keys_with_odd_values_are_errors_not_panics(key in prop::sample::select(vec!["allowMajorUpgrades", "k8sVersion", "crdify", "severity", "x"]), value in "[-a-z0-9.:{}\\[\\] ]{0,20}") {
        let _ = olmctl::codes::parse_policy(&format!("{key}: {value}\n"));
    }

    #[test]
    fn path_fixpoints_terminate_and_are_deterministic(
        flags in prop::collection::vec(prop::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 0..4), 1..7),
        raw_edges in prop::collection::vec((0usize..7, 0usize..7), 0..20),
    ) {
        let dirs: Vec<BundleDir> = flags.iter().enumerate().map(|(i, v)| bundle(i, v)).collect();
        let n = dirs.len();
        let facts: BTreeMap<String, Facts<'_>> = dirs.iter().map(Facts::of).map(|f| (f.name.clone(), f)).collect();
        let edges: Vec<Edge> = raw_edges
            .iter()
            .filter(|(a, b)| a < &n && b < &n && a != b)
            .map(|(a, b)| Edge {
                from: format!("demo.v1.{a}.0"),
                to: format!("demo.v1.{b}.0"),
                kinds: BTreeSet::from([EdgeKind::Replaces]),
                channels: BTreeSet::new(),
                v0: true,
            })
            .collect();
        let h1 = histories(&facts, &edges);
        let h2 = histories(&facts, &edges);
        prop_assert_eq!(&h1, &h2);
        // Every bundle's own storage versions are in its history, and deprecation marks are
        // at least its own.
        for (name, f) in &facts {
            let h = &h1[name];
            for c in &f.crds {
                for v in c.storage() {
                    prop_assert!(h.stored.get(c.name).is_some_and(|m| m.contains_key(v.name)));
                }
                for v in c.versions.iter().filter(|v| v.deprecated) {
                    prop_assert!(h.deprecated.get(c.name).is_some_and(|d| d.contains(v.name)));
                }
            }
        }
        let a = check_package("demo", &facts, &edges, &Options::default());
        let b = check_package("demo", &facts, &edges, &Options::default());
        prop_assert_eq!(a.findings, b.findings);
        prop_assert_eq!(a.checked, edges.len());
    }
}
