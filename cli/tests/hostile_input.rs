//! Hostile and broken input (issue 14), the reproducers: each runs the CLI as a child with an
//! address-space limit, a watchdog and its peak RSS measured (cli/tests/common/bounded.rs).
//!
//! - YAML alias expansion (billion laughs) in catalogs, bundles and policy files;
//! - a bare carriage return inside a repaired quoted scalar;
//! - a top-level (or key-position) flow list of millions of elements;
//! - files that are FIFOs, devices, links to devices or sparse giants;
//! - files that do not load, for every command that loads a catalog;
//! - catalogs given as a FIFO or a device;
//! - unparseable `--k8s-version` ranges;
//! - a deploymentConfig of 100,000 env variables and tolerations (issue 39 §12).

#![cfg(unix)]

mod common;

use std::path::PathBuf;

use common::bounded::{assert_mentions, run};
use common::cli::p;
use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use common::{mkfifo, write_tree};

/// The bound for the parsing attacks (the acceptance line).
const PARSE_RSS: u64 = 200 << 20;

/// 0.5 KB of nested anchors that expand to 10^9 strings.
fn laughs() -> String {
    let mut s = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(",");
        s.push_str(&format!("{}: &{} [{refs}]\n", w[1], w[1]));
    }
    s
}

fn bundle_dir(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let mut files = vec![
        ("manifests/demo.clusterserviceversion.yaml", CSV),
        ("manifests/widgets.crd.yaml", CRD),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ];
    files.extend_from_slice(extra);
    write_tree(&files)
}

fn upgrade_base() -> PathBuf {
    common::root().join("tests/data/upgrade/base")
}

#[test]
fn billion_laughs_are_refused_in_every_reader() {
    let text = laughs();
    assert!(text.len() < 600, "{}", text.len());
    // A catalog file.
    let cat = write_tree(&[("foo/catalog.yaml", &text)]);
    let r = run(&["catalog", "validate", p(cat.path())]);
    assert_eq!(r.bounded(PARSE_RSS), 1, "{r:?}");
    assert_mentions(&r, &["FBC001", "excessive aliasing", "foo/catalog.yaml:"]);
    // A bundle manifest.
    let b = bundle_dir(&[("manifests/laughs.yaml", &text)]);
    let r = run(&["bundle", "validate", p(b.path())]);
    assert_eq!(r.bounded(PARSE_RSS), 1, "{r:?}");
    assert_mentions(&r, &["BND001", "excessive aliasing", "laughs.yaml:"]);
    // A policy file.
    let pol = write_tree(&[("policy.yaml", &text)]);
    let policy = pol.path().join("policy.yaml");
    let base = upgrade_base();
    let r = run(&[
        "check",
        "upgrade",
        p(&base),
        p(&base),
        "--policy",
        p(&policy),
    ]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    assert_mentions(&r, &["excessive aliasing", "policy.yaml:"]);
}

#[test]
fn carriage_returns_in_quoted_scalars_end_quickly() {
    // The 60-byte reproducer: a bare CR inside a multi-line double-quoted scalar.
    let small = "schema: olm.package\nname: foo\ndescription: \"x\n  y\rz\n  w\"\n";
    let cat = write_tree(&[("catalog.yaml", small)]);
    let r = run(&["catalog", "validate", p(cat.path())]);
    r.bounded(PARSE_RSS);
    assert!(
        !r.stdout.contains("FBC001"),
        "parses as go-yaml does: {r:?}"
    );
    // The real 26 KB fixture catalog with one CR inserted into a double-quoted scalar (which
    // then spans two lines, the second one under-indented) gives the same verdict as the file
    // without it.
    let real = common::fixture_catalog().join("ecr-secret-operator/catalog.yaml");
    let text = std::fs::read_to_string(&real).expect("fixture");
    let at = text.find("createdAt: \"").expect("a double-quoted scalar") + "createdAt: \"20".len();
    let with_cr = format!("{}\r{}", &text[..at], &text[at..]);
    let (a, b) = (
        write_tree(&[("ecr-secret-operator/catalog.yaml", &text)]),
        write_tree(&[("ecr-secret-operator/catalog.yaml", &with_cr)]),
    );
    let (ra, rb) = (
        run(&["catalog", "validate", p(a.path())]),
        run(&["catalog", "validate", p(b.path())]),
    );
    assert_eq!(rb.bounded(PARSE_RSS), ra.bounded(PARSE_RSS), "{rb:?}");
    assert!(!rb.stdout.contains("FBC001"), "{}", rb.stdout);
    // A CR inside a block scalar ends it, as in go-yaml: an error with a line, at once.
    let at = text.find("alm-examples: |-").expect("a block scalar");
    let at = at + text[at..].find("\n  ").expect("its content") + 5;
    let broken = format!("{}\r{}", &text[..at], &text[at..]);
    let c = write_tree(&[("ecr-secret-operator/catalog.yaml", &broken)]);
    let r = run(&["catalog", "validate", p(c.path())]);
    r.bounded(PARSE_RSS);
}

#[test]
fn huge_flow_lists_cost_no_memory_before_they_are_rejected() {
    // A million elements: ~2 MB of text, which cost 360 MB before (10 MB cost 1.7 GB).
    let list = format!("[{}]\n", vec!["1"; 1_000_000].join(","));
    let cat = write_tree(&[("catalog.yaml", &list)]);
    let r = run(&["catalog", "validate", p(cat.path())]);
    assert_eq!(r.bounded(PARSE_RSS), 1, "{r:?}");
    assert_mentions(
        &r,
        &[
            "FBC002",
            "must be an object, found a list",
            "catalog.yaml:1:1",
        ],
    );
    // The same list where a key could start inside a valid blob (the scanner queued it too).
    let nested = format!("schema: custom.x\nname: a\nvalues:\n- {list}");
    let cat = write_tree(&[("catalog.yaml", &nested)]);
    let r = run(&["catalog", "validate", p(cat.path())]);
    r.bounded(PARSE_RSS);
    // A list document ends its file, as opm's decoder stops at the first document it cannot
    // decode: what follows it is not read (not even this list's remaining megabytes).
    let after =
        format!("schema: olm.package\nname: a\n---\n{list}---\nschema: olm.package\nname: b\n");
    let cat = write_tree(&[("catalog.yaml", &after)]);
    let r = run(&["catalog", "validate", p(cat.path()), "-o", "json"]);
    assert_eq!(r.bounded(PARSE_RSS), 1, "{r:?}");
    assert_mentions(&r, &["FBC002", "must be an object, found a list"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let packages: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["package"].as_str())
        .collect();
    assert!(packages.contains(&"a"), "{}", r.stdout);
    assert!(!packages.contains(&"b"), "{}", r.stdout);
    // As a bundle manifest.
    let b = bundle_dir(&[("manifests/list.yaml", &list)]);
    let r = run(&["bundle", "validate", p(b.path())]);
    assert_eq!(r.bounded(PARSE_RSS), 1, "{r:?}");

    // The reproducer: 200 MB. Only the first MiB is read (the list ends the file), so
    // the peak stays far below the file's size, in a catalog and in a bundle.
    let big = write_tree(&[("catalog/ok.yaml", "schema: olm.package\nname: ok\n")]);
    let file = big.path().join("catalog/list.yaml");
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(&file).expect("create"));
        w.write_all(b"# a comment first\n[").expect("write");
        let chunk = "1,".repeat(1 << 19);
        for _ in 0..200 {
            w.write_all(chunk.as_bytes()).expect("write");
        }
        w.write_all(b"1]\n").expect("write");
    }
    let r = run(&["catalog", "validate", p(&big.path().join("catalog"))]);
    assert_eq!(r.bounded(40 << 20), 1, "{r:?}");
    assert_mentions(
        &r,
        &["FBC002", "must be an object, found a list", "list.yaml:2:1"],
    );
    let b = bundle_dir(&[]);
    std::fs::rename(&file, b.path().join("manifests/list.yaml")).expect("move");
    let r = run(&["bundle", "validate", p(b.path())]);
    assert_eq!(r.bounded(40 << 20), 1, "{r:?}");
    assert_mentions(&r, &["list.yaml"]);
}

#[test]
fn special_and_giant_files_are_refused_at_once() {
    // A 3 GB sparse catalog file is refused by its size, before reading.
    let cat = write_tree(&[("ok.yaml", "schema: olm.package\nname: foo\n")]);
    let f = std::fs::File::create(cat.path().join("big.yaml")).expect("create");
    f.set_len(3 << 30).expect("sparse");
    let r = run(&["catalog", "validate", p(cat.path())]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    assert_mentions(&r, &["big.yaml", "256 MiB", "--max-file-size"]);
    // ... and read when the limit allows it is not needed: a smaller limit refuses small files.
    let r = run(&[
        "catalog",
        "validate",
        "--max-file-size",
        "10",
        p(&cat.path().join("ok.yaml")),
    ]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    assert_mentions(&r, &["ok.yaml", "10 bytes"]);

    // A FIFO in a bundle's manifests/, as annotations.yaml, and a link to /dev/zero.
    for (name, what) in [
        ("manifests/pipe.yaml", "FIFO"),
        ("metadata/zz.yaml", "FIFO"),
    ] {
        let b = bundle_dir(&[]);
        mkfifo(&b.path().join(name));
        for cmd in [&["bundle", "validate"][..], &["catalog", "render"][..]] {
            let mut args = cmd.to_vec();
            args.push(p(b.path()));
            let r = run(&args);
            assert_ne!(r.bounded(PARSE_RSS), 0, "{args:?}: {r:?}");
            assert_mentions(&r, &[name.rsplit('/').next().unwrap(), what]);
        }
    }
    let b = bundle_dir(&[]);
    std::os::unix::fs::symlink("/dev/zero", b.path().join("manifests/zero.yaml")).expect("link");
    let r = run(&["bundle", "validate", p(b.path())]);
    assert_eq!(r.bounded(PARSE_RSS), 1, "{r:?}");
    assert_mentions(&r, &["zero.yaml", "character device"]);

    // Explicit paths pointing at devices or FIFOs: usage errors naming them.
    let base = upgrade_base();
    let r = run(&[
        "check",
        "upgrade",
        p(&base),
        p(&base),
        "--policy",
        "/dev/zero",
    ]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    assert_mentions(&r, &["/dev/zero", "character device"]);
    let tmp = tempfile::tempdir().expect("tmp");
    let fifo = tmp.path().join("in.yaml");
    mkfifo(&fifo);
    let out = tmp.path().join("out");
    let r = run(&[
        "bundle",
        "generate",
        "--manifests",
        p(&fifo),
        "--package",
        "demo",
        "--version",
        "1.0.0",
        "--channels",
        "stable",
        "-O",
        p(&out),
    ]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    assert_mentions(&r, &["in.yaml", "FIFO"]);
    let r = run(&[
        "bundle",
        "generate",
        "--manifests",
        p(&base.join("manifests")),
        "--csv-base",
        "/dev/zero",
        "--package",
        "demo",
        "--version",
        "1.0.0",
        "--channels",
        "stable",
        "-O",
        p(&out),
    ]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    let cat = write_tree(&[("c.yaml", "schema: olm.package\nname: demo\n")]);
    let r = run(&["check", "catalog", p(cat.path()), "--bundles", "/dev/zero"]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    // A package directory whose ci.yaml is a FIFO (check history).
    let pkg = tempfile::tempdir().expect("pkg");
    let v = pkg.path().join("1.0.0");
    for f in [
        "manifests/demo.clusterserviceversion.yaml",
        "manifests/widgets.crd.yaml",
        "metadata/annotations.yaml",
    ] {
        std::fs::create_dir_all(v.join(f).parent().unwrap()).unwrap();
        std::fs::copy(base.join(f), v.join(f)).expect("copy");
    }
    mkfifo(&pkg.path().join("ci.yaml"));
    let r = run(&["check", "history", p(pkg.path())]);
    assert_eq!(r.bounded(PARSE_RSS), 2, "{r:?}");
    assert_mentions(&r, &["ci.yaml", "FIFO"]);
}

#[test]
fn files_that_do_not_load_fail_every_loading_command() {
    let good = format!(
        "{}---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n{}",
        common::PKG,
        common::bundle("1.0.0")
    );
    let cat = write_tree(&[
        ("foo/catalog.yaml", &good),
        ("foo/broken.yaml", "schema: x\nname: \u{1}\n"),
    ]);
    std::fs::write(
        cat.path().join("foo/broken.yaml"),
        b"schema: olm.bundle\nname: \xff\n",
    )
    .unwrap();
    let clean = write_tree(&[("foo/catalog.yaml", &good)]);
    let (bad, ok) = (p(cat.path()), p(clean.path()));
    let cmds: Vec<Vec<&str>> = vec![
        vec!["catalog", "validate", bad],
        vec!["catalog", "lint", bad],
        vec!["catalog", "ls", bad],
        vec!["catalog", "graph", bad, "--format", "text"],
        vec!["catalog", "path", bad, "-p", "foo", "--from", "0.9.0"],
        vec!["catalog", "check-upgrades", "--base", bad, ok],
        vec!["catalog", "check-upgrades", "--base", ok, bad],
        vec!["check", "catalog", bad, "--bundles", ok],
    ];
    for args in cmds {
        let r = run(&args);
        assert_ne!(r.bounded(PARSE_RSS), 0, "{args:?} passed: {r:?}");
        assert_mentions(&r, &["broken.yaml", "not UTF-8"]);
    }
    // The same commands pass on the catalog without the broken file.
    let r = run(&["catalog", "ls", ok]);
    assert_eq!(r.bounded(PARSE_RSS), 0, "{r:?}");
}

#[test]
fn catalogs_given_as_fifos_or_devices_are_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let fifo = tmp.path().join("catalog.yaml");
    mkfifo(&fifo);
    for target in [p(&fifo), "/dev/null", "/dev/zero"] {
        for cmd in ["validate", "lint", "ls"] {
            let r = run(&["catalog", cmd, target]);
            assert_eq!(r.bounded(PARSE_RSS), 2, "{cmd} {target}: {r:?}");
            assert_mentions(&r, &[target, "not a catalog directory or file"]);
        }
    }
}

#[test]
fn unparseable_kubernetes_versions_are_usage_errors() {
    let base = upgrade_base();
    let b = bundle_dir(&[]);
    for bad in ["1.28-abc", "1.28-", "1.28-1.31-1.32", "abc"] {
        let r = run(&["check", "upgrade", p(&base), p(&base), "--k8s-version", bad]);
        assert_eq!(r.bounded(PARSE_RSS), 2, "{bad}: {r:?}");
        let r = run(&["bundle", "validate", p(b.path()), "--k8s-version", bad]);
        assert_eq!(r.bounded(PARSE_RSS), 2, "{bad}: {r:?}");
        let pol = write_tree(&[("p.yaml", &format!("k8sVersion: \"{bad}\"\n"))]);
        let policy = pol.path().join("p.yaml");
        let r = run(&[
            "check",
            "upgrade",
            p(&base),
            p(&base),
            "--policy",
            p(&policy),
        ]);
        assert_eq!(r.bounded(PARSE_RSS), 2, "{bad}: {r:?}");
        assert_mentions(&r, &["p.yaml:1:"]);
    }
    // A good range is accepted (the pair itself has findings: the version does not go up).
    let r = run(&[
        "check",
        "upgrade",
        p(&base),
        p(&base),
        "--k8s-version",
        "1.28-1.31",
    ]);
    assert_eq!(r.bounded(PARSE_RSS), 1, "{r:?}");
    assert_mentions(&r, &["SKW001"]);
}

/// Issue 39 §12: a deploymentConfig is merged in linear time. 100,000 env variables and
/// tolerations (quadratic merging took about 5 s for 20,000, so the watchdog would end this
/// run) reach the Deployment as upstream merges them: variables new to the container are
/// appended, a name given twice twice (`applyEnvironmentConfig` indexes the container's only),
/// and an equal toleration once (`applyTolerationsConfig`).
#[test]
fn a_huge_deployment_config_is_merged_in_linear_time() {
    // Built and read as text: a test process grown by a parsed tree would lend its size to
    // every child forked meanwhile (a child's peak RSS counts the parent's pages it was forked
    // with), and the other tests here bound their children's.
    const N: usize = 100_000;
    let mut config = String::from("{\"env\": [");
    for i in 0..N {
        config.push_str(&format!("{{\"name\": \"V{i}\", \"value\": \"x\"}}, "));
    }
    config.push_str("{\"name\": \"V7\", \"value\": \"again\"}], \"tolerations\": [");
    for i in 0..N {
        config.push_str(&format!(
            "{{\"key\": \"k{i}\", \"operator\": \"Exists\"}}, "
        ));
    }
    config.push_str("{\"key\": \"k7\", \"operator\": \"Exists\"}]}");
    let b = bundle_dir(&[("dc.json", &config)]);
    drop(config);
    let dc = b.path().join("dc.json");
    let r = run(&[
        "bundle",
        "render",
        "--olmv1",
        p(b.path()),
        "--install-namespace",
        "ops",
        "--deployment-config",
        p(&dc),
        "-o",
        "json",
    ]);
    assert_eq!(r.bounded(1 << 30), 0, "{}", r.stderr);
    // `-o json` is pretty: a variable's name, then its value, one line each.
    let mut env: Vec<(&str, &str)> = Vec::new();
    let mut keys = 0;
    let mut lines = r.stdout.lines().map(str::trim);
    while let Some(l) = lines.next() {
        if let Some(name) = l.strip_prefix("\"name\": \"V") {
            let value = lines.next().unwrap_or_default();
            env.push((name, value));
        } else if l.starts_with("\"key\": \"k") {
            keys += 1;
        }
    }
    assert_eq!(env.len(), N + 1);
    assert_eq!(env[7], ("7\",", "\"value\": \"x\""));
    assert_eq!(env[N], ("7\",", "\"value\": \"again\""));
    assert_eq!(keys, N);
}
