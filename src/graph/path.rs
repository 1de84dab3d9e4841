//! Which path a subscription takes from an installed bundle, one resolution per hop.
//!
//! Both OLM generations use the same successor predicate (an entry whose `replaces` or `skips`
//! names the installed bundle, or whose `skipRange` contains its version) and differ in the pick:
//! - OLM v0 (operator-lifecycle-manager `resolver.go`, `sortChannel`): only entries of the
//!   channel order qualify (the replaces chain from the head, skipped entries dropped), and the
//!   candidate closest to the head wins;
//! - OLM v1 (operator-controller `successors.go`): every entry qualifies, skipped ones included,
//!   and the highest version (then release) wins; staying on the installed version is always a
//!   candidate, so an upgrade never goes down.

use std::collections::HashSet;

use petgraph::graph::NodeIndex;
use semver::Version;
use serde::Serialize;

use super::{ChannelGraph, EdgeKind, Installed, compare_versions};

/// Resolution semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Semantics {
    /// OLM v0 (Subscriptions).
    V0,
    /// OLM v1 (ClusterExtensions).
    V1,
}

/// One upgrade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hop {
    /// The bundle upgraded from (its name, or its version when the name is unknown).
    pub from: String,
    /// The bundle upgraded to.
    pub to: String,
    /// Its version.
    pub version: String,
    /// The edge that allowed it.
    pub edge: EdgeKind,
    /// For skipRange edges, the range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
}

/// Why a path ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Stop {
    /// At the channel head: nothing newer exists.
    Head,
    /// At the requested target.
    Target,
    /// Not at the head, but no entry is a successor (v0), or no successor is newer (v1).
    NoUpgrade,
    /// The picks go round in a loop (a cycle in the edges).
    Loop,
}

/// A resolved path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpgradePath {
    /// Semantics used.
    pub semantics: Semantics,
    /// Package.
    pub package: String,
    /// Channel.
    pub channel: String,
    /// Where the path starts.
    pub from: String,
    /// The hops, in order.
    pub hops: Vec<Hop>,
    /// Where it ends.
    pub end: String,
    /// Why it ends there.
    pub stop: Stop,
    /// The channel head, if the channel has exactly one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

fn label(i: &Installed) -> String {
    match (&i.name, &i.version) {
        (Some(n), _) => n.clone(),
        (None, Some(v)) => v.to_string(),
        (None, None) => "?".into(),
    }
}

/// The next bundle a resolution picks for a user running `installed`, with the edge used.
/// For an entry of the channel this is a table lookup ([`ChannelGraph::next`]); for a bundle
/// outside it, [`next_hop_scan`].
pub fn next_hop(
    g: &ChannelGraph<'_>,
    installed: &Installed,
    sem: Semantics,
) -> Option<(NodeIndex, EdgeKind)> {
    match g.node_of(installed) {
        Some(n) => g.next(n, sem),
        None => next_hop_scan(g, installed, sem),
    }
}

/// The definition of the next hop: every entry is tried against `installed`, `O(entries)`.
pub fn next_hop_scan(
    g: &ChannelGraph<'_>,
    installed: &Installed,
    sem: Semantics,
) -> Option<(NodeIndex, EdgeKind)> {
    match sem {
        Semantics::V0 => g
            .v0_order
            .iter()
            .find_map(|&n| g.successor_edge(n, installed).map(|k| (n, k))),
        Semantics::V1 => {
            // operator-controller: candidates are the direct successors plus the installed
            // bundle itself (same version and release) when the channel has it; non-deprecated
            // first, then the highest version and release. Picking the installed bundle means
            // staying put.
            let mine = (installed.version.as_ref(), installed.release.as_deref());
            let is_self = |n: NodeIndex| {
                let e = &g.graph[n];
                installed.name.as_deref() == Some(e.name.as_str())
                    || (installed.version.is_some() && e.key() == mine)
            };
            let candidates = g.graph.node_indices().filter_map(|n| {
                if is_self(n) {
                    Some((n, None))
                } else {
                    g.successor_edge(n, installed).map(|k| (n, Some(k)))
                }
            });
            let best = candidates.max_by(|a, b| {
                let (ea, eb) = (&g.graph[a.0], &g.graph[b.0]);
                eb.deprecated
                    .cmp(&ea.deprecated)
                    .then_with(|| compare_versions(ea.key(), eb.key()))
                    // The installed bundle wins a tie; then the lower name, for determinism.
                    .then_with(|| a.1.is_none().cmp(&b.1.is_none()))
                    .then_with(|| eb.name.cmp(&ea.name))
            })?;
            // The installed bundle itself: stay. (When the installed bundle is not in the
            // channel, the best successor is taken even below the installed version, as
            // operator-controller does; lint reports such downgrade edges.)
            let kind = best.1?;
            Some((best.0, kind))
        }
    }
}

/// Where the path from an entry ends: what [`resolve`] (without a target) reports as its stop
/// and last bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Why it ends.
    pub stop: Stop,
    /// The entry it ends at.
    pub end: NodeIndex,
}

/// The outcome of the path from every entry of `g` (by node index), in time linear in the
/// entries once the next-hop table exists: each entry has at most one next hop, so paths
/// merge, and a path ends where the path of its next hop ends. A path that runs into a loop
/// ends at the entry before the first one it would revisit, as [`resolve`] stops.
pub fn outcomes<'g>(g: &'g ChannelGraph<'_>, sem: Semantics) -> &'g [Outcome] {
    g.outcome_cache(sem).get_or_init(|| {
        let n = g.graph.node_count();
        let mut done: Vec<Option<Outcome>> = vec![None; n];
        // Position on the current walk, to find loops.
        let mut on_walk: Vec<Option<usize>> = vec![None; n];
        for start in g.graph.node_indices() {
            if done[start.index()].is_some() {
                continue;
            }
            let mut walk: Vec<NodeIndex> = Vec::new();
            let mut cur = start;
            let tail = loop {
                if let Some(o) = done[cur.index()] {
                    break o;
                }
                if let Some(at) = on_walk[cur.index()] {
                    // A loop: walk[at..] goes round. Each of its entries ends at the one before
                    // it on the loop (the walk revisits the entry it started the loop at).
                    let cycle = walk.split_off(at);
                    for (i, &x) in cycle.iter().enumerate() {
                        let before = cycle[(i + cycle.len() - 1) % cycle.len()];
                        done[x.index()] = Some(Outcome {
                            stop: Stop::Loop,
                            end: before,
                        });
                    }
                    break done[cur.index()].expect("set above");
                }
                on_walk[cur.index()] = Some(walk.len());
                walk.push(cur);
                match g.next(cur, sem) {
                    Some((t, _)) => cur = t,
                    None => {
                        let stop = if Some(cur) == g.head {
                            Stop::Head
                        } else {
                            Stop::NoUpgrade
                        };
                        break Outcome { stop, end: cur };
                    }
                }
            };
            // Entries before the loop (or before an entry already done) end where it ends.
            for x in walk {
                done[x.index()] = Some(tail);
                on_walk[x.index()] = None;
            }
        }
        done.into_iter()
            .map(|o| o.expect("every entry is done"))
            .collect()
    })
}

/// Where a user of `installed` ends up, as (stop, name of the last bundle): the path's outcome
/// without listing its hops. `O(1)` for an entry of the channel once [`outcomes`] is built,
/// `O(entries)` for a bundle outside it.
pub fn destination(g: &ChannelGraph<'_>, installed: &Installed, sem: Semantics) -> (Stop, String) {
    let name = |n: NodeIndex| g.graph[n].name.clone();
    if let Some(n) = g.node_of(installed) {
        let o = outcomes(g, sem)[n.index()];
        return (o.stop, name(o.end));
    }
    if installed.name.as_deref().and_then(|x| g.node(x)).is_some() {
        // An entry's name with another version or release: `resolve` starts at that entry
        // (it counts as visited, and as the head), but picks its first hop by the version
        // given. Rare; resolved hop by hop.
        let p = resolve(g, installed.clone(), sem, None);
        return (p.stop, p.end);
    }
    match next_hop_scan(g, installed, sem) {
        // The first hop lands on an entry; from there the path is that entry's.
        Some((t, _)) => {
            let o = outcomes(g, sem)[t.index()];
            (o.stop, name(o.end))
        }
        None => (Stop::NoUpgrade, label(installed)),
    }
}

/// Resolves hop after hop from `from` until nothing newer is picked, `to` is reached, or a loop.
pub fn resolve(
    g: &ChannelGraph<'_>,
    from: Installed,
    sem: Semantics,
    to: Option<NodeIndex>,
) -> UpgradePath {
    let head = g.head.map(|h| g.graph[h].name.clone());
    let mut hops = Vec::new();
    let mut cur = from.clone();
    let mut cur_node = from.name.as_deref().and_then(|n| g.node(n));
    let mut seen: HashSet<NodeIndex> = cur_node.into_iter().collect();
    let stop = loop {
        if to.is_some() && cur_node == to {
            break Stop::Target;
        }
        let Some((n, kind)) = next_hop(g, &cur, sem) else {
            break if cur_node.is_some() && cur_node == g.head {
                Stop::Head
            } else {
                Stop::NoUpgrade
            };
        };
        let e = &g.graph[n];
        hops.push(Hop {
            from: label(&cur),
            to: e.name.clone(),
            version: e.version_str(),
            edge: kind,
            range: (kind == EdgeKind::SkipRange).then(|| g.entry(n).skip_range.clone()),
        });
        if !seen.insert(n) {
            break Stop::Loop;
        }
        cur = Installed::of(g, n);
        cur_node = Some(n);
    };
    UpgradePath {
        semantics: sem,
        package: g.package.clone(),
        channel: g.channel.clone(),
        from: label(&from),
        end: label(&cur),
        hops,
        stop,
        head,
    }
}

/// Interprets `--from`/`--to` text: an entry name, a version of an entry, or a bundle that is
/// not in the channel (a name like `foo.v1.2.3`, whose version is taken from the name, or a bare
/// version).
pub fn parse_installed(g: &ChannelGraph<'_>, s: &str) -> Installed {
    if let Some(n) = g.node(s) {
        return Installed::of(g, n);
    }
    let bare = s.strip_prefix('v').unwrap_or(s);
    if let Ok(v) = Version::parse(bare) {
        let nodes = g.nodes_with_version(&v);
        if nodes.len() == 1 {
            return Installed::of(g, nodes[0]);
        }
        return Installed {
            name: None,
            version: Some(v),
            release: None,
        };
    }
    let version = s.rfind(".v").and_then(|i| Version::parse(&s[i + 2..]).ok());
    Installed {
        name: Some(s.to_string()),
        version,
        release: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn names(p: &UpgradePath) -> Vec<&str> {
        p.hops.iter().map(|h| h.to.as_str()).collect()
    }

    #[test]
    fn reference_worked_example_v0_vs_v1() {
        // upgrades.md §3.10: v3 skips v2; v2 skipRange >=1.0.0 <2.0.0; 1.0.0 installed.
        let (ch, v) = channel(&[
            ("v1", "1.0.0", "", &[], ""),
            ("v2", "2.0.0", "", &[], ">=1.0.0 <2.0.0"),
            ("v3", "3.0.0", "v1", &["v2"], ""),
        ]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        let from = parse_installed(&g, "1.0.0");
        let p0 = resolve(&g, from.clone(), Semantics::V0, None);
        assert_eq!(names(&p0), vec!["v3"], "v0 never lands on the skipped v2");
        assert_eq!(p0.stop, Stop::Head);
        let p1 = resolve(&g, from, Semantics::V1, None);
        // v1 sees v2 (skipRange) and v3 (replaces) and takes the highest: v3.
        assert_eq!(names(&p1), vec!["v3"]);
        // Without v3's replaces edge, v0 has no way out while v1 goes through the skipped v2.
        // (v2 replaces v1 so the channel has one head; v1 sits below the skipped v2.)
        let (ch, v) = channel(&[
            ("v1", "1.0.0", "", &[], ""),
            ("v2", "2.0.0", "v1", &[], ">=1.0.0 <2.0.0"),
            ("v3", "3.0.0", "", &["v2"], ""),
        ]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        let from = parse_installed(&g, "1.0.0");
        let p0 = resolve(&g, from.clone(), Semantics::V0, None);
        assert!(p0.hops.is_empty());
        assert_eq!(p0.stop, Stop::NoUpgrade);
        let p1 = resolve(&g, from, Semantics::V1, None);
        assert_eq!(names(&p1), vec!["v2", "v3"]);
        assert_eq!(p1.hops[0].edge, EdgeKind::Replaces);
        assert_eq!(p1.hops[1].edge, EdgeKind::Skips);
        assert_eq!(p1.stop, Stop::Head);
    }

    #[test]
    fn v0_prefers_closest_to_head_v1_highest_version() {
        // Both b and c name a; the head c is closest to the head for v0; d (not on the chain,
        // skipped) has the highest version for v1.
        let (ch, v) = channel(&[
            ("a", "1.0.0", "", &[], ""),
            ("b", "1.1.0", "a", &[], ""),
            ("d", "1.5.0", "", &[], ">=1.0.0 <1.5.0"),
            ("c", "1.2.0", "b", &["a", "d"], ""),
        ]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        let from = parse_installed(&g, "a");
        assert_eq!(next_hop(&g, &from, Semantics::V0).map(|x| x.0), g.node("c"));
        assert_eq!(next_hop(&g, &from, Semantics::V1).map(|x| x.0), g.node("d"));
    }

    #[test]
    fn v1_never_downgrades() {
        // A downgrade edge: the head 1.0.0 replaces 2.0.0.
        let (ch, v) = channel(&[("x", "2.0.0", "", &[], ""), ("h", "1.0.0", "x", &[], "")]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        let from = parse_installed(&g, "x");
        assert_eq!(
            names(&resolve(&g, from.clone(), Semantics::V0, None)),
            vec!["h"]
        );
        let p1 = resolve(&g, from, Semantics::V1, None);
        assert!(p1.hops.is_empty());
        assert_eq!(p1.stop, Stop::NoUpgrade);
    }

    /// OLM v1 sorts deprecated bundles last (operator-controller: non-deprecated first, then
    /// version and release descending); v0 ignores FBC deprecations when resolving.
    #[test]
    fn v1_picks_deprecated_bundles_last() {
        let (ch, v) = channel(&[
            ("a", "1.0.0", "", &[], ""),
            ("c", "1.5.0", "a", &[], ""),
            ("b", "2.0.0", "c", &["a"], ""),
        ]);
        let mut g = ChannelGraph::build(&ch, &borrow(&v));
        let from = parse_installed(&g, "a");
        assert_eq!(next_hop(&g, &from, Semantics::V1).map(|x| x.0), g.node("b"));
        g.mark_deprecated(&["b"].into_iter().collect());
        assert_eq!(next_hop(&g, &from, Semantics::V1).map(|x| x.0), g.node("c"));
        assert_eq!(next_hop(&g, &from, Semantics::V0).map(|x| x.0), g.node("b"));
        // Every successor deprecated and the installed bundle is not: v1 stays put.
        g.mark_deprecated(&["b", "c"].into_iter().collect());
        assert_eq!(next_hop(&g, &from, Semantics::V1), None);
        // The installed bundle deprecated too: back to the highest version.
        g.mark_deprecated(&["a", "b", "c"].into_iter().collect());
        assert_eq!(next_hop(&g, &from, Semantics::V1).map(|x| x.0), g.node("b"));
    }

    #[test]
    fn installed_bundle_outside_the_catalog() {
        let (ch, v) = channel(&[
            ("p.v1.1.0", "1.1.0", "p.v1.0.0", &[], ""),
            ("p.v1.2.0", "1.2.0", "p.v1.1.0", &[], ">=0.9.0 <1.2.0"),
        ]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        // By name: the replaces edge names it.
        let p = resolve(&g, parse_installed(&g, "p.v1.0.0"), Semantics::V0, None);
        assert_eq!(names(&p), vec!["p.v1.2.0"]);
        assert_eq!(p.hops[0].edge, EdgeKind::SkipRange);
        // By version only: the skipRange still applies.
        let p = resolve(&g, parse_installed(&g, "0.9.5"), Semantics::V0, None);
        assert_eq!(names(&p), vec!["p.v1.2.0"]);
        // Too old for any edge.
        let p = resolve(&g, parse_installed(&g, "0.1.0"), Semantics::V1, None);
        assert!(p.hops.is_empty());
    }

    #[test]
    fn target_and_loops_end_paths() {
        let (ch, v) = channel(&[
            ("a", "1.0.0", "", &[], ""),
            ("b", "1.1.0", "a", &[], ""),
            ("c", "1.2.0", "b", &[], ""),
        ]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        let p = resolve(&g, parse_installed(&g, "a"), Semantics::V0, g.node("b"));
        assert_eq!(names(&p), vec!["b"]);
        assert_eq!(p.stop, Stop::Target);
        let (ch, v) = channel(&[("a", "1.0.0", "b", &[], ""), ("b", "1.1.0", "a", &[], "")]);
        let g = ChannelGraph::build(&ch, &borrow(&v));
        // No head: v0 has no order; v1 climbs once and stops (nothing newer than b).
        let p = resolve(&g, parse_installed(&g, "a"), Semantics::V1, None);
        assert_eq!(names(&p), vec!["b"]);
        assert_eq!(p.stop, Stop::NoUpgrade);
        assert!(
            resolve(&g, parse_installed(&g, "a"), Semantics::V0, None)
                .hops
                .is_empty()
        );
    }
}
