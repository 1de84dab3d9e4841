//! The finding flags every reporting command takes (issue 40): `--ignore` and `--select
//! '!CODE'`, the per-code summary, `--baseline`/`--write-baseline` with fingerprints that
//! survive line moves; and `catalog path`'s refusals.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn olmctl_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(crate::common::olmctl_bin())
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run olmctl")
}

fn olmctl(args: &[&str]) -> Output {
    olmctl_in(Path::new("."), args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)))
}

/// Two packages of the fixture catalog whose channels lint finds problems in.
fn lint_tree() -> tempfile::TempDir {
    let src = common::fixture_catalog();
    let mut files = Vec::new();
    for p in ["clusterpulse", "kubernaut-operator"] {
        let t = std::fs::read_to_string(src.join(p).join("catalog.yaml")).expect("fixture");
        files.push((format!("cat/{p}/catalog.yaml"), t));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    common::write_tree(&refs)
}

#[test]
fn a_baseline_accepts_known_findings_across_line_moves() {
    let dir = lint_tree();
    let cwd = dir.path();
    let before = olmctl_in(cwd, &["catalog", "lint", "cat", "-o", "json"]);
    assert_eq!(before.status.code(), Some(1));
    let total = json(&before)["findings"]
        .as_array()
        .expect("findings")
        .len();
    assert!(total > 2);
    // Written with the --baseline file named once.
    let w = olmctl_in(
        cwd,
        &[
            "catalog",
            "lint",
            "cat",
            "--baseline",
            "b.json",
            "--write-baseline",
        ],
    );
    assert_eq!(w.status.code(), Some(0), "{}", text(&w.stderr));
    assert!(text(&w.stdout).starts_with(&format!("wrote {total} findings to the baseline b.json")));
    let with = |args: &[&str]| {
        let mut a = vec!["catalog", "lint", "cat", "--baseline", "b.json"];
        a.extend(args);
        olmctl_in(cwd, &a)
    };
    let o = with(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert_eq!(out.matches(" (in baseline): ").count(), total, "{out}");
    assert!(out.contains(&format!(", {total} in baseline (")), "{out}");
    // Lines move: a comment block above every blob of one file.
    let f = cwd.join("cat/clusterpulse/catalog.yaml");
    let t = std::fs::read_to_string(&f).expect("read");
    std::fs::write(&f, format!("# moved\n# down\n# three lines\n{t}")).expect("write");
    let o = with(&["-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let v = json(&o);
    assert_eq!(v["summary"]["unchanged"].as_u64(), Some(total as u64));
    assert!(
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .all(|f| f["baselineState"] == "unchanged")
    );
    // A new problem fails, alone: the hulft channel with its base's replaces dropped (a second
    // head).
    let hulft = std::fs::read_to_string(
        common::shared_fixtures().join("first-day/catalogs/v4.21/hulft/catalog.yaml"),
    )
    .expect("fixture")
    .replacen(
        "  replaces: hulft.v10.3.0\n  skips:\n  - hulft.v10.4.0\n  - hulft.v10.5.0",
        "  skips:\n  - hulft.v10.4.0\n  - hulft.v10.5.0",
        1,
    );
    std::fs::create_dir_all(cwd.join("cat/hulft")).expect("mkdir");
    std::fs::write(cwd.join("cat/hulft/catalog.yaml"), hulft).expect("write");
    let o = with(&["-o", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let v = json(&o);
    let fresh: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["baselineState"] == "new")
        .collect();
    assert!(!fresh.is_empty());
    assert!(fresh.iter().all(|f| f["package"] == "hulft"), "{fresh:#?}");
    // SARIF marks them the same way and carries the fingerprints.
    let o = with(&["-o", "sarif"]);
    let s = json(&o);
    let results = s["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), total + fresh.len());
    assert!(
        results
            .iter()
            .all(|r| r["partialFingerprints"]["olmctl/v1"].is_string())
    );
    assert_eq!(
        results
            .iter()
            .filter(|r| r["baselineState"] == "new")
            .count(),
        fresh.len()
    );
    // A file that is not a baseline, or none at all, is a usage error.
    std::fs::write(cwd.join("bad.json"), "[1]").expect("write");
    for b in ["bad.json", "missing.json"] {
        let o = olmctl_in(cwd, &["catalog", "lint", "cat", "--baseline", b]);
        assert_eq!(o.status.code(), Some(2), "{b}");
    }
    let o = olmctl_in(cwd, &["catalog", "lint", "cat", "--write-baseline"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn ignored_codes_and_the_per_code_summary() {
    let dir = lint_tree();
    let cwd = dir.path();
    let v = json(&olmctl_in(cwd, &["catalog", "lint", "cat", "-o", "json"]));
    let codes = v["summary"]["codes"].as_object().expect("codes").clone();
    assert!(codes.len() > 1, "{codes:?}");
    // The text summary says the same, most frequent first.
    let mut counts: Vec<(String, u64)> = codes
        .iter()
        .map(|(c, n)| (c.clone(), n.as_u64().expect("count")))
        .collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let line: Vec<String> = counts.iter().map(|(c, n)| format!("{c} {n}")).collect();
    let out = text(&olmctl_in(cwd, &["catalog", "lint", "cat"]).stdout);
    assert!(
        out.contains(&format!("\nby code: {}\n", line.join(", "))),
        "{out}"
    );
    // --ignore by code and by prefix; the exit status follows what is left.
    let first = &counts[0].0;
    let o = olmctl_in(
        cwd,
        &["catalog", "lint", "cat", "-o", "json", "--ignore", first],
    );
    let left = json(&o)["summary"]["codes"]
        .as_object()
        .expect("codes")
        .clone();
    assert!(!left.contains_key(first.as_str()) && left.len() == codes.len() - 1);
    let o = olmctl_in(cwd, &["catalog", "lint", "cat", "--ignore", "GRAPH"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = olmctl_in(cwd, &["catalog", "lint", "cat", "--ignore", "GRAPH0088"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("did you mean GRAPH008?"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn bundle_validate_select_takes_negated_codes() {
    let dir = common::shared_fixtures().join("first-day/operators/cloudnative-pg");
    let bundle = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .min()
        .expect("a bundle");
    let b = bundle.display().to_string();
    let codes = |extra: &[&str]| -> Vec<String> {
        let mut a = vec!["bundle", "validate", b.as_str(), "-o", "json"];
        a.extend(extra);
        let o = olmctl(&a);
        let mut c: Vec<String> = json(&o)["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["code"].as_str().expect("code").to_string())
            .collect();
        c.dedup();
        c
    };
    let all = codes(&[]);
    let Some(first) = all.first().cloned() else {
        panic!("the bundle has findings to leave out");
    };
    let negated = format!("!{first}");
    let without = codes(&["--select", &negated]);
    let want: Vec<String> = all.iter().filter(|c| **c != first).cloned().collect();
    assert_eq!(without, want);
    assert_eq!(codes(&["--ignore", &first]), want);
}

#[test]
fn catalog_path_refuses_what_the_catalog_lacks() {
    let cat = common::shared_fixtures().join("first-day/catalogs/v4.21");
    let c = cat.display().to_string();
    let path = |args: &[&str]| {
        let mut a = vec!["catalog", "path", c.as_str()];
        a.extend(args);
        olmctl(&a)
    };
    let o = path(&["-p", "cloud-native-postgres", "--from", "1.0.0"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(e.contains("did you mean `cloudnative-pg`?"), "{e}");
    assert!(
        e.contains("packages: clife, cloudnative-pg, crunchy-postgres-operator"),
        "{e}"
    );
    let o = path(&["-p", "hulft", "--from", "banana"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("neither a bundle of package `hulft` nor a version"));
    // A name with a version need not be in the catalog (a pruned bundle): resolved, said so,
    // and here stuck, as nothing names it.
    let o = path(&["-p", "hulft", "--from", "hulft.v10.3.1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("no further upgrade"));
    assert!(
        text(&o.stderr).contains("note: `hulft.v10.3.1` is no bundle of package `hulft` in this catalog: taken as an installed version the catalog no longer has"),
        "{}",
        text(&o.stderr)
    );
    // Another package's CSV, and a version newer than every bundle, are refused.
    let o = path(&["-p", "hulft", "--from", "clife.v1.18.6-cee.2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--from `clife.v1.18.6-cee.2` is not a bundle of package `hulft`, whose bundles are named hulft.v<version>"),
        "{}",
        text(&o.stderr)
    );
    for from in ["99.0.0", "hulft.v99.0.0"] {
        let o = path(&["-p", "hulft", "--from", from]);
        assert_eq!(o.status.code(), Some(2), "{from}");
        assert!(
            text(&o.stderr).contains(&format!("--from `{from}` is newer than every bundle of package `hulft` (the newest is 10.6.0)")),
            "{}",
            text(&o.stderr)
        );
    }
    let o = path(&["-p", "hulft", "--from", "hulft.v10.30"]);
    assert!(
        text(&o.stderr).contains("(did you mean `hulft.v10.3.0`?)"),
        "{}",
        text(&o.stderr)
    );
    // A skipped entry is no upgrade target for OLM v0: the path passes it by.
    let o = path(&[
        "-p",
        "hulft",
        "--from",
        "hulft.v10.3.0",
        "--to",
        "hulft.v10.4.0",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("--to `hulft.v10.4.0`: not reachable as an upgrade target: it is skipped by hulft.v10.5.0, hulft.v10.6.0"), "{e}");
    // The head is.
    let o = path(&[
        "-p",
        "hulft",
        "--from",
        "hulft.v10.3.0",
        "--to",
        "hulft.v10.6.0",
    ]);
    assert_eq!(o.status.code(), Some(0));
}
