//! Hostile upgrade graphs (issue 14, algorithmic blowups), the reproducers: each runs the CLI
//! as a child with an address-space limit, a watchdog and its peak RSS measured
//! (cli/tests/common/bounded.rs). Time is not asserted here (`cargo bench --bench graphs` measures
//! it); the watchdog only catches runs that would not end.
//!
//! - every entry of a long channel with the universal `skipRange: '>=0.0.0'` (the pairwise
//!   graph was quadratic: 5.3 GB and 667 MB of output for 2,000 entries);
//! - a 2,000-entry replaces chain (lint was cubic in its length);
//! - 2,000 channels of 50 entries (lint was quadratic in the channels).

#![cfg(unix)]

mod common;

use common::bounded::run;
use common::cli::p;

/// The bound for the graph attacks: the issue accepts 1 GB for 3,000 universal skipRanges;
/// the graph needs far less once ranges are runs rather than edges.
const GRAPH_RSS: u64 = 256 << 20;

/// A package `p` with `n` bundles `p.v0.<i>.0` and `channels` channels `c<k>` holding all of
/// them in a replaces chain, each entry (but the first) with `skip_range` when given.
fn catalog(n: usize, channels: usize, skip_range: Option<&str>) -> tempfile::TempDir {
    use std::fmt::Write as _;
    let mut s =
        String::from("{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"c0\"}\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "{{\"schema\":\"olm.bundle\",\"name\":\"p.v0.{i}.0\",\"package\":\"p\",\"image\":\"quay.io/p/b:v0.{i}.0\",\"properties\":[{{\"type\":\"olm.package\",\"value\":{{\"packageName\":\"p\",\"version\":\"0.{i}.0\"}}}}]}}"
        );
    }
    for c in 0..channels {
        let entries: Vec<String> = (0..n)
            .map(|i| match (i, skip_range) {
                (0, _) => "{\"name\":\"p.v0.0.0\"}".to_string(),
                (_, Some(r)) => format!(
                    "{{\"name\":\"p.v0.{i}.0\",\"replaces\":\"p.v0.{}.0\",\"skipRange\":\"{r}\"}}",
                    i - 1
                ),
                (_, None) => format!(
                    "{{\"name\":\"p.v0.{i}.0\",\"replaces\":\"p.v0.{}.0\"}}",
                    i - 1
                ),
            })
            .collect();
        let _ = writeln!(
            s,
            "{{\"schema\":\"olm.channel\",\"name\":\"c{c}\",\"package\":\"p\",\"entries\":[{}]}}",
            entries.join(",")
        );
    }
    common::write_tree(&[("p/catalog.json", &s)])
}

/// `catalog path` from the oldest bundle under `sem`, as JSON, with its exit code.
fn path_json(dir: &str, sem: &str) -> (i32, serde_json::Value) {
    let r = run(&[
        "catalog",
        "path",
        dir,
        "-p",
        "p",
        "--from",
        "p.v0.0.0",
        "--semantics",
        sem,
        "-o",
        "json",
    ]);
    let code = r.bounded(GRAPH_RSS);
    let v = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    (code, v)
}

#[test]
fn universal_skip_ranges_cost_runs_not_pairs() {
    let n = 3_000;
    let dir = catalog(n, 1, Some(">=0.0.0"));
    let d = p(dir.path());
    // JSON: every range once, with the run of entries it contains.
    let r = run(&["catalog", "graph", d, "--format", "json"]);
    assert_eq!(r.bounded(GRAPH_RSS), 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let ch = &v["packages"][0]["channels"][0];
    assert_eq!(ch["edges"].as_array().expect("edges").len(), n - 1);
    let ranges = ch["skipRanges"].as_array().expect("skipRanges");
    assert_eq!(ranges.len(), n - 1);
    let pairs: u64 = ranges
        .iter()
        .map(|x| x["count"].as_u64().expect("count"))
        .sum();
    assert_eq!(
        pairs,
        ((n - 1) * (n - 1)) as u64,
        "every other entry, per range"
    );
    assert!(r.stdout.len() < 4 << 20, "{} bytes", r.stdout.len());
    // Text and DOT summarize the long runs.
    for format in ["text", "dot"] {
        let r = run(&["catalog", "graph", d, "--format", format]);
        assert_eq!(r.bounded(GRAPH_RSS), 0, "{format}: {}", r.stderr);
        assert!(r.stdout.contains("2999 entries"), "{format}");
        assert!(
            r.stdout.len() < 4 << 20,
            "{format}: {} bytes",
            r.stdout.len()
        );
    }
    // Lint: every range admits the bundle's own version (GRAPH006); OLM v0 users, whose
    // closest-to-head candidate is always the head's predecessor, go round in a loop (GRAPH008).
    let r = run(&["catalog", "lint", d, "-o", "json"]);
    assert_eq!(r.bounded(GRAPH_RSS), 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let count = |code: &str| {
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["code"] == code)
            .count()
    };
    assert_eq!(count("GRAPH006"), n - 1);
    assert_eq!(
        count("GRAPH009"),
        0,
        "OLM v1 takes the head from everywhere"
    );
    // Path: OLM v1 jumps straight to the head.
    let (code, v) = path_json(d, "v1");
    assert_eq!(code, 0);
    assert_eq!(v["hops"].as_array().expect("hops").len(), 1);
    assert_eq!(v["end"], "p.v0.2999.0");
    // check catalog: the pairs without bundle contents are counted, not kept. The contents of
    // one bundle are given, so no edge can be checked: EDGE002 (exit 1).
    let one = common::write_tree(&[
        (
            "p/0.0.0/manifests/csv.yaml",
            "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: p.v0.0.0\nspec:\n  version: 0.0.0\n",
        ),
        (
            "p/0.0.0/metadata/annotations.yaml",
            "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n",
        ),
    ]);
    let r = run(&["check", "catalog", d, "--bundles", p(one.path())]);
    assert_eq!(r.bounded(GRAPH_RSS), 1, "{}", r.stderr);
    assert!(r.stdout.contains("error[EDGE002]"), "{}", r.stdout);
    // Distinct pairs: each range's; every replaces edge is one of them.
    let all = (n - 1) * (n - 1);
    assert!(
        r.stdout
            .contains(&format!("0 edges checked, {all} not checked")),
        "{}",
        r.stdout
    );
}

/// Mermaid keeps `opm alpha render-graph`'s layout (one edge per entry a range contains, so
/// quadratic output, as opm's), streamed: memory stays flat.
#[test]
fn mermaid_of_universal_skip_ranges_streams() {
    let n = 600;
    let dir = catalog(n, 1, Some(">=0.0.0"));
    let r = run(&["catalog", "graph", p(dir.path()), "--format", "mermaid"]);
    assert_eq!(r.bounded(GRAPH_RSS), 0, "{}", r.stderr);
    let ranged = r.stdout.matches("\"skipRange(>=0.0.0)\"").count();
    // opm draws an edge from every entry in the range, the entry itself included.
    assert_eq!(ranged, (n - 1) * n);
    assert!(r.stdout.len() > 30 << 20, "{}", r.stdout.len());
    assert!(r.max_rss < 64 << 20, "{} MiB", r.max_rss >> 20);
}

#[test]
fn lint_and_path_of_a_long_replaces_chain() {
    let dir = catalog(2_000, 1, None);
    let d = p(dir.path());
    let r = run(&["catalog", "lint", d]);
    assert_eq!(r.bounded(GRAPH_RSS), 0, "{r:?}");
    for sem in ["v0", "v1"] {
        let (code, v) = path_json(d, sem);
        assert_eq!(code, 0, "{sem}");
        assert_eq!(v["hops"].as_array().expect("hops").len(), 1_999, "{sem}");
        assert_eq!(v["stop"], "head");
    }
}

#[test]
fn lint_of_many_channels() {
    let dir = catalog(50, 2_000, None);
    let r = run(&["catalog", "lint", p(dir.path()), "-o", "json"]);
    assert_eq!(r.bounded(GRAPH_RSS), 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["findings"].as_array().expect("findings").len(), 0);
    // One channel that lacks the middle of the chain: every other channel's users who were
    // upgraded past it are trapped when they switch (GRAPH010, one finding per channel pair
    // through the missing target).
    let mut text = std::fs::read_to_string(dir.path().join("p/catalog.json")).expect("read");
    let last = text
        .rfind("{\"schema\":\"olm.channel\"")
        .expect("a channel");
    let gap = text[last..]
        .replace(",{\"name\":\"p.v0.25.0\",\"replaces\":\"p.v0.24.0\"}", "")
        .replace("\"replaces\":\"p.v0.25.0\"", "\"replaces\":\"p.v0.24.0\"");
    text.replace_range(last.., &gap);
    std::fs::write(dir.path().join("p/catalog.json"), text).expect("write");
    let r = run(&["catalog", "lint", p(dir.path()), "-o", "json"]);
    r.bounded(GRAPH_RSS);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let traps: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "GRAPH010")
        .collect();
    // From p.v0.24.0 every other channel goes to p.v0.25.0, which c1999 lacks; from
    // p.v0.25.0, c1999's chain is not reachable (nothing there names it).
    assert_eq!(traps.len(), 1_999, "{}", r.stdout.len());
    assert!(
        traps[0]["message"]
            .as_str()
            .expect("message")
            .starts_with("p.v0.24.0 upgrades to p.v0.25.0 in channel c"),
        "{}",
        traps[0]
    );
}
