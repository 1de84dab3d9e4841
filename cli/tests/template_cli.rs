//! `catalog template` on small hand-written templates: the output, and every refusal (exit 2,
//! file and line, nothing on stdout).

mod common;

use std::path::Path;

use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use common::write_tree;

fn olmctl(args: &[&str]) -> std::process::Output {
    std::process::Command::new(crate::common::olmctl_bin())
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

/// A directory with demo bundles `b<i>/` (CSV version and name and package per bundle), a
/// semver template naming them as `quay.io/demo/b<i>:1` under `stable`, and the map.
fn semver_setup(bundles: &[(&str, &str)], head: &str) -> tempfile::TempDir {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut map = String::new();
    let mut t = format!("{head}stable:\n  bundles:\n");
    for (i, (version, package)) in bundles.iter().enumerate() {
        let csv = CSV
            .replace("name: demo.v1.2.0", &format!("name: {package}.v{version}"))
            .replace("version: 1.2.0", &format!("version: {version}"));
        let ann = ANNOTATIONS.replace("package.v1: demo", &format!("package.v1: {package}"));
        files.push((
            format!("b{i}/manifests/demo.clusterserviceversion.yaml"),
            csv,
        ));
        files.push((format!("b{i}/manifests/widgets.crd.yaml"), CRD.to_string()));
        files.push((format!("b{i}/metadata/annotations.yaml"), ann));
        map.push_str(&format!("quay.io/demo/b{i}:1: b{i}\n"));
        t.push_str(&format!("  - image: quay.io/demo/b{i}:1\n"));
    }
    files.push(("map.yaml".into(), map));
    files.push(("t.yaml".into(), t));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_tree(&refs)
}

fn semver_run(d: &Path) -> std::process::Output {
    olmctl(&[
        "catalog",
        "template",
        &p(d, "t.yaml"),
        "--bundles",
        &p(d, "map.yaml"),
    ])
}

/// Every error of the semver template, with opm's wording.
#[test]
fn semver_template_errors() {
    /// (bundles as (version, package), template head, expected error).
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: [Case<'_>; 4] = [
        (
            &[("1.2.0", "demo")],
            "schema: olm.semver\ndefaultChannelTypePreference: foo\n",
            "unknown DefaultChannelTypePreference: \"foo\"",
        ),
        (
            &[("1.2.0", "demo"), ("1.2.0", "demo")],
            "schema: olm.semver\n",
            "duplicate bundle name \"demo.v1.2.0\"",
        ),
        (
            &[("1.2.0", "demo"), ("1.3.0", "other")],
            "schema: olm.semver\n",
            "bundle \"other\" does not belong to this package: \"demo\"",
        ),
        (
            &[],
            "schema: olm.semver\n",
            "render: no bundles specified or no bundles could be rendered",
        ),
    ];
    for (bundles, head, needle) in cases {
        let d = semver_setup(bundles, head);
        let o = semver_run(d.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{needle}: {err}");
        assert!(err.contains(needle), "{needle}: {err}");
        assert!(err.contains("t.yaml:"), "{err}");
    }
    // Versions that differ only by build metadata cannot be ordered.
    let d = semver_setup(
        &[("1.2.0+a", "demo"), ("1.2.0+b", "demo")],
        "schema: olm.semver\n",
    );
    let csv1 = d
        .path()
        .join("b1/manifests/demo.clusterserviceversion.yaml");
    let text = std::fs::read_to_string(&csv1).expect("csv");
    std::fs::write(
        &csv1,
        text.replace("name: demo.v1.2.0+b", "name: demo.v1.2.0-b-build"),
    )
    .expect("csv");
    let o = semver_run(d.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("encountered bundle versions which differ only by build metadata"),
        "{err}"
    );
}

/// A semver template renders channels, edges, the default channel and the package's
/// description from the CSV (minor channels by default).
#[test]
fn semver_template_renders() {
    let d = semver_setup(
        &[("1.2.0", "demo"), ("1.2.1", "demo"), ("1.3.0", "demo")],
        "schema: olm.semver\n",
    );
    // Distinct CSV names per version.
    let o = semver_run(d.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("defaultChannel: stable-v1.3\n"), "{out}");
    assert!(
        out.contains("name: stable-v1.2\n") && out.contains("name: stable-v1.3\n"),
        "{out}"
    );
    assert!(
        out.contains("- name: demo.v1.3.0\n  replaces: demo.v1.2.1\n  skips:\n  - demo.v1.2.0\n"),
        "{out}"
    );
}

fn fbc_bundle(version: &str) -> String {
    format!(
        "- schema: olm.bundle\n  package: demo\n  name: demo.v{version}\n  image: quay.io/demo/b:{version}\n  properties:\n  - type: olm.package\n    value: {{packageName: demo, version: {version}}}\n"
    )
}

/// The substitutes template: the substitute takes the base's place in the channel, the base
/// keeps no edges and is skipped; a substitute that is not newer, or a base that is not there,
/// is refused.
#[test]
fn substitutes_template() {
    let entries = format!(
        "schema: olm.template.substitutes\nentries:\n- schema: olm.package\n  name: demo\n  defaultChannel: stable\n- schema: olm.channel\n  package: demo\n  name: stable\n  entries:\n  - name: demo.v1.1.0\n  - name: demo.v1.2.0\n    replaces: demo.v1.1.0\n    skipRange: '>=1.0.0 <1.2.0'\n{}{}",
        fbc_bundle("1.1.0"),
        fbc_bundle("1.2.0")
    );
    let run = |subs: &str, version: &str| {
        let d = semver_setup(&[(version, "demo")], "schema: olm.semver\n");
        std::fs::write(
            d.path().join("t.yaml"),
            format!("{entries}substitutions:\n{subs}"),
        )
        .expect("t");
        let o = semver_run(d.path());
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(
        "- {name: 'quay.io/demo/b0:1', base: demo.v1.2.0}\n",
        "1.2.1",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("- name: demo.v1.1.0\n- name: demo.v1.2.0\n- name: demo.v1.2.1\n  replaces: demo.v1.1.0\n  skipRange: '>=1.0.0 <1.2.0'\n  skips:\n  - demo.v1.2.0\n"),
        "{out}"
    );
    assert!(out.contains("name: demo.v1.2.1\npackage: demo\n"), "{out}");
    // Not newer than the base.
    let (code, _, err) = run(
        "- {name: 'quay.io/demo/b0:1', base: demo.v1.2.0}\n",
        "1.1.5",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("must have a higher version") && err.contains("t.yaml:"),
        "{err}"
    );
    // Name and base the same; a base that is not a bundle makes the result invalid FBC.
    let (code, _, err) = run("- {name: demo.v1.2.0, base: demo.v1.2.0}\n", "1.2.1");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("substitution name and base cannot be the same"),
        "{err}"
    );
    let (code, _, err) = run(
        "- {name: 'quay.io/demo/b0:1', base: demo.v9.9.9}\n",
        "1.2.1",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("base bundle \"demo.v9.9.9\" does not exist in catalog"),
        "{err}"
    );
}

/// Review regressions: Go's key matching (the byte-wise greatest case-folded key wins),
/// repeated keys in a semver template, and `catalog build` refusing a template that renders
/// another package (nothing written).
#[test]
fn key_matching_duplicates_and_foreign_packages() {
    // opm reads `generatemajorchannels: false` last (keys sorted): minor channels only.
    let d = semver_setup(
        &[("1.2.0", "demo")],
        "schema: olm.semver\ngenerateMajorChannels: true\ngeneratemajorchannels: false\n",
    );
    let o = semver_run(d.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("defaultChannel: stable-v1.2\n") && !out.contains("name: stable-v1\n"),
        "{out}"
    );
    let d = semver_setup(&[("1.2.0", "demo")], "schema: olm.semver\nstable: {}\n");
    let o = semver_run(d.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("key \"stable\" already set"), "{err}");
    // catalog build: the package directory is `foo`, the template renders `demo`: written under
    // foo/, as the pipeline writes it (opm reads any layout).
    let root = tempfile::tempdir().expect("tmp");
    let pkg = root.path().join("operators/foo");
    std::fs::create_dir_all(pkg.join("catalog-templates")).expect("mkdir");
    std::fs::write(pkg.join("ci.yaml"), "fbc:\n  enabled: true\n  catalog_mapping:\n  - template_name: basic.yaml\n    type: olm.template.basic\n    catalog_names: [v4.17, v4.18]\n").expect("ci");
    let b = setup(BASIC);
    std::fs::write(pkg.join("catalog-templates/basic.yaml"), BASIC).expect("template");
    let cats = root.path().join("catalogs");
    let build = |extra: &[&str]| {
        let mut args = vec![
            "catalog".to_string(),
            "build".into(),
            pkg.display().to_string(),
            "--catalogs-dir".into(),
            cats.display().to_string(),
            "--bundles".into(),
            p(b.path(), "map.yaml"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        olmctl(&args)
    };
    let o = build(&[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for c in ["v4.17", "v4.18"] {
        let f = cats.join(c).join("foo/catalog.yaml");
        let text = std::fs::read_to_string(&f).expect("written under foo/");
        assert!(text.contains("name: demo\n"), "{text}");
        assert!(!cats.join(c).join("demo").exists(), "{c}");
    }
    assert_eq!(build(&["--check"]).status.code(), Some(0));
    // A template rendering two packages is refused before anything is written.
    let two = format!("{BASIC}- schema: olm.package\n  name: other\n  defaultChannel: stable\n");
    std::fs::write(pkg.join("catalog-templates/basic.yaml"), two).expect("template");
    std::fs::remove_dir_all(&cats).expect("rm");
    let o = build(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("renders 2 packages (demo, other)"), "{err}");
    assert!(!cats.exists(), "nothing written");
    // A ci.yaml type that is not the template's schema.
    std::fs::write(pkg.join("ci.yaml"), "fbc:\n  catalog_mapping:\n  - template_name: basic.yaml\n    type: olm.semver\n    catalog_names: [v4.18]\n").expect("ci");
    let o = olmctl(&[
        "catalog",
        "build",
        &pkg.display().to_string(),
        "--catalogs-dir",
        &cats.display().to_string(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("ci.yaml:3:5:") && err.contains("but its schema is olm.template.basic"),
        "{err}"
    );
}
