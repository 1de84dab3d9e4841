//! Next-hop tables: the entry OLM v0 and v1 pick for a user of every entry of a channel, in
//! near-linear time.
//!
//! [`super::path::next_hop_scan`] is the definition: it tries every entry against the
//! installed bundle, `O(entries)` per hop. Lint and the path commands ask it for every entry
//! and every hop, which made lint cubic in the length of a replaces chain. Here the candidates
//! named by `replaces`/`skips` come from the node's out-edges, and the best candidate reached by
//! a `skipRange` comes from "painting": ranges are applied best-first to the positions of
//! [`ChannelGraph::by_version`], each position keeps the first (and for v0 the second) range
//! that reaches it, and a "next unpainted position" union-find skips painted stretches, so
//! every position is visited at most twice whatever the ranges overlap.

use std::cmp::Ordering;
use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use semver::Version;

use super::path::Semantics;
use super::{ChannelGraph, Hop, compare_versions};

/// The next hop of every node (by node index) under `sem`.
pub(crate) fn table(g: &ChannelGraph<'_>, sem: Semantics) -> Vec<Option<Hop>> {
    match sem {
        Semantics::V0 => v0(g),
        Semantics::V1 => v1(g),
    }
}

/// Union-find over positions `0..=n` pointing at the next position still open (`n` is a
/// sentinel that is always open).
struct NextOpen(Vec<usize>);

impl NextOpen {
    fn new(n: usize) -> Self {
        NextOpen((0..=n).collect())
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            let up = self.0[self.0[i]];
            self.0[i] = up;
            i = up;
        }
        i
    }

    fn close(&mut self, i: usize) {
        self.0[i] = i + 1;
    }
}

/// OLM v0: among the entries of the channel order whose `replaces`/`skips` names the user's
/// bundle or whose skipRange contains its version, the one closest to the head. The bundle
/// itself never qualifies (by name), so each position keeps the first two ranges in channel
/// order that reach it.
fn v0(g: &ChannelGraph<'_>) -> Vec<Option<Hop>> {
    let n = g.by_version.len();
    let mut order_pos = vec![None; g.graph.node_count()];
    for (i, &x) in g.v0_order.iter().enumerate() {
        order_pos[x.index()] = Some(i);
    }
    let (mut first, mut second) = (vec![None; n], vec![None; n]);
    let mut open = NextOpen::new(n);
    for &r in &g.v0_order {
        for run in g.covered(r) {
            let mut i = open.find(run.start);
            while i < run.end {
                if first[i].is_none() {
                    first[i] = Some(r);
                } else {
                    second[i] = Some(r);
                    open.close(i);
                }
                i = open.find(i + 1);
            }
        }
    }
    g.graph
        .node_indices()
        .map(|u| {
            let by_name = g
                .graph
                .neighbors_directed(u, Direction::Outgoing)
                .filter(|&t| t != u)
                .filter_map(|t| order_pos[t.index()].map(|p| (p, t)));
            let by_range = g.version_pos[u.index()].and_then(|p| {
                let w = if first[p] == Some(u) {
                    second[p]
                } else {
                    first[p]
                }?;
                order_pos[w.index()].map(|p| (p, w))
            });
            let (_, t) = by_name.chain(by_range).min()?;
            g.edge_kind(u, t).map(|k| (t, k))
        })
        .collect()
}

/// OLM v1's preference between candidates: not deprecated, then the higher version (and
/// release), then the lower name. `Greater` means `a` is preferred.
fn rank(g: &ChannelGraph<'_>, a: NodeIndex, b: NodeIndex) -> Ordering {
    let (ea, eb) = (&g.graph[a], &g.graph[b]);
    eb.deprecated
        .cmp(&ea.deprecated)
        .then_with(|| compare_versions(ea.key(), eb.key()))
        .then_with(|| eb.name.cmp(&ea.name))
}

/// OLM v1: the preferred direct successor, unless the installed bundle (or another entry of
/// the same version and release) is at least as good, which means staying put. Each position
/// keeps the preferred range that reaches it: when that range's entry is the user's own
/// version, no other range candidate can beat staying, so one is enough.
fn v1(g: &ChannelGraph<'_>) -> Vec<Option<Hop>> {
    let n = g.by_version.len();
    let mut ranked: Vec<NodeIndex> = g
        .graph
        .node_indices()
        .filter(|&x| !g.covered(x).is_empty())
        .collect();
    ranked.sort_by(|&a, &b| rank(g, b, a));
    let mut best = vec![None; n];
    let mut open = NextOpen::new(n);
    for &r in &ranked {
        for run in g.covered(r) {
            let mut i = open.find(run.start);
            while i < run.end {
                best[i] = Some(r);
                open.close(i);
                i = open.find(i + 1);
            }
        }
    }
    // Whether some entry of each (version, release) is not deprecated.
    let mut live: HashMap<(&Version, Option<&str>), bool> = HashMap::new();
    for x in g.graph.node_indices() {
        let e = &g.graph[x];
        if let Some(v) = &e.version {
            *live.entry((v, e.release.as_deref())).or_default() |= !e.deprecated;
        }
    }
    g.graph
        .node_indices()
        .map(|u| {
            let eu = &g.graph[u];
            let is_self =
                |t: NodeIndex| t == u || (eu.version.is_some() && g.graph[t].key() == eu.key());
            let by_name = g
                .graph
                .neighbors_directed(u, Direction::Outgoing)
                .filter(|&t| !is_self(t));
            let by_range = g.version_pos[u.index()]
                .and_then(|p| best[p])
                .filter(|&w| !is_self(w));
            let s = by_name.chain(by_range).max_by(|&a, &b| rank(g, a, b))?;
            let self_live = !eu.deprecated
                || eu
                    .version
                    .as_ref()
                    .is_some_and(|v| live[&(v, eu.release.as_deref())]);
            let es = &g.graph[s];
            let wins = (!es.deprecated)
                .cmp(&self_live)
                .then_with(|| compare_versions(es.key(), eu.key()));
            if wins != Ordering::Greater {
                return None;
            }
            g.edge_kind(u, s).map(|k| (s, k))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::super::path::{Stop, destination, next_hop_scan, outcomes, resolve};
    use super::super::testutil::channel;
    use super::super::{ChannelGraph, EdgeKind, Installed, VersionInfo};
    use super::*;

    const VERSIONS: &[&str] = &[
        "0.9.0",
        "1.0.0",
        "1.0.0+build.1",
        "1.0.0-rc.1",
        "1.1.0",
        "1.2.0",
        "2.0.0",
        "?",
    ];
    const RANGES: &[&str] = &[
        "",
        ">=0.0.0",
        ">=1.0.0 <1.2.0",
        "<1.1.0 || >=2.0.0",
        ">=0.0.0 !=1.0.0",
        "1.0.0",
        "<=1.1.0 !=0.9.0 !=1.0.0-rc.1",
        ">1.0.0-rc.1",
        "<1.0.0+build.1 || 1.1.0",
        ">=1.0.0-0 <2.0.0",
        "not a range",
    ];
    /// Releases, valid and not (numeric and text order differ: 9 < 10, "01" and "1_" do not
    /// parse).
    const RELEASES: &[&str] = &["0", "1", "2", "9", "10", "01", "1_", "a"];

    /// Rows: version index, release index, replaces (an entry, or a name outside the channel),
    /// skips, range index, deprecated, named like the previous entry (a duplicate entry).
    type Row = (
        usize,
        Option<usize>,
        Option<usize>,
        Vec<usize>,
        usize,
        bool,
        bool,
    );

    fn rows() -> impl Strategy<Value = Vec<Row>> {
        (1usize..12).prop_flat_map(|n| {
            proptest::collection::vec(
                (
                    0..VERSIONS.len(),
                    proptest::option::of(0..RELEASES.len()),
                    proptest::option::of(0..n + 1),
                    proptest::collection::vec(0..n + 1, 0..3),
                    0..RANGES.len(),
                    any::<bool>(),
                    proptest::bool::weighted(0.1),
                ),
                n,
            )
        })
    }

    fn build(
        rows: &[Row],
    ) -> (
        crate::fbc::decl::Channel,
        HashMap<String, VersionInfo>,
        HashSet<String>,
    ) {
        let name = |i: usize| format!("e{i}");
        let table: Vec<(String, String, String, Vec<String>, String)> = rows
            .iter()
            .enumerate()
            .map(|(i, (v, _, r, s, range, _, dup))| {
                (
                    name(if *dup { i.saturating_sub(1) } else { i }),
                    VERSIONS[*v].to_string(),
                    r.map(name).unwrap_or_default(),
                    s.iter().map(|&x| name(x)).collect(),
                    RANGES[*range].to_string(),
                )
            })
            .collect();
        let skips: Vec<Vec<&str>> = table
            .iter()
            .map(|t| t.3.iter().map(String::as_str).collect())
            .collect();
        let refs: Vec<(&str, &str, &str, &[&str], &str)> = table
            .iter()
            .zip(&skips)
            .map(|(t, s)| {
                (
                    t.0.as_str(),
                    t.1.as_str(),
                    t.2.as_str(),
                    s.as_slice(),
                    t.4.as_str(),
                )
            })
            .collect();
        let (ch, mut versions) = channel(&refs);
        for (i, row) in rows.iter().enumerate() {
            if let Some(v) = versions.get_mut(&name(i)) {
                v.1 = row.1.map(|r| RELEASES[r].to_string());
            }
        }
        let deprecated = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.5)
            .map(|(i, _)| name(i))
            .collect();
        (ch, versions, deprecated)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The tables pick what the definition picks, for every entry and both semantics, and
        /// the outcomes are where `resolve` ends.
        #[test]
        fn tables_agree_with_the_definition(rows in rows()) {
            let (ch, versions, deprecated) = build(&rows);
            let borrowed = super::super::testutil::borrow(&versions);
            let mut g = ChannelGraph::build(&ch, &borrowed);
            g.mark_deprecated(&deprecated.iter().map(String::as_str).collect());
            for sem in [Semantics::V0, Semantics::V1] {
                let outs = outcomes(&g, sem);
                for n in g.graph.node_indices() {
                    let me = Installed::of(&g, n);
                    prop_assert_eq!(g.next(n, sem), next_hop_scan(&g, &me, sem), "{:?} {:?}", sem, g.graph[n].name);
                    let p = resolve(&g, me, sem, None);
                    prop_assert_eq!(outs[n.index()].stop, p.stop);
                    prop_assert_eq!(&g.graph[outs[n.index()].end].name, &p.end);
                    if p.stop == Stop::Head {
                        prop_assert_eq!(Some(outs[n.index()].end), g.head);
                    }
                }
            }
            // Users that are not an entry: an entry's name with another version or release, a
            // name outside the channel, a bare version.
            let probes: Vec<(Option<semver::Version>, Option<String>)> = VERSIONS
                .iter()
                .map(|v| semver::Version::parse(v).ok())
                .flat_map(|v| [(v.clone(), None), (v, Some("1".to_string()))])
                .collect();
            let names: Vec<Option<String>> = g
                .graph
                .node_indices()
                .map(|n| Some(g.graph[n].name.clone()))
                .chain([Some("outside.v1.0.0".to_string()), None])
                .collect();
            for sem in [Semantics::V0, Semantics::V1] {
                for name in &names {
                    for (version, release) in &probes {
                        let user = Installed { name: name.clone(), version: version.clone(), release: release.clone() };
                        let p = resolve(&g, user.clone(), sem, None);
                        prop_assert_eq!(destination(&g, &user, sem), (p.stop, p.end), "{:?} {:?}", sem, user);
                    }
                }
            }
            // Pairs: the covered runs are exactly the entries whose version the range contains.
            for to in g.graph.node_indices() {
                for from in g.graph.node_indices() {
                    let want = from != to
                        && matches!((&g.ranges[to.index()], &g.graph[from].version), (Some(r), Some(v)) if r.contains(v));
                    prop_assert_eq!(g.covers(to, from), want);
                }
            }
            let pairs = g.edges().iter().filter(|e| e.2 == EdgeKind::SkipRange).count();
            prop_assert_eq!(pairs, g.range_edge_count());
        }
    }

    /// `compare_versions` is a total order (sorting panics otherwise), releases valid or not.
    #[test]
    fn version_order_is_total() {
        let keys: Vec<(Option<semver::Version>, Option<&str>)> = VERSIONS
            .iter()
            .map(|v| semver::Version::parse(v).ok())
            .flat_map(|v| {
                std::iter::once((v.clone(), None))
                    .chain(RELEASES.iter().map(move |r| (v.clone(), Some(*r))))
            })
            .collect();
        type Key<'a> = (Option<semver::Version>, Option<&'a str>);
        fn k<'a>(x: &'a Key<'_>) -> (Option<&'a semver::Version>, Option<&'a str>) {
            (x.0.as_ref(), x.1)
        }
        for a in &keys {
            for b in &keys {
                assert_eq!(
                    compare_versions(k(a), k(b)),
                    compare_versions(k(b), k(a)).reverse()
                );
                for c in &keys {
                    if compare_versions(k(a), k(b)).is_le() && compare_versions(k(b), k(c)).is_le()
                    {
                        assert!(compare_versions(k(a), k(c)).is_le(), "{a:?} {b:?} {c:?}");
                    }
                }
            }
        }
    }

    /// A skipRange covering every entry but the head, on every entry of a long chain: the
    /// tables stay linear-sized and every user goes straight to the head.
    #[test]
    fn universal_ranges_on_a_long_chain() {
        let n = 3_000;
        let names: Vec<String> = (0..n).map(|i| format!("p.v0.{i}.0")).collect();
        let versions: Vec<String> = (0..n).map(|i| format!("0.{i}.0")).collect();
        let rows: Vec<(&str, &str, &str, &[&str], &str)> = (0..n)
            .map(|i| {
                let r = if i == 0 { "" } else { names[i - 1].as_str() };
                (
                    names[i].as_str(),
                    versions[i].as_str(),
                    r,
                    &[][..],
                    "<0.2999.0",
                )
            })
            .collect();
        let (ch, v) = channel(&rows);
        let borrowed = super::super::testutil::borrow(&v);
        let g = ChannelGraph::build(&ch, &borrowed);
        assert_eq!(g.graph.edge_count(), n - 1);
        assert_eq!(g.range_edge_count(), (n - 1) * (n - 1));
        let head = g.head.expect("head");
        for sem in [Semantics::V0, Semantics::V1] {
            let outs = outcomes(&g, sem);
            for x in g.graph.node_indices().filter(|&x| x != head) {
                assert_eq!(g.next(x, sem).map(|h| h.0), Some(head), "{sem:?}");
                assert_eq!(outs[x.index()].stop, Stop::Head);
            }
        }
    }
}
