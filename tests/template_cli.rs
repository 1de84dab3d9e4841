//! `catalog template` on small hand-written templates: the output, and every refusal (exit 2,
//! file and line, nothing on stdout).

mod common;

use std::path::Path;

use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use common::write_tree;

fn olmctl(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_olmctl"))
        .args(args)
        .output()
        .expect("run")
}

/// A directory with the demo bundle under `b/`, the template `t.yaml` and a map naming the
/// demo bundle as `quay.io/demo/bundle:1`.
fn setup(template: &str) -> tempfile::TempDir {
    write_tree(&[
        ("b/manifests/demo.clusterserviceversion.yaml", CSV),
        ("b/manifests/widgets.crd.yaml", CRD),
        ("b/metadata/annotations.yaml", ANNOTATIONS),
        ("t.yaml", template),
        ("map.yaml", "quay.io/demo/bundle:1: b\n"),
    ])
}

fn p(d: &Path, f: &str) -> String {
    d.join(f).display().to_string()
}

const BASIC: &str = "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: demo\n  defaultChannel: stable\n- schema: olm.channel\n  package: demo\n  name: stable\n  entries:\n  - name: demo.v1.2.0\n- schema: olm.bundle\n  image: quay.io/demo/bundle:1\n";

#[test]
fn basic_template_renders_bundles_from_the_map() {
    let d = setup(BASIC);
    let o = olmctl(&[
        "catalog",
        "template",
        &p(d.path(), "t.yaml"),
        "--bundles",
        &p(d.path(), "map.yaml"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).expect("utf-8");
    // Canonical order: package, channel, bundle; the bundle rendered with the template's image
    // and, without a migration, its manifests as olm.bundle.object.
    let pkg = out.find("schema: olm.package").expect("package");
    let ch = out.find("schema: olm.channel").expect("channel");
    let b = out.find("schema: olm.bundle").expect("bundle");
    assert!(pkg < ch && ch < b, "{out}");
    assert!(out.contains("image: quay.io/demo/bundle:1\n"), "{out}");
    assert!(out.contains("type: olm.bundle.object"), "{out}");
    assert!(!out.contains("olm.csv.metadata"), "{out}");
    // The output is canonical: catalog fmt --check accepts it.
    let cat = write_tree(&[("demo/catalog.yaml", &out)]);
    let o = olmctl(&[
        "catalog",
        "fmt",
        &cat.path().display().to_string(),
        "--check",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // With the migration: olm.csv.metadata, no objects.
    let o = olmctl(&[
        "catalog",
        "template",
        &p(d.path(), "t.yaml"),
        "--bundles",
        &p(d.path(), "map.yaml"),
        "--migrate-level",
        "bundle-object-to-csv-metadata",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).expect("utf-8");
    assert!(out.contains("\"olm.csv.metadata\""), "{out}");
    assert!(!out.contains("olm.bundle.object"), "{out}");
}

#[track_caller]
fn refused(template: &str, with_map: bool, needles: &[&str]) {
    let d = setup(template);
    let t = p(d.path(), "t.yaml");
    let map = p(d.path(), "map.yaml");
    let cache = p(d.path(), "cache");
    let mut args = vec![
        "catalog",
        "template",
        t.as_str(),
        "--plain-http",
        "--retries",
        "0",
        "--cache-dir",
        cache.as_str(),
    ];
    if with_map {
        args.extend(["--bundles", map.as_str()]);
    }
    let o = olmctl(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty(), "nothing is written");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
}

#[test]
fn bad_templates_are_refused_with_file_and_line() {
    refused(
        "entries: []\n",
        true,
        &[
            "t.yaml:1:1:",
            "template input missing required 'schema' field",
        ],
    );
    refused(
        "schema: olm.template.composite\n",
        true,
        &[
            "t.yaml:1:9:",
            "unknown template schema: olm.template.composite",
        ],
    );
    refused(
        &BASIC.replace("  image: quay.io/demo/bundle:1\n", "  image: quay.io/demo/bundle:1\n  package: demo\n  properties: [{type: olm.package, value: {packageName: demo, version: 1.2.0}}]\n"),
        true,
        &["t.yaml:11:3:", "unexpected fields present in basic template bundle: package, properties"],
    );
    refused(
        &format!("{BASIC}- schema: olm.bundle\n  image: quay.io/demo/other:2\n"),
        true,
        &["t.yaml:14:10:", "quay.io/demo/other:2"],
    );
    refused(
        "schema: olm.template.basic\nentries: {a: 1}\n",
        true,
        &["t.yaml:2:10:", "entries must be a list"],
    );
    refused(
        "schema: olm.template.basic\nentries:\n- schema: olm.channel\n  name: [x]\n",
        true,
        &["t.yaml:4:9:", "name"],
    );
    // Semver templates are decoded strictly.
    refused(
        "schema: olm.semver\nstable:\n  bundles:\n  - image: quay.io/demo/bundle:1\ninvalid: 1\n",
        true,
        &["t.yaml:5:1:", "json: unknown field \"invalid\""],
    );
    refused(
        "schema: olm.semver\ngenerateMajorChannels: true\ndefaultChannelTypePreference: minor\n",
        true,
        &["t.yaml:3:31:", "schema attribute mismatch"],
    );
    // Without a map the image is pulled: an unreachable registry is an error naming the line.
    refused(
        &BASIC.replace("quay.io/demo/bundle:1", "127.0.0.1:9/demo/bundle:1"),
        false,
        &["t.yaml:12:10:", "127.0.0.1:9/demo/bundle:1"],
    );
}
