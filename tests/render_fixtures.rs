//! `catalog render` against the real catalog: every fixture bundle directory whose package is in
//! the v4.18 catalog, rendered with the image the catalog uses, gives the catalog's `olm.bundle`
//! blob (compared as parsed data, lists in order).

mod common;

use std::collections::HashMap;

use olmctl::bundle::render::{ObjectMode, render_dir};
use olmctl::fbc::node::Node;

/// The blob as comparable JSON: everything in order (opm sorts `relatedImages` by image after
/// rendering, operator-registry `alpha/action/render.go`, so its order is deterministic).
fn comparable(blob: &Node) -> String {
    blob.to_json()
}

#[test]
fn rendered_bundles_equal_the_catalog() {
    let loaded = olmctl::fbc::load::load(&[common::fixture_catalog()]).expect("catalog");
    // Catalog bundles by name, as raw blobs re-read from their files.
    let mut catalog: HashMap<String, Node> = HashMap::new();
    for pkg in std::fs::read_dir(common::fixture_catalog()).expect("dir") {
        let f = pkg.expect("entry").path().join("catalog.yaml");
        let text = std::fs::read_to_string(&f).expect("read");
        olmctl::fbc::yaml::parse_documents(&text, |n| {
            if olmctl::bundle::load::str_at(&n, &["schema"]) == Some("olm.bundle") {
                let name = olmctl::bundle::load::str_at(&n, &["name"]).expect("name");
                catalog.insert(name.to_string(), n.clone());
            }
        })
        .expect("yaml");
    }
    let packages: std::collections::HashSet<&str> = loaded
        .cfg
        .packages
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    let (mut matched, mut total) = (0, 0);
    let mut mismatches = Vec::new();
    for (pkg, dir) in common::fixture_bundle_dirs() {
        if !packages.contains(pkg.as_str()) {
            continue;
        }
        // The catalog bundle of this directory: same CSV name.
        let probe = render_dir(&dir, "", ObjectMode::BundleObjects).expect("renders");
        let Some(want) = catalog.get(&probe.name) else {
            continue; // not in the 4.18 index
        };
        total += 1;
        let image = olmctl::bundle::load::str_at(want, &["image"]).expect("image");
        let got = render_dir(&dir, image, ObjectMode::CsvMetadata).expect("renders");
        if comparable(&got.blob) == comparable(want) {
            matched += 1;
        } else {
            mismatches.push(dir.display().to_string());
        }
    }
    println!("render: {matched} of {total} bundle directories equal the catalog blob");
    assert!(total > 100, "fixture coverage: {total}");
    assert_eq!(mismatches, Vec::<String>::new(), "{matched}/{total}");
}
