//! Upgrade-graph lint: a hand-written channel per GRAPH code, the v0/v1 differences the
//! reference spells out, and property tests on random channels.

mod common;

use olmctl::diag::Finding;
use olmctl::graph::path::{Semantics, next_hop, resolve};
use olmctl::graph::{CatalogGraphs, Installed, compare_versions};
use proptest::prelude::*;

/// A catalog with package `foo`, bundles at `versions` (named `foo.v<version>`) and one channel
/// `stable` whose entries are `rows` (name suffix, replaces suffix, skips suffixes, skipRange).
fn catalog(versions: &[&str], rows: &[(&str, &str, &[&str], &str)]) -> String {
    let mut s = String::from("---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n");
    for v in versions {
        s.push_str(&common::bundle(v));
    }
    s.push_str("---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n");
    for (n, r, skips, range) in rows {
        s.push_str(&format!("- name: foo.v{n}\n"));
        if !r.is_empty() {
            s.push_str(&format!("  replaces: foo.v{r}\n"));
        }
        if !skips.is_empty() {
            let q: Vec<String> = skips.iter().map(|x| format!("foo.v{x}")).collect();
            s.push_str(&format!("  skips: [{}]\n", q.join(", ")));
        }
        if !range.is_empty() {
            s.push_str(&format!("  skipRange: '{range}'\n"));
        }
    }
    s
}

fn lint(text: &str) -> Vec<Finding> {
    let dir = common::write_tree(&[("c.yaml", text)]);
    let loaded = olmctl::fbc::load::load(&[dir.path().to_path_buf()]).expect("load");
    olmctl::checks::graph::lint(&loaded.cfg)
}

fn codes_for(f: &[Finding], code: &str) -> Vec<String> {
    f.iter()
        .filter(|x| x.code == code)
        .map(|x| x.subject.bundle.clone().unwrap_or_default())
        .collect()
}

const V3: &[&str] = &["1.0.0", "2.0.0", "3.0.0"];

#[test]
fn clean_linear_channel_has_no_findings() {
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "2.0.0", &[], ""),
        ],
    ));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn graph001_cycles_and_self_replaces() {
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "2.0.0", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "1.0.0", &[], ""),
        ],
    ));
    assert!(
        f.iter()
            .any(|x| x.code == "GRAPH001" && x.message.contains("loops")),
        "{f:#?}"
    );
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "1.0.0", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "2.0.0", &[], ""),
        ],
    ));
    assert!(
        codes_for(&f, "GRAPH001").contains(&"foo.v1.0.0".to_string()),
        "{f:#?}"
    );
}

#[test]
fn graph002_several_heads() {
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "1.0.0", &[], ""),
        ],
    ));
    let h: Vec<&Finding> = f.iter().filter(|x| x.code == "GRAPH002").collect();
    assert_eq!(h.len(), 1, "{f:#?}");
    assert!(h[0].message.contains("foo.v2.0.0, foo.v3.0.0"));
    assert_eq!(h[0].location.as_ref().expect("loc").line, 36); // 4 package lines + 3 bundles of 10
}

#[test]
fn graph003_stranded_and_graph004_skipped_in_chain() {
    // v3 replaces and skips v2; v2 replaces v1 (opm's SkippedReplacesStranded).
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "2.0.0", &["2.0.0"], ""),
        ],
    ));
    assert_eq!(codes_for(&f, "GRAPH003"), vec!["foo.v1.0.0"]);
    assert_eq!(codes_for(&f, "GRAPH004"), vec!["foo.v2.0.0"]);
}

#[test]
fn graph004_z_stream_pattern_is_quiet() {
    // The certified index's z-stream channels (hulft, dell, nutanix): every release replaces
    // the same base and skips the ones in between. Nothing replaces the skipped entries, the
    // walk from the head never visits them, and every user reaches the head.
    let f = lint(&catalog(
        &["1.0.0", "1.1.0", "1.2.0", "1.3.0"],
        &[
            ("1.0.0", "", &[], ""),
            ("1.1.0", "1.0.0", &[], ""),
            ("1.2.0", "1.0.0", &["1.1.0"], ""),
            ("1.3.0", "1.0.0", &["1.1.0", "1.2.0"], ""),
        ],
    ));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn graph004_names_the_users_a_skipped_entry_leaves_behind() {
    // v2 is skipped by v3 and is off the chain (v3 replaces nothing): its `replaces v1` is
    // the only edge from v1, and OLM v0 ignores it.
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "", &["2.0.0"], ""),
        ],
    ));
    let g: Vec<&Finding> = f.iter().filter(|x| x.code == "GRAPH004").collect();
    assert_eq!(g.len(), 1, "{f:#?}");
    let m = &g[0].message;
    assert!(m.contains("foo.v2.0.0 is skipped by foo.v3.0.0:"), "{m}");
    assert!(!m.contains("replaces chain"), "{m}");
    assert!(m.contains("users on foo.v1.0.0"), "{m}");
    assert!(m.contains("never reach the head foo.v3.0.0"), "{m}");
    // On the chain, the message says so.
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "2.0.0", &["2.0.0"], ""),
        ],
    ));
    let g: Vec<&Finding> = f.iter().filter(|x| x.code == "GRAPH004").collect();
    assert!(
        g[0].message
            .contains("sits in the replaces chain from the head"),
        "{g:#?}"
    );
    // A skipped entry on the chain whose users are named by the head too: nobody relies on it.
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "2.0.0", &["2.0.0", "1.0.0"], ""),
        ],
    ));
    assert!(codes_for(&f, "GRAPH004").is_empty(), "{f:#?}");
}

#[test]
fn graph005_invalid_skip_range() {
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "2.0.0", &[], "^2.0.0"),
        ],
    ));
    let g: Vec<&Finding> = f.iter().filter(|x| x.code == "GRAPH005").collect();
    assert_eq!(g.len(), 1, "{f:#?}");
    let loc = g[0].location.as_ref().expect("loc");
    assert_eq!((loc.line, loc.column), (45, 14));
}

#[test]
fn graph006_skip_range_above_own_version() {
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ">=1.0.0 <=2.0.0"),
            ("3.0.0", "2.0.0", &[], ">=1.0.0"),
        ],
    ));
    assert_eq!(codes_for(&f, "GRAPH006"), vec!["foo.v2.0.0", "foo.v3.0.0"]);
    let ok = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ">=1.0.0 <2.0.0"),
            ("3.0.0", "2.0.0", &[], ""),
        ],
    ));
    assert!(codes_for(&ok, "GRAPH006").is_empty());
}

#[test]
fn graph007_downgrade_and_graph009_v1_stops() {
    // The head 1.0.0 replaces 2.0.0: v0 follows it, v1 never goes down.
    let f = lint(&catalog(
        &["2.0.0", "1.0.0"],
        &[("2.0.0", "", &[], ""), ("1.0.0", "2.0.0", &[], "")],
    ));
    assert_eq!(codes_for(&f, "GRAPH007"), vec!["foo.v1.0.0"]);
    assert_eq!(codes_for(&f, "GRAPH009"), vec!["foo.v2.0.0"]);
    assert!(codes_for(&f, "GRAPH008").is_empty());
}

#[test]
fn graph008_v0_stuck_below_skipped_chain() {
    // Each entry replaces and skips its predecessor: opm accepts it (all skipped, none
    // stranded), but OLM v0 only offers the head, which names just its predecessor.
    let f = lint(&catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &["1.0.0"], ""),
            ("3.0.0", "2.0.0", &["2.0.0"], ""),
        ],
    ));
    assert_eq!(codes_for(&f, "GRAPH008"), vec!["foo.v1.0.0"]);
    assert!(codes_for(&f, "GRAPH003").is_empty());
    // OLM v1 goes 1 -> 2 -> 3 through the skipped entry.
    assert!(codes_for(&f, "GRAPH009").is_empty());
}

#[test]
fn graph010_channel_switch_trap() {
    // stable: 1 -> 2 -> 4; fast: 1 -> 3 (3 replaces 1). A user on 1 following fast lands on 3,
    // below stable's head 4, and stable has no edge from 3: switching to stable strands them.
    // (The other way round, 2 is below fast's head 3 and fast has no edge from 2: a trap too.)
    let mut text = catalog(
        &["1.0.0", "2.0.0", "3.0.0", "4.0.0"],
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("4.0.0", "2.0.0", &[], ""),
        ],
    );
    text.push_str("---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n- name: foo.v1.0.0\n- name: foo.v3.0.0\n  replaces: foo.v1.0.0\n");
    let f = lint(&text);
    let g: Vec<&Finding> = f.iter().filter(|x| x.code == "GRAPH010").collect();
    assert_eq!(g.len(), 2, "{f:#?}");
    let fast = g
        .iter()
        .find(|x| x.subject.channel.as_deref() == Some("fast"))
        .expect("fast");
    assert_eq!(fast.subject.bundle.as_deref(), Some("foo.v3.0.0"));
    assert!(
        fast.message
            .contains("channel stable never reaches its head foo.v4.0.0"),
        "{}",
        fast.message
    );
    // A stable head whose skipRange covers 3.0.0, and a fast head covering 2.0.0: no trap.
    let fixed = text
        .replace(
            "- name: foo.v4.0.0\n  replaces: foo.v2.0.0\n",
            "- name: foo.v4.0.0\n  replaces: foo.v2.0.0\n  skipRange: '>=3.0.0 <4.0.0'\n",
        )
        .replace(
            "- name: foo.v3.0.0\n  replaces: foo.v1.0.0\n",
            "- name: foo.v3.0.0\n  replaces: foo.v1.0.0\n  skipRange: '>=2.0.0 <3.0.0'\n",
        );
    assert!(codes_for(&lint(&fixed), "GRAPH010").is_empty());
}

#[test]
fn graph011_default_channel_missing() {
    let text = catalog(
        V3,
        &[
            ("1.0.0", "", &[], ""),
            ("2.0.0", "1.0.0", &[], ""),
            ("3.0.0", "2.0.0", &[], ""),
        ],
    )
    .replace("defaultChannel: stable", "defaultChannel: fast");
    let f = lint(&text);
    let g: Vec<&Finding> = f.iter().filter(|x| x.code == "GRAPH011").collect();
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].location.as_ref().expect("loc").line, 2);
}

#[test]
fn every_graph_code_is_exercised_above() {
    let src = include_str!("graph_lint.rs");
    for c in olmctl::checks::graph::CODES {
        assert!(
            src.contains(&format!("\"{}\"", c.code)),
            "no test for {}",
            c.code
        );
    }
}

// Property tests on random channels.

fn random_channel() -> impl Strategy<Value = String> {
    (3usize..8)
        .prop_flat_map(|n| {
            let row = (
                proptest::option::of(0..n),
                proptest::collection::vec(0..n, 0..2),
                proptest::option::of((0..n, 0..n)),
            );
            (Just(n), proptest::collection::vec(row, n))
        })
        .prop_map(|(n, rows)| {
            let versions: Vec<String> = (0..n).map(|i| format!("1.{i}.0")).collect();
            let vr: Vec<&str> = versions.iter().map(String::as_str).collect();
            let rows: Vec<(String, String, Vec<String>, String)> = rows
                .into_iter()
                .enumerate()
                .map(|(i, (r, skips, range))| {
                    let r = r
                        .filter(|&r| r != i)
                        .map(|r| versions[r].clone())
                        .unwrap_or_default();
                    let skips = skips
                        .into_iter()
                        .filter(|&s| s != i)
                        .map(|s| versions[s].clone())
                        .collect();
                    let range = range
                        .map(|(a, b)| format!(">={} <{}", versions[a.min(b)], versions[a.max(b)]))
                        .unwrap_or_default();
                    (versions[i].clone(), r, skips, range)
                })
                .collect();
            let refs: Vec<(&str, &str, Vec<&str>, &str)> = rows
                .iter()
                .map(|(a, b, c, d)| {
                    (
                        a.as_str(),
                        b.as_str(),
                        c.iter().map(String::as_str).collect(),
                        d.as_str(),
                    )
                })
                .collect();
            let refs2: Vec<(&str, &str, &[&str], &str)> = refs
                .iter()
                .map(|(a, b, c, d)| (*a, *b, c.as_slice(), *d))
                .collect();
            catalog(&vr, &refs2)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn paths_follow_the_rules(text in random_channel()) {
        let dir = common::write_tree(&[("c.yaml", &text)]);
        let loaded = olmctl::fbc::load::load(&[dir.path().to_path_buf()]).expect("load");
        let graphs = CatalogGraphs::build(&loaded.cfg, None);
        let g = &graphs.packages["foo"]["stable"];
        for n in g.graph.node_indices() {
            let from = Installed::of(g, n);
            let h0 = next_hop(g, &from, Semantics::V0);
            let h1 = next_hop(g, &from, Semantics::V1);
            // v0 never lands on a skipped entry.
            if let Some((t, _)) = h0 {
                prop_assert!(!g.graph[t].skipped, "{text}");
            }
            // v1 never picks a lower version than v0 at a hop.
            if let (Some((a, _)), Some((b, _))) = (h0, h1) {
                prop_assert!(compare_versions(g.graph[b].key(), g.graph[a].key()).is_ge(), "{text}");
            }
            // Every reported path is made of existing edges.
            for sem in [Semantics::V0, Semantics::V1] {
                let p = resolve(g, from.clone(), sem, None);
                let mut prev = n;
                for hop in &p.hops {
                    let to = g.node(&hop.to).expect("entry");
                    prop_assert!(g.has_edge(prev, to, hop.edge), "{text}\n{p:#?}");
                    prev = to;
                }
            }
        }
        // Lint never panics and its stuck findings agree with the paths.
        let f = olmctl::checks::graph::lint(&loaded.cfg);
        prop_assert!(f.iter().all(|x| x.location.is_some()));
    }
}

/// Random packages of 2 to 4 channels over 6 bundles: each channel holds a random subset with
/// random `replaces`, `skips` and skipRanges.
fn random_channels() -> impl Strategy<Value = String> {
    let entry = (
        any::<bool>(),
        proptest::option::of(0usize..6),
        proptest::collection::vec(0usize..6, 0..2),
        proptest::option::of((0usize..6, 0usize..7)),
    );
    proptest::collection::vec(proptest::collection::vec(entry, 6), 2..5).prop_map(|channels| {
        let versions: Vec<String> = (0..6).map(|i| format!("1.{i}.0")).collect();
        let mut s = String::from("---\nschema: olm.package\nname: foo\ndefaultChannel: c0\n");
        for v in &versions {
            s.push_str(&common::bundle(v));
        }
        for (c, entries) in channels.iter().enumerate() {
            s.push_str(&format!(
                "---\nschema: olm.channel\npackage: foo\nname: c{c}\nentries:\n"
            ));
            for (i, (present, r, skips, range)) in entries.iter().enumerate() {
                if !present {
                    continue;
                }
                s.push_str(&format!("- name: foo.v{}\n", versions[i]));
                if let Some(r) = r.filter(|r| *r != i) {
                    s.push_str(&format!("  replaces: foo.v{}\n", versions[r]));
                }
                let sk: Vec<String> = skips
                    .iter()
                    .filter(|x| **x != i)
                    .map(|x| format!("foo.v{}", versions[*x]))
                    .collect();
                if !sk.is_empty() {
                    s.push_str(&format!("  skips: [{}]\n", sk.join(", ")));
                }
                if let Some((a, b)) = range {
                    s.push_str(&format!("  skipRange: '>=1.{a}.0 <1.{b}.0'\n"));
                }
            }
        }
        s
    })
}

/// GRAPH010 by its definition, pair by pair (quadratic in the channels): for each entry of
/// each channel, the v0 target; for each other channel that holds the entry but not the
/// target, whether that channel's head is reached from the target.
fn traps_by_definition(text: &str) -> Vec<String> {
    use olmctl::graph::path::{Stop, next_hop_scan};
    let dir = common::write_tree(&[("c.yaml", text)]);
    let loaded = olmctl::fbc::load::load(&[dir.path().to_path_buf()]).expect("load");
    let graphs = CatalogGraphs::build(&loaded.cfg, None);
    let mut out = Vec::new();
    for chans in graphs.packages.values() {
        for (c1, g1) in chans {
            for n1 in g1.graph.node_indices() {
                let Some((t, _)) = next_hop_scan(g1, &Installed::of(g1, n1), Semantics::V0) else {
                    continue;
                };
                let target = &g1.graph[t].name;
                for (c2, g2) in chans {
                    if c1 == c2
                        || g2.node(&g1.graph[n1].name).is_none()
                        || g2.node(target).is_some()
                    {
                        continue;
                    }
                    let Some(h2) = g2.head else { continue };
                    if compare_versions(g1.graph[t].key(), g2.graph[h2].key()).is_ge() {
                        continue;
                    }
                    if resolve(g2, Installed::of(g1, t), Semantics::V0, None).stop != Stop::Head {
                        out.push(format!(
                            "{} upgrades to {target} in channel {c1}, but from {target} channel {c2} never reaches its head {}: users switching to {c2} are stranded",
                            g1.graph[n1].name, g2.graph[h2].name
                        ));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Lint's grouped GRAPH010 finds exactly the traps of the pairwise definition.
    #[test]
    fn channel_switch_traps_match_the_definition(text in random_channels()) {
        let mut got: Vec<String> = lint(&text)
            .into_iter()
            .filter(|f| f.code == "GRAPH010")
            .map(|f| f.message)
            .collect();
        got.sort();
        prop_assert_eq!(got, traps_by_definition(&text), "{}", text);
    }
}
