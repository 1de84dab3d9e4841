//! Upgrade paths on the real v4.18 catalog. OLM v0 reaches the head from every entry except
//! those whose every direct successor is skipped (v0 drops skipped entries from the channel
//! order, operator-lifecycle-manager#2260); OLM v1 may stop earlier at downgrade edges and
//! pre-release heads. Every stop is explained by a lint finding.

mod common;

use std::collections::BTreeSet;

use olmctl::graph::CatalogGraphs;
use olmctl::graph::path::{Semantics, Stop, resolve};
use olmctl::graph::{Installed, render};

/// Every entry from which a resolution stops before the head, as (semantics, package, channel,
/// bundle).
fn stuck(sem: Semantics) -> BTreeSet<(String, String, String)> {
    let loaded = olmctl::fbc::load::load(&[common::fixture_catalog()]).expect("load");
    let graphs = CatalogGraphs::build(&loaded.cfg, None);
    let mut out = BTreeSet::new();
    let mut checked = 0;
    for chans in graphs.packages.values() {
        for g in chans.values() {
            for n in g.graph.node_indices() {
                let p = resolve(g, Installed::of(g, n), sem, None);
                checked += 1;
                // Every hop is an existing edge of the graph.
                let mut prev = n;
                for h in &p.hops {
                    let to = g.node(&h.to).expect("hop target is an entry");
                    assert!(g.has_edge(prev, to, h.edge), "{p:#?}");
                    assert_eq!(g.edge_kind(prev, to), Some(h.edge), "{p:#?}");
                    prev = to;
                }
                if p.stop != Stop::Head {
                    out.insert((p.package.clone(), p.channel.clone(), p.from.clone()));
                } else {
                    assert_eq!(Some(p.end.as_str()), p.head.as_deref());
                }
            }
        }
    }
    assert_eq!(checked, 841, "every channel entry of the fixture");
    out
}

fn flagged(code: &str) -> BTreeSet<(String, String, String)> {
    let loaded = olmctl::fbc::load::load(&[common::fixture_catalog()]).expect("load");
    olmctl::checks::graph::lint(&loaded.cfg)
        .into_iter()
        .filter(|f| f.code == code)
        .map(|f| {
            (
                f.subject.package.expect("package"),
                f.subject.channel.expect("channel"),
                f.subject.bundle.expect("bundle"),
            )
        })
        .collect()
}

/// OLM v0 reaches the head from all but the entries lint reports as GRAPH008: entries below a
/// chain of "replaces and skips the predecessor" (clusterpulse fast-v0, kubernaut-operator
/// candidate-v1), which `opm validate` accepts because skipped entries are never stranded, but
/// which OLM v0's `sortChannel` drops from the candidates.
#[test]
fn v0_stops_only_where_lint_says_so() {
    let s = stuck(Semantics::V0);
    assert_eq!(s, flagged("GRAPH008"));
    assert!(s.len() < 20, "{s:#?}");
}

/// Why v0 stops: each stuck entry has successors, all of them skipped by a newer entry, and the
/// mermaid picture with `--draw-v0-semantics` marks those successors `skipped` and draws every
/// edge out of the stuck entry as one v0 cannot take.
#[test]
fn v0_stops_are_entries_whose_successors_are_all_skipped() {
    let loaded = olmctl::fbc::load::load(&[common::fixture_catalog()]).expect("load");
    let graphs = CatalogGraphs::build(&loaded.cfg, None);
    let stuck = stuck(Semantics::V0);
    assert!(!stuck.is_empty());
    for (pkg, ch, bundle) in &stuck {
        let g = &graphs.packages[pkg][ch];
        let n = g.node(bundle).expect("entry");
        let succ = g.successors(n);
        assert!(!succ.is_empty(), "{pkg}/{ch}/{bundle} has successors");
        let mut picture = Vec::new();
        render::mermaid(&loaded.cfg, Some(pkg), Some(ch), true, &mut picture).expect("write");
        let picture = String::from_utf8(picture).expect("utf-8");
        let skipped_line = picture
            .lines()
            .find(|l| l.starts_with("class ") && l.ends_with("skipped"))
            .expect("a skipped class line");
        let dead: Vec<usize> = picture
            .lines()
            .find_map(|l| l.strip_prefix("linkStyle "))
            .and_then(|l| l.split(' ').next())
            .map(|ids| ids.split(',').map(|i| i.parse().expect("id")).collect())
            .unwrap_or_default();
        let links: Vec<&str> = picture.lines().filter(|l| l.contains("-->")).collect();
        for s in succ {
            let to = &g.graph[s].name;
            assert!(
                g.graph[s].skipped,
                "{pkg}/{ch}: {bundle} -> {to} is not skipped"
            );
            assert!(
                skipped_line.contains(&format!("{pkg}-{ch}-{to}")),
                "{skipped_line}"
            );
        }
        let from = format!("      {pkg}-{ch}-{bundle}[");
        for (i, l) in links.iter().enumerate() {
            if l.starts_with(&from) && !l.contains("-- skip -->") {
                assert!(
                    dead.contains(&i),
                    "link {i} `{l}` should be dashed under v0"
                );
            }
        }
    }
}

/// OLM v1 stops early only where lint reports GRAPH009 (slurm-operator's pre-release head
/// 1.0.1-1 is lower than 1.0.1, reached through a downgrade edge that lint reports as GRAPH007).
#[test]
fn v1_stops_only_where_lint_says_so() {
    let s = stuck(Semantics::V1);
    assert_eq!(s, flagged("GRAPH009"));
    let downgrades = flagged("GRAPH007");
    for (p, c, _) in &s {
        assert!(
            downgrades.iter().any(|(dp, dc, _)| dp == p && dc == c),
            "{p}/{c} has no downgrade edge"
        );
    }
}

#[test]
fn graph_json_heads_match_ls() {
    let loaded = olmctl::fbc::load::load(&[common::fixture_catalog()]).expect("load");
    let graphs = CatalogGraphs::build(&loaded.cfg, None);
    let mut json = Vec::new();
    render::json(&graphs, &mut json).expect("write");
    let v: serde_json::Value = serde_json::from_slice(&json).expect("json");
    let o = std::process::Command::new(crate::common::olmctl_bin())
        .args(["catalog", "ls", "-o", "json"])
        .arg(common::fixture_catalog())
        .output()
        .expect("run");
    let ls: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let heads = |doc: &serde_json::Value| -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for p in doc["packages"].as_array().expect("packages") {
            for c in p["channels"].as_array().expect("channels") {
                out.push((
                    p["name"].as_str().expect("name").to_string(),
                    c["name"].as_str().expect("name").to_string(),
                    c["head"].as_str().expect("head").to_string(),
                ));
            }
        }
        out
    };
    assert_eq!(heads(&v).len(), 78);
    assert_eq!(heads(&v), heads(&ls));
}
