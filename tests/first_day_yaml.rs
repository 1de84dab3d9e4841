//! The portworx-certified bundles of the first-day fixtures (issue 40, item 2): their 740 KB
//! StorageCluster CRD has 501 quoted scalars whose continuation lines start at their key's
//! column, which go-yaml (and so opm) reads. `bundle validate` refused the file (BND001,
//! then BND007 for the CRD it lost), `catalog render` refused the bundle, and `check upgrade
//! 24.2.1 24.2.2` reported the CRD as dropped (CRV010).

mod common;

use std::path::PathBuf;

use base64::Engine;
use olmctl::bundle::load::load_bundle;
use olmctl::bundle::render::{ObjectMode, render_dir};
use serde_json::Value;

fn portworx(version: &str) -> PathBuf {
    common::shared_fixtures()
        .join("first-day/operators/portworx-certified")
        .join(version)
}

#[test]
fn portworx_24_2_2_validates_without_losing_its_crd() {
    let b = load_bundle(&portworx("24.2.2")).expect("bundle loads");
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    let f = olmctl::checks::bundle::validate(&b);
    let lost: Vec<_> = f
        .iter()
        .filter(|f| f.code == "BND001" || f.code == "BND007")
        .collect();
    assert!(lost.is_empty(), "{lost:#?}");
}

#[test]
fn portworx_24_2_2_renders_with_its_crd_as_go_yaml_reads_it() {
    let r = render_dir(&portworx("24.2.2"), "", ObjectMode::BundleObjects).expect("renders");
    let blob: Value = serde_json::from_str(&r.blob.to_json()).expect("JSON");
    let props = blob["properties"].as_array().expect("properties");
    assert!(
        props.iter().any(|p| p["type"] == "olm.gvk"
            && p["value"]
                == serde_json::json!({"group": "core.libopenstorage.org", "kind": "StorageCluster", "version": "v1"})),
        "{props:#?}"
    );
    let crd = props
        .iter()
        .filter(|p| p["type"] == "olm.bundle.object")
        .map(|p| {
            let data = base64::engine::general_purpose::STANDARD
                .decode(p["value"]["data"].as_str().expect("data"))
                .expect("base64");
            serde_json::from_slice::<Value>(&data).expect("an object")
        })
        .find(|o| o["metadata"]["name"] == "storageclusters.core.libopenstorage.org")
        .expect("the StorageCluster CRD is rendered");
    // The description of `annotations` in the CRD's EmbeddedMetadata schemas (line 3456 of the
    // file and others): a single-quoted scalar whose continuation lines start at its key's
    // column; each line break folds to one space.
    let annotations = find_annotations_description(&crd);
    assert_eq!(
        annotations.and_then(Value::as_str),
        Some(
            "Annotations is an unstructured key value map stored with a resource that may be \
             set by external tools to store and retrieve arbitrary metadata. They are not \
             queryable and should be preserved when modifying objects. More info: \
             http://kubernetes.io/docs/user-guide/annotations"
        )
    );
}

/// The first `annotations.description` inside an `EmbeddedMetadata` schema of `v`.
fn find_annotations_description(v: &Value) -> Option<&Value> {
    match v {
        Value::Object(m) => {
            if m.get("description").and_then(Value::as_str)
                == Some("EmbeddedMetadata contains metadata relevant to an EmbeddedResource.")
                && let Some(d) = v.pointer("/properties/annotations/description")
            {
                return Some(d);
            }
            m.values().find_map(find_annotations_description)
        }
        Value::Array(a) => a.iter().find_map(find_annotations_description),
        _ => None,
    }
}

#[test]
fn portworx_upgrade_keeps_its_storagecluster_crd() {
    let old = load_bundle(&portworx("24.2.1")).expect("24.2.1 loads");
    let new = load_bundle(&portworx("24.2.2")).expect("24.2.2 loads");
    let f = olmctl::checks::safety::check_upgrade(&old, &new, &Default::default());
    let wrong: Vec<_> = f
        .iter()
        .filter(|f| {
            f.code == "BND001"
                || (f.code == "CRV010"
                    && f.message
                        .contains("storageclusters.core.libopenstorage.org"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The CRD is compared: 24.2.2's StorageCluster schema is not 24.2.1's.
    assert!(
        f.iter().any(|f| f
            .message
            .contains("storageclusters.core.libopenstorage.org")),
        "{f:#?}"
    );
}
