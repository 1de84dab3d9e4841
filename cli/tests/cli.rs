//! The `olmctl` binary: exit codes, JSON output, fmt round trips, ls.

mod common;

use std::process::Output;

use common::cli::{code, olmctl, p};
use common::*;

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

const GOOD: &str = "---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
- name: foo.v1.0.0
- name: foo.v1.1.0
  replaces: foo.v1.0.0
  skipRange: '>=0.9.0 <1.1.0'
";

fn good_tree() -> tempfile::TempDir {
    let text = format!("{GOOD}{}{}", bundle("1.0.0"), bundle("1.1.0"));
    write_tree(&[("foo/catalog.yaml", &text)])
}

#[test]
fn exit_codes() {
    let good = good_tree();
    assert_eq!(code(&olmctl(&["catalog", "validate", p(good.path())])), 0);
    let bad = write_tree(&[("c.yaml", "schema: olm.package\nname: foo\n")]);
    assert_eq!(code(&olmctl(&["catalog", "validate", p(bad.path())])), 1);
    assert_eq!(
        code(&olmctl(&["catalog", "validate", "/nonexistent/catalog"])),
        2
    );
    assert_eq!(
        code(&olmctl(&["catalog", "validate", "--bogus", p(good.path())])),
        2
    );
    assert_eq!(code(&olmctl(&["catalog", "validate"])), 2);
}

#[test]
fn warnings_alone_exit_zero() {
    let text = format!("{GOOD}{}{}", bundle("1.0.0"), bundle("1.1.0"))
        .replace("  skipRange", "  skiprange");
    let t = write_tree(&[("c.yaml", &text)]);
    let o = olmctl(&["catalog", "validate", p(t.path())]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("warning[FBC005]"), "{}", stdout(&o));
}

#[test]
fn json_output_for_machines() {
    let bad = write_tree(&[("c.yaml", "schema: olm.package\nname: foo\n")]);
    let o = olmctl(&["catalog", "validate", "-o", "json", p(bad.path())]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["passed"], false);
    assert!(v["summary"]["errors"].as_u64().expect("count") >= 2);
    let f = &v["findings"][0];
    assert!(f["code"].as_str().expect("code").starts_with("FBC"));
    assert!(f["file"].as_str().expect("file").ends_with("c.yaml"));
    assert_eq!(f["line"], 1);
    assert_eq!(f["package"], "foo");
    let good = good_tree();
    let o = olmctl(&["catalog", "validate", "--output", "json", p(good.path())]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["passed"], true);
    assert_eq!(v["findings"].as_array().expect("array").len(), 0);
}

#[test]
fn output_is_deterministic() {
    let bad = write_tree(&[
        ("a.yaml", "schema: olm.package\nname: foo\n"),
        (
            "b.yaml",
            "schema: olm.package\nname: bar\ndefaultChannel: x\n",
        ),
        ("c.json", "{\"schema\": 1}"),
    ]);
    let a = stdout(&olmctl(&["catalog", "validate", p(bad.path())]));
    for _ in 0..3 {
        assert_eq!(a, stdout(&olmctl(&["catalog", "validate", p(bad.path())])));
    }
}

#[test]
fn explain_and_codes() {
    let o = olmctl(&["explain", "fbc029"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).starts_with("FBC029 (error): "), "{}", stdout(&o));
    assert_eq!(code(&olmctl(&["explain", "NOPE1"])), 2);
    let o = olmctl(&["codes", "-o", "json"]);
    let v: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).expect("json");
    let codes: Vec<&str> = v
        .iter()
        .map(|c| c["code"].as_str().expect("code"))
        .collect();
    let mut uniq = codes.clone();
    uniq.dedup();
    assert_eq!(codes, uniq);
    assert_eq!(codes.len(), olmctl::codes::all_codes().len());
    assert!(codes.contains(&"GRAPH008") && codes.contains(&"UPG001") && codes.contains(&"FBC001"));
}

#[test]
fn fmt_out_revalidates_and_is_stable() {
    for format in ["yaml", "json"] {
        let src = good_tree();
        let out1 = tempfile::tempdir().expect("tmp");
        let out2 = tempfile::tempdir().expect("tmp");
        let o = olmctl(&[
            "catalog",
            "fmt",
            p(src.path()),
            "--format",
            format,
            "--out",
            p(out1.path()),
        ]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let file = out1.path().join("foo").join(format!("catalog.{format}"));
        assert!(file.is_file());
        assert_eq!(code(&olmctl(&["catalog", "validate", p(out1.path())])), 0);
        assert_eq!(
            code(&olmctl(&[
                "catalog",
                "fmt",
                "--check",
                "--format",
                format,
                p(out1.path())
            ])),
            0
        );
        olmctl(&[
            "catalog",
            "fmt",
            p(out1.path()),
            "--format",
            format,
            "--out",
            p(out2.path()),
        ]);
        let a = std::fs::read(&file).expect("read");
        let b =
            std::fs::read(out2.path().join("foo").join(format!("catalog.{format}"))).expect("read");
        assert_eq!(a, b, "formatting twice differs ({format})");
    }
}

#[test]
fn fmt_check_flags_unformatted() {
    let src = write_tree(&[(
        "x/any-name.yml",
        &format!("{GOOD}{}{}", bundle("1.0.0"), bundle("1.1.0")),
    )]);
    let o = olmctl(&["catalog", "fmt", "--check", p(src.path())]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    // The package stays in x/: the canonical file to create there and the file to remove.
    assert!(
        err.contains("would create: ") && err.contains("x/catalog.yaml"),
        "{err}"
    );
    assert!(
        err.contains("would remove: ") && err.contains("x/any-name.yml"),
        "{err}"
    );
}

#[test]
fn fmt_in_place_writes_one_file_per_package() {
    let mut pkg_bar = GOOD.replace("foo", "bar");
    pkg_bar.push_str(&bundle("1.0.0").replace("foo", "bar"));
    pkg_bar.push_str(&bundle("1.1.0").replace("foo", "bar"));
    let t = write_tree(&[
        ("one.yaml", &format!("{GOOD}{}", bundle("1.0.0"))),
        ("sub/two.yaml", &bundle("1.1.0")),
        ("bar.yaml", &pkg_bar),
        ("notes.txt", "ignored\n"),
        (".indexignore", "notes.txt\n"),
    ]);
    let o = olmctl(&["catalog", "fmt", p(t.path())]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let files = olmctl::fbc::load::list_files(t.path()).expect("list");
    let rel: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(t.path())
                .expect("under")
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(rel, vec!["bar/catalog.yaml", "foo/catalog.yaml"]);
    assert!(t.path().join("notes.txt").is_file(), "ignored files stay");
    assert!(
        !t.path().join("sub").exists(),
        "emptied directories are removed"
    );
    assert_eq!(code(&olmctl(&["catalog", "validate", p(t.path())])), 0);
}

#[test]
fn fmt_refuses_broken_catalogs() {
    let t = write_tree(&[("c.yaml", "schema: olm.package\n  x: : y\n")]);
    let o = olmctl(&["catalog", "fmt", p(t.path())]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        std::fs::read_to_string(t.path().join("c.yaml")).expect("kept"),
        "schema: olm.package\n  x: : y\n"
    );
}

#[test]
fn ls_text_and_json() {
    let t = good_tree();
    let o = olmctl(&["catalog", "ls", "-o", "json", p(t.path())]);
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let pkg = &v["packages"][0];
    assert_eq!(pkg["name"], "foo");
    assert_eq!(pkg["defaultChannel"], "stable");
    assert_eq!(pkg["bundles"], 2);
    assert_eq!(pkg["channels"][0]["head"], "foo.v1.1.0");
    assert_eq!(pkg["channels"][0]["entries"], 2);
    let text = stdout(&olmctl(&["catalog", "ls", p(t.path())]));
    assert!(text.contains("* stable"), "{text}");
    assert!(text.contains("foo.v1.1.0"), "{text}");
}

#[test]
fn repo_catalog_is_valid() {
    let dir = common::root().join("catalog");
    let o = olmctl(&["catalog", "validate", p(&dir)]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let o = olmctl(&["catalog", "fmt", "--check", p(&dir)]);
    assert_eq!(
        code(&o),
        0,
        "catalog/ is not in canonical form: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `bundle validate` and `catalog render`: exit codes and machine output.
#[test]
fn bundle_commands_exit_codes() {
    let ops = fixture_operators();
    let good = ops.join("kube-green/0.7.0");
    let o = olmctl(&["bundle", "validate", p(&good), "-o", "json"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["passed"], true);
    // Warnings fail with --strict (kube-green 0.7.0 has none at error level but some warnings).
    let o = olmctl(&["bundle", "validate", "--strict", p(&good)]);
    let warnings = v["summary"]["warnings"].as_u64().expect("count");
    assert_eq!(code(&o), if warnings > 0 { 1 } else { 0 });
    // A real defect: exit 1, with file, line and JSON path in the JSON.
    let bad = ops.join("percona-xtradb-cluster-operator/1.12.0");
    let o = olmctl(&["bundle", "validate", p(&bad), "-o", "json"]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let f = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["code"] == "CSV017")
        .expect("CSV017");
    assert_eq!(f["path"], "metadata.annotations[\"olm.skipRange\"]");
    assert!(f["line"].as_u64().expect("line") > 0);
    // Not a bundle: exit 2.
    let o = olmctl(&["bundle", "validate", p(&ops)]);
    assert_eq!(code(&o), 2);
    // render: JSON blob; a bad --image or a count mismatch is a usage error.
    let o = olmctl(&["catalog", "render", p(&good), "--image", "quay.io/a/b:1"]);
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["name"], "kube-green.v0.7.0");
    assert_eq!(v["schema"], "olm.bundle");
    assert_eq!(
        code(&olmctl(&[
            "catalog",
            "render",
            p(&good),
            "--image",
            "Bad Ref"
        ])),
        2
    );
    assert_eq!(
        code(&olmctl(&[
            "catalog",
            "render",
            p(&good),
            p(&good),
            "--image",
            "quay.io/a/b:1"
        ])),
        2
    );
    assert_eq!(
        code(&olmctl(&["catalog", "render", p(&good), "--csv-metadata"])),
        2
    );
}

/// `bundle generate` of the widget operator into `out`, with `extra` flags.
fn generate_widget(out: &std::path::Path, extra: &[&str]) -> Output {
    let src = common::root().join("tests/data/widget-operator");
    let mut v = vec![
        "bundle",
        "generate",
        "--manifests",
        p(&src),
        "--package",
        "widget-operator",
        "--version",
        "0.3.0",
        "--channels",
        "stable",
        "-O",
        p(out),
    ];
    v.extend_from_slice(extra);
    olmctl(&v)
}

#[test]
fn bundle_generate_and_select() {
    let out = tempfile::tempdir().expect("tmp");
    let run = |extra: &[&str]| generate_widget(out.path(), extra);
    // The manifests include a Namespace: refused (exit 2) unless ignored on purpose.
    let o = run(&[]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--ignore-kind Namespace"));
    let o = run(&["--ignore-kind", "Namespace"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let csv_path = out
        .path()
        .join("manifests/widget-operator.clusterserviceversion.yaml");
    let first = std::fs::read(&csv_path).expect("csv written");
    assert_eq!(code(&run(&["--ignore-kind", "Namespace"])), 0);
    assert_eq!(std::fs::read(&csv_path).expect("csv"), first, "same bytes");
    // --created-at without a value stamps the current time.
    assert_eq!(
        code(&run(&["--ignore-kind", "Namespace", "--created-at"])),
        0
    );
    let text = std::fs::read_to_string(&csv_path).expect("csv");
    let stamp = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("createdAt: "))
        .expect("createdAt");
    assert_eq!(
        stamp.trim_matches('"').len(),
        "2026-01-02T03:04:05Z".len(),
        "{stamp}"
    );
    // Bad flags: exit 2.
    assert_eq!(
        code(&run(&[
            "--ignore-kind",
            "Namespace",
            "--default-channel",
            "beta"
        ])),
        2
    );
    // validate --select narrows to suites or codes; an unknown name is a usage error.
    let bad = fixture_operators().join("percona-xtradb-cluster-operator/1.12.0");
    let select =
        |sel: &str| olmctl(&["bundle", "validate", p(&bad), "-o", "json", "--select", sel]);
    assert_eq!(code(&select("crd,good-practices")), 0);
    let o = select("CSV017");
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let found = v["findings"].as_array().expect("findings");
    assert!(!found.is_empty() && found.iter().all(|f| f["code"] == "CSV017"));
    assert_eq!(code(&select("nope")), 2);
}

/// Regenerating a bundle keeps what was added to its metadata by hand (the
/// `com.redhat.openshift.versions` the certified pipeline reads) in both files, and
/// `--annotation` adds one.
#[test]
fn bundle_regeneration_keeps_hand_added_annotations() {
    let out = tempfile::tempdir().expect("tmp");
    let run = |extra: &[&str]| {
        let mut v = vec!["--ignore-kind", "Namespace"];
        v.extend_from_slice(extra);
        generate_widget(out.path(), &v)
    };
    assert_eq!(code(&run(&[])), 0);
    let ann = out.path().join("metadata/annotations.yaml");
    let df = out.path().join("bundle.Dockerfile");
    let mut text = std::fs::read_to_string(&ann).unwrap();
    text.push_str("  com.redhat.openshift.versions: v4.14-v4.21\n");
    std::fs::write(&ann, text).unwrap();
    let mut text = std::fs::read_to_string(&df).unwrap();
    text.push_str("LABEL com.redhat.openshift.versions=v4.14-v4.21\n");
    std::fs::write(&df, text).unwrap();
    let o = run(&["--annotation", "com.redhat.delivery.operator.bundle=true"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let ann = std::fs::read_to_string(&ann).unwrap();
    let df = std::fs::read_to_string(&df).unwrap();
    assert!(
        ann.ends_with("  com.redhat.openshift.versions: v4.14-v4.21\n  com.redhat.delivery.operator.bundle: \"true\"\n"),
        "{ann}"
    );
    assert!(
        df.contains("LABEL com.redhat.openshift.versions=v4.14-v4.21\nLABEL com.redhat.delivery.operator.bundle=true\n"),
        "{df}"
    );
    assert_eq!(
        df.matches("com.redhat.openshift.versions").count(),
        1,
        "{df}"
    );
    // A key the API server refuses: exit 2.
    assert_eq!(code(&run(&["--annotation", "not a key=1"])), 2);
}
