//! `catalog render` on hand-written bundles: each rule of opm's bundle → `olm.bundle` mapping.

mod common;

use olmctl::bundle::render::{ObjectMode, render_dir};
use olmctl::fbc::node::Node;

const ANNOTATIONS: &str = "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: demo\n  operators.operatorframework.io.bundle.channels.v1: stable\n";

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.demo.io\nspec:\n  group: demo.io\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - {name: v1, served: true, storage: true}\n  - {name: v1alpha1, served: false, storage: false}\n";

fn csv(extra_spec: &str, extra_annotations: &str) -> String {
    format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: demo.v1.2.0\n  annotations:\n    capabilities: Basic Install\n{extra_annotations}spec:\n  version: 1.2.0\n  displayName: Demo\n  customresourcedefinitions:\n    owned:\n    - {{name: widgets.demo.io, version: v1, kind: Widget, displayName: Widget}}\n    required:\n    - {{name: gadgets.other.io, version: v2, kind: Gadget}}\n  install:\n    strategy: deployment\n    spec:\n      deployments:\n      - name: demo\n        spec:\n          template:\n            spec:\n              initContainers:\n              - {{name: init, image: 'quay.io/demo/init:1'}}\n              containers:\n              - {{name: m, image: 'quay.io/demo/op:1'}}\n              - {{name: proxy, image: 'quay.io/demo/related:1'}}\n  relatedImages:\n  - {{name: related, image: 'quay.io/demo/related:1'}}\n{extra_spec}"
    )
}

fn bundle(files: &[(&str, &str)]) -> tempfile::TempDir {
    common::write_tree(files)
}

fn props(blob: &Node) -> Vec<(String, String)> {
    olmctl::bundle::load::list_at(blob, &["properties"])
        .iter()
        .map(|p| {
            (
                olmctl::bundle::load::str_at(p, &["type"])
                    .expect("type")
                    .to_string(),
                olmctl::bundle::load::field(p, &["value"])
                    .expect("value")
                    .to_json(),
            )
        })
        .collect()
}

#[test]
fn properties_follow_opm_order_and_sources() {
    let d = bundle(&[
        (
            "manifests/csv.yaml",
            &csv(
                "",
                "    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.16\"}]'\n",
            ),
        ),
        ("manifests/crd.yaml", CRD),
        ("metadata/annotations.yaml", ANNOTATIONS),
        (
            "metadata/dependencies.yaml",
            "dependencies:\n- type: olm.package\n  value: {packageName: base, version: '>=1.0.0'}\n- type: olm.gvk\n  value: {group: x.io, kind: X, version: v1}\n- type: olm.label\n  value: {label: tier=1}\n",
        ),
        (
            "metadata/properties.yaml",
            "properties:\n- type: olm.gvk\n  value: {group: extra.io, kind: E, version: v9}\n- type: com.example/custom\n  value: {b: 2, a: 1}\n",
        ),
    ]);
    let r = render_dir(
        d.path(),
        "quay.io/demo/bundle:1.2.0",
        ObjectMode::CsvMetadata,
    )
    .expect("render");
    let types: Vec<String> = props(&r.blob)
        .into_iter()
        .map(|(t, v)| format!("{t} {v}"))
        .collect();
    let csv_meta = types.last().expect("last").clone();
    assert!(csv_meta.starts_with("olm.csv.metadata {"), "{csv_meta}");
    assert_eq!(
        types[..types.len() - 1],
        [
            r#"com.example/custom {"a":1,"b":2}"#,
            r#"olm.gvk {"group":"demo.io","kind":"Widget","version":"v1"}"#,
            r#"olm.gvk {"group":"demo.io","kind":"Widget","version":"v1alpha1"}"#,
            r#"olm.gvk {"group":"extra.io","kind":"E","version":"v9"}"#,
            r#"olm.gvk.required {"group":"other.io","kind":"Gadget","version":"v2"}"#,
            r#"olm.gvk.required {"group":"x.io","kind":"X","version":"v1"}"#,
            r#"olm.label {"label":"tier=1"}"#,
            r#"olm.maxOpenShiftVersion "4.16""#,
            r#"olm.package {"packageName":"demo","version":"1.2.0"}"#,
            r#"olm.package.required {"packageName":"base","versionRange":">=1.0.0"}"#,
        ]
    );
    // CSV metadata: Go's encoding of the typed struct (provider and apiServiceDefinitions are
    // structs, so they appear even when empty; absent slices do not).
    assert!(
        csv_meta.contains(r#""apiServiceDefinitions":{}"#),
        "{csv_meta}"
    );
    assert!(csv_meta.contains(r#""provider":{}"#), "{csv_meta}");
    assert!(csv_meta.contains(r#""crdDescriptions":{"owned":[{"displayName":"Widget","kind":"Widget","name":"widgets.demo.io","version":"v1"}],"required":[{"kind":"Gadget","name":"gadgets.other.io","version":"v2"}]}"#), "{csv_meta}");
    assert!(!csv_meta.contains("installModes"));
    // relatedImages: the CSV's list, the bundle image and operator images not listed yet,
    // sorted by image as opm sorts them.
    let ri: Vec<String> = olmctl::bundle::load::list_at(&r.blob, &["relatedImages"])
        .iter()
        .map(|n| n.to_json())
        .collect();
    assert_eq!(
        ri,
        [
            r#"{"image":"quay.io/demo/bundle:1.2.0","name":""}"#,
            r#"{"image":"quay.io/demo/init:1","name":""}"#,
            r#"{"image":"quay.io/demo/op:1","name":""}"#,
            r#"{"image":"quay.io/demo/related:1","name":"related"}"#,
        ]
    );
}

#[test]
fn bundle_objects_carry_each_first_document_as_go_json() {
    let d = bundle(&[
        ("manifests/a-csv.yaml", &csv("", "")),
        // Only the first document of a file is read, as opm does.
        (
            "manifests/b-crd.yaml",
            &format!("{CRD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: ignored}}\n"),
        ),
        ("manifests/.hidden.yaml", "kind: Secret\n"),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ]);
    let r = render_dir(d.path(), "", ObjectMode::BundleObjects).expect("render");
    let objs: Vec<String> = props(&r.blob)
        .into_iter()
        .filter(|(t, _)| t == "olm.bundle.object")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(objs.len(), 2, "{objs:?}");
    // The objects come after every other property.
    let types: Vec<String> = props(&r.blob).into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        types[types.len() - 2..],
        ["olm.bundle.object", "olm.bundle.object"]
    );
    assert!(olmctl::bundle::load::str_at(&r.blob, &["image"]) == Some(""));
}

#[test]
fn unusable_bundles_are_errors_naming_the_file() {
    // An owned CRD that is not in the bundle.
    let d = bundle(&[
        ("manifests/csv.yaml", &csv("", "")),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ]);
    let e = render_dir(d.path(), "", ObjectMode::BundleObjects).expect_err("missing CRD");
    assert!(e.path.ends_with("manifests/csv.yaml"), "{e}");
    assert!(e.message.contains("widgets.demo.io v1 Widget"), "{e}");
    // No CSV.
    let d = bundle(&[
        ("manifests/crd.yaml", CRD),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ]);
    let e = render_dir(d.path(), "", ObjectMode::BundleObjects).expect_err("no CSV");
    assert!(e.message.contains("no ClusterServiceVersion"), "{e}");
    // No annotations file.
    let d = bundle(&[
        ("manifests/csv.yaml", &csv("", "")),
        ("manifests/crd.yaml", CRD),
        ("metadata/other.yaml", "x: 1\n"),
    ]);
    let e = render_dir(d.path(), "", ObjectMode::BundleObjects).expect_err("no annotations");
    assert!(e.message.contains("annotations"), "{e}");
    // Bad YAML: file, line and column.
    let d = bundle(&[
        ("manifests/csv.yaml", "a: [\n"),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ]);
    let e = render_dir(d.path(), "", ObjectMode::BundleObjects).expect_err("bad yaml");
    assert!(e.pos.line > 0, "{e}");
    // A CSV field Go cannot decode into the typed CSV.
    let d = bundle(&[
        ("manifests/csv.yaml", &csv("  keywords: notalist\n", "")),
        ("manifests/crd.yaml", CRD),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ]);
    let e = render_dir(d.path(), "q.io/a/b:1", ObjectMode::CsvMetadata).expect_err("type");
    assert!(e.message.contains("spec.keywords"), "{e}");
    // Not a bundle directory at all.
    let d = common::write_tree(&[("x.yaml", "a: 1\n")]);
    assert!(render_dir(d.path(), "", ObjectMode::BundleObjects).is_err());
}
