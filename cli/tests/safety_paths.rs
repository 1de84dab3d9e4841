//! Path facts: stored versions and deprecation marks carried along upgrade paths, and
//! `olmctl check history` / `check catalog` over small package histories.

mod common;

use std::path::Path;
use std::process::Command;

/// A bundle `demo.v<v>` with one CRD whose versions are `(name, served, storage, deprecated)`;
/// `replaces` and `skip_range` give its edges.
fn bundle(
    v: &str,
    replaces: &str,
    skip_range: &str,
    versions: &[(&str, bool, bool, bool)],
) -> Vec<(String, String)> {
    let mut crd = String::from(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.demo.io\nspec:\n  group: demo.io\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n",
    );
    for (name, served, storage, deprecated) in versions {
        crd.push_str(&format!("  - {{name: {name}, served: {served}, storage: {storage}, deprecated: {deprecated}, schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}}}\n"));
    }
    let mut csv = format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: demo.v{v}\n"
    );
    if !skip_range.is_empty() {
        csv.push_str(&format!(
            "  annotations:\n    olm.skipRange: '{skip_range}'\n"
        ));
    }
    csv.push_str(&format!(
        "spec:\n  version: {v}\n  minKubeVersion: 1.28.0\n"
    ));
    if !replaces.is_empty() {
        csv.push_str(&format!("  replaces: demo.v{replaces}\n"));
    }
    csv.push_str("  installModes:\n  - {type: AllNamespaces, supported: true}\n  customresourcedefinitions:\n    owned:\n    - {name: widgets.demo.io, version: v1, kind: Widget}\n  install: {strategy: deployment, spec: {deployments: []}}\n");
    let ann = "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: demo\n  operators.operatorframework.io.bundle.channels.v1: stable\n";
    vec![
        (
            format!("demo/{v}/manifests/demo.clusterserviceversion.yaml"),
            csv,
        ),
        (format!("demo/{v}/manifests/widgets.crd.yaml"), crd),
        (
            format!("demo/{v}/metadata/annotations.yaml"),
            ann.to_string(),
        ),
    ]
}

fn run(args: &[&str]) -> (i32, serde_json::Value) {
    let o = Command::new(crate::common::olmctl_bin())
        .args(args)
        .output()
        .expect("runs");
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code().unwrap_or(-1), v)
}

fn codes(v: &serde_json::Value, code: &str) -> Vec<String> {
    v["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|f| f["code"] == code)
                .map(|f| f["message"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn tree(bundles: Vec<Vec<(String, String)>>) -> tempfile::TempDir {
    let files: Vec<(String, String)> = bundles.into_iter().flatten().collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    common::write_tree(&refs)
}

/// 1.0.0 stores v1alpha1; 1.1.0 switches storage to v1 and keeps v1alpha1 (fine); 1.2.0 drops
/// v1alpha1. The edge 1.1.0 -> 1.2.0 looks harmless on its own (1.1.0's storage is v1), but users
/// who came from 1.0.0 still have v1alpha1 in storedVersions: CRV001 names 1.0.0 as the origin.
#[test]
fn stored_versions_are_carried_along_the_path() {
    let dir = tree(vec![
        bundle("1.0.0", "", "", &[("v1alpha1", true, true, false)]),
        bundle(
            "1.1.0",
            "1.0.0",
            "",
            &[("v1alpha1", true, false, true), ("v1", true, true, false)],
        ),
        bundle("1.2.0", "1.1.0", "", &[("v1", true, true, false)]),
    ]);
    let pkg = dir.path().join("demo");
    let (code, v) = run(&["check", "history", pkg.to_str().unwrap(), "-o", "json"]);
    assert_eq!(code, 1, "{v:#}");
    let crv001 = codes(&v, "CRV001");
    assert_eq!(crv001.len(), 1, "{v:#}");
    assert!(
        crv001[0].starts_with("demo.v1.1.0 -> demo.v1.2.0"),
        "{crv001:?}"
    );
    assert!(
        crv001[0].contains("removes version v1alpha1")
            && crv001[0].contains("(storage version in demo.v1.0.0)"),
        "{crv001:?}"
    );
    // v1alpha1 was marked deprecated in 1.1.0 before it stopped being served: no CRV002.
    assert!(codes(&v, "CRV002").is_empty(), "{v:#}");
    // The pair check alone (1.1.0 -> 1.2.0) cannot know about 1.0.0.
    let (code, v) = run(&[
        "check",
        "upgrade",
        pkg.join("1.1.0").to_str().unwrap(),
        pkg.join("1.2.0").to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!((code, codes(&v, "CRV001").len()), (0, 0), "{v:#}");
}

/// Deprecation must hold on every path: 1.2.0 skips (skipRange) from 1.0.0, which never marked
/// v1alpha1 deprecated, so the 1.0.0 -> 1.2.0 edge removes it without warning, while the
/// 1.1.0 -> 1.2.0 edge is fine.
#[test]
fn deprecation_must_hold_on_every_path() {
    let dir = tree(vec![
        bundle(
            "1.0.0",
            "",
            "",
            &[("v1alpha1", true, false, false), ("v1", true, true, false)],
        ),
        bundle(
            "1.1.0",
            "1.0.0",
            "",
            &[("v1alpha1", true, false, true), ("v1", true, true, false)],
        ),
        bundle(
            "1.2.0",
            "1.1.0",
            ">=1.0.0 <1.2.0",
            &[("v1alpha1", false, false, true), ("v1", true, true, false)],
        ),
    ]);
    let pkg = dir.path().join("demo");
    let (code, v) = run(&["check", "history", pkg.to_str().unwrap(), "-o", "json"]);
    assert_eq!(code, 1, "{v:#}");
    let crv002 = codes(&v, "CRV002");
    assert_eq!(crv002.len(), 1, "{v:#}");
    assert!(
        crv002[0].starts_with("demo.v1.0.0 -> demo.v1.2.0"),
        "{crv002:?}"
    );
    assert!(
        crv002[0].contains("sets served: false on served version v1alpha1"),
        "{crv002:?}"
    );
    assert!(v["summary"]["errors"] == 1, "{v:#}");
}

/// `check catalog` with a bundle-name map, and `--bundles` as a directory of packages.
#[test]
fn catalog_with_bundle_map_and_dir() {
    let dir = demo_catalog_and_bundles();
    std::fs::write(
        dir.path().join("map.yaml"),
        "demo.v1.0.0: demo/1.0.0\ndemo.v1.1.0: demo/1.1.0\n",
    )
    .unwrap();
    let d = dir.path();
    let catalog = d.join("catalog");
    for bundles in [d.join("map.yaml"), d.to_path_buf()] {
        let (code, v) = check_catalog(&catalog, &bundles, &[]);
        assert_eq!(code, 1, "{v:#}");
        let crv001 = codes(&v, "CRV001");
        assert_eq!(crv001.len(), 1, "{v:#}");
        assert!(crv001[0].contains("removes version v1"), "{crv001:?}");
    }
    // Without contents for the bundles (and images that cannot be pulled offline) the map
    // names a missing directory: exit 2 naming it.
    std::fs::write(d.join("bad.yaml"), "demo.v1.0.0: [x]\n").unwrap();
    let o = Command::new(crate::common::olmctl_bin())
        .args([
            "check",
            "catalog",
            catalog.to_str().unwrap(),
            "--bundles",
            d.join("bad.yaml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bad.yaml:1:"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Ratcheting follows crdify: only pairs of versions the old CRD *served* count as already
/// incompatible. Old: v1alpha1 (served: false, enum [a, b]) and v1 (enum [a]); new: both
/// served. OLM v1 refuses ("allowed enum values removed" between the served pair), and so must
/// we. With v1alpha1 already served in the old CRD, the same pair is not new: no finding.
#[test]
fn ratcheting_counts_only_pairs_the_old_crd_served() {
    let crd = |alpha_served: bool| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.demo.io\nspec:\n  group: demo.io\n  names: {{kind: Widget, plural: widgets}}\n  scope: Namespaced\n  conversion:\n    strategy: None\n  versions:\n  - {{name: v1alpha1, served: {alpha_served}, storage: false, schema: {{openAPIV3Schema: {{type: object, properties: {{m: {{type: string, enum: [a, b]}}}}}}}}}}\n  - {{name: v1, served: true, storage: true, schema: {{openAPIV3Schema: {{type: object, properties: {{m: {{type: string, enum: [a]}}}}}}}}}}\n"
        )
    };
    for (old_served, expect) in [(false, 1), (true, 0)] {
        let mut old = bundle("1.0.0", "", "", &[]);
        old[1].1 = crd(old_served);
        let mut new = bundle("1.1.0", "1.0.0", "", &[]);
        new[1].1 = crd(true);
        let dir = tree(vec![old, new]);
        let pkg = dir.path().join("demo");
        let (_, v) = run(&[
            "check",
            "upgrade",
            pkg.join("1.0.0").to_str().unwrap(),
            pkg.join("1.1.0").to_str().unwrap(),
            "-o",
            "json",
        ]);
        let sch003 = codes(&v, "SCH003");
        assert_eq!(
            sch003.len(),
            expect,
            "old v1alpha1 served: {old_served}: {v:#}"
        );
        if expect == 1 {
            assert!(
                sch003[0].contains("v1alpha1 -> v1")
                    && sch003[0].contains("allowed enum values removed"),
                "{sch003:?}"
            );
        }
    }
}

/// `check catalog CATALOG --bundles BUNDLES EXTRA... -o json`.
fn check_catalog(catalog: &Path, bundles: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec![
        "check",
        "catalog",
        catalog.to_str().unwrap(),
        "--bundles",
        bundles.to_str().unwrap(),
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// The demo catalog of [`catalog_with_bundle_map_and_dir`] (1.1.0 replaces 1.0.0) as
/// `catalog/demo/catalog.yaml` beside the bundles, whose directories are `demo/<v>`.
fn demo_catalog_and_bundles() -> tempfile::TempDir {
    let mut bundles = vec![
        bundle("1.0.0", "", "", &[("v1", true, true, false)]),
        bundle("1.1.0", "1.0.0", "", &[("v2", true, true, false)]),
    ];
    let cat = "---\nschema: olm.package\nname: demo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: demo\nname: stable\nentries:\n- name: demo.v1.0.0\n- name: demo.v1.1.0\n  replaces: demo.v1.0.0\n---\nschema: olm.bundle\npackage: demo\nname: demo.v1.0.0\nimage: quay.io/demo/b:1.0.0\nproperties:\n- {type: olm.package, value: {packageName: demo, version: 1.0.0}}\n---\nschema: olm.bundle\npackage: demo\nname: demo.v1.1.0\nimage: quay.io/demo/b:1.1.0\nproperties:\n- {type: olm.package, value: {packageName: demo, version: 1.1.0}}\n";
    bundles.push(vec![("catalog/demo/catalog.yaml".into(), cat.into())]);
    tree(bundles)
}

/// `--bundles` as a package directory in the `<package>/<version>/` layout (what `check
/// history` reads), with directories named anything: bundles are matched by their CSV's name.
/// Before, only a directory of packages was searched, so a package directory matched nothing
/// and the check passed having checked nothing.
#[test]
fn catalog_bundles_as_a_package_directory_in_any_naming() {
    let dir = demo_catalog_and_bundles();
    let d = dir.path();
    // Not named after the version, nor after the CSV.
    std::fs::rename(d.join("demo/1.0.0"), d.join("demo/first")).unwrap();
    let catalog = d.join("catalog");
    for bundles in [d.join("demo"), d.to_path_buf()] {
        let (code, v) = check_catalog(&catalog, &bundles, &[]);
        assert_eq!(code, 1, "{}: {v:#}", bundles.display());
        let crv001 = codes(&v, "CRV001");
        assert_eq!(crv001.len(), 1, "{v:#}");
        assert!(
            crv001[0].starts_with("demo.v1.0.0 -> demo.v1.1.0"),
            "{crv001:?}"
        );
        assert!(codes(&v, "EDGE002").is_empty(), "{v:#}");
    }
}

/// A check that checks nothing does not pass. A `--bundles` directory none of whose bundles is
/// in the catalog (of `--package`) is a usage error (exit 2) naming what was looked for and
/// what was found; bundles given with no edge between them leave every edge unchecked: EDGE002
/// (an error, exit 1; a policy may lower it).
#[test]
fn catalog_check_of_nothing_fails_and_says_why() {
    let dir = demo_catalog_and_bundles();
    let d = dir.path();
    let catalog = d.join("catalog");
    let out = |args: &[&str]| {
        let o = Command::new(crate::common::olmctl_bin())
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // Bundles of another package: nothing matches.
    for f in [
        "demo/1.0.0/manifests/demo.clusterserviceversion.yaml",
        "demo/1.1.0/manifests/demo.clusterserviceversion.yaml",
    ] {
        let p = d.join(f);
        let t = std::fs::read_to_string(&p)
            .unwrap()
            .replace("name: demo.v", "name: other.v");
        std::fs::write(&p, t).unwrap();
    }
    let (code, stdout, stderr) = out(&[
        "check",
        "catalog",
        catalog.to_str().unwrap(),
        "--bundles",
        d.join("demo").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("none of its 2 bundle directories is a bundle of the catalog"),
        "{stderr}"
    );
    assert!(
        stderr.contains("looked for: the 2 bundles of the catalog (demo.v1.0.0, demo.v1.1.0)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1.0.0 (CSV other.v1.0.0)") && stderr.contains("1.1.0 (CSV other.v1.1.0)"),
        "{stderr}"
    );
    // An empty directory: no bundle directory at all.
    let empty = tempfile::tempdir().unwrap();
    let (code, _, stderr) = out(&[
        "check",
        "catalog",
        catalog.to_str().unwrap(),
        "--bundles",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no bundle directory there"), "{stderr}");
    // One bundle of the catalog: checked on its own, but no edge: EDGE002.
    let p = d.join("demo/1.0.0/manifests/demo.clusterserviceversion.yaml");
    let t = std::fs::read_to_string(&p)
        .unwrap()
        .replace("name: other.v", "name: demo.v");
    std::fs::write(&p, t).unwrap();
    let (code, v) = check_catalog(&catalog, &d.join("demo/1.0.0"), &[]);
    assert_eq!(code, 1, "{v:#}");
    let edge002 = codes(&v, "EDGE002");
    assert_eq!(edge002.len(), 1, "{v:#}");
    assert!(
        edge002[0].contains("each of the 1 edges needs a bundle without contents")
            && edge002[0].contains("contents were given for 1 bundle (demo.v1.0.0)"),
        "{edge002:?}"
    );
    // The policy accepts bundles checked on their own.
    std::fs::write(d.join("policy.yaml"), "severity:\n  EDGE002: warning\n").unwrap();
    let policy = d.join("policy.yaml");
    let (code, v) = check_catalog(
        &catalog,
        &d.join("demo/1.0.0"),
        &["--policy", policy.to_str().unwrap()],
    );
    assert_eq!((code, codes(&v, "EDGE002").len()), (0, 1), "{v:#}");
}

/// The first-day case: cloudnative-pg's package directory in the certified-operators layout
/// (4 of its bundle directories, `<version>/`) against the v4.21 catalog. Before, `0 edges
/// checked, 24 not checked, 0 bundles` and exit 0.
#[test]
fn catalog_check_reads_the_certified_package_layout() {
    let first_day = common::shared_fixtures().join("first-day");
    let o = Command::new(crate::common::olmctl_bin())
        .args([
            "check",
            "catalog",
            first_day.join("catalogs/v4.21").to_str().unwrap(),
            "--package",
            "cloudnative-pg",
            "--bundles",
            first_day.join("operators/cloudnative-pg").to_str().unwrap(),
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    // The 4 bundle directories (1.29.1, 1.29.2, 1.30.0-rc1, 1.30.0) are all read; of the 26
    // catalog bundles the other 22 have no contents.
    assert!(text.contains(", 4 bundles)"), "{text}");
    assert!(text.contains("no contents for 22 bundles"), "{text}");
    assert!(!text.contains("0 edges checked"), "{text}");
    assert!(text.contains("\nfailed: "), "{text}");
}

/// `check upgrade` with a path that does not exist says so (not "not a bundle directory", nor
/// only "invalid image reference"), and names a path that is not a bundle once.
#[test]
fn check_upgrade_names_missing_and_non_bundle_paths_once() {
    let dir = demo_catalog_and_bundles();
    let d = dir.path();
    let stderr = |args: &[&str]| {
        let o = Command::new(crate::common::olmctl_bin())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let old = d.join("demo/1.0.0");
    let missing = d.join("nonexist/b");
    let e = stderr(&["check", "upgrade", "/nonexist/a", missing.to_str().unwrap()]);
    assert!(
        e.starts_with("error: /nonexist/a: no such directory"),
        "{e}"
    );
    let e = stderr(&[
        "check",
        "upgrade",
        old.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert!(e.contains("no such directory"), "{e}");
    assert_eq!(e.matches("nonexist/b").count(), 1, "{e}");
    // An existing directory that is not a bundle: named once, with what it lacks.
    let not_bundle = d.join("catalog");
    let e = stderr(&[
        "check",
        "upgrade",
        old.to_str().unwrap(),
        not_bundle.to_str().unwrap(),
    ]);
    assert_eq!(e.matches(not_bundle.to_str().unwrap()).count(), 1, "{e}");
    assert!(e.contains("not a bundle directory"), "{e}");
}
