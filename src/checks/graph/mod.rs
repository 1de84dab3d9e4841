//! Upgrade-graph lint (`olmctl catalog lint`): graphs that `opm validate` may accept but that
//! break or strand users under OLM v0 or v1. Each check works on the [`crate::graph`] model.

pub mod codes;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use petgraph::graph::NodeIndex;

pub use codes::CODES;

use super::fbc::Sink;
use crate::diag::{Finding, Subject, sort_findings};
use crate::fbc::decl::DeclarativeConfig;
use crate::graph::path::{Semantics, Stop, destination, outcomes};
use crate::graph::{CatalogGraphs, ChannelGraph, EdgeKind, Installed, compare_versions};
use crate::model::chain::{Head, analyze};
use codes::*;

/// Lints every channel of `cfg`.
pub fn lint(cfg: &DeclarativeConfig) -> Vec<Finding> {
    let graphs = CatalogGraphs::build(cfg, None);
    let mut sink = Sink::default();
    for (pkg, chans) in &graphs.packages {
        if let Some(def) = graphs.default_channels.get(pkg)
            && !chans.contains_key(def)
            && let Some(p) = cfg.packages.iter().find(|p| &p.name == pkg)
        {
            sink.push(
                &DEFAULT_CHANNEL_MISSING,
                format!("default channel \"{def}\" does not exist: subscriptions without a channel cannot resolve"),
                &p.src.file,
                p.src.pos,
                Subject::package(pkg),
            );
        }
        for g in chans.values() {
            channel(g, &mut sink);
        }
        channel_switch_traps(chans, &mut sink);
    }
    let mut f = sink.findings;
    sort_findings(&mut f);
    f
}

fn at(g: &ChannelGraph<'_>, n: NodeIndex) -> (Arc<std::path::Path>, crate::fbc::node::Pos) {
    (g.source.src.file.clone(), g.entry(n).pos)
}

fn channel(g: &ChannelGraph<'_>, sink: &mut Sink) {
    let file = g.source.src.file.clone();
    let subj = |n: NodeIndex| Subject::entry(&g.package, &g.channel, &g.graph[n].name);
    let chain = analyze(g.source);
    match &chain.head {
        Head::None => {
            sink.push(
                &CYCLE,
                "no channel head: every entry is replaced or skipped, the edges form a cycle",
                &file,
                g.source.src.pos,
                Subject::channel(&g.package, &g.channel),
            );
        }
        Head::Many(hs) => {
            sink.push(
                &HEADS,
                format!(
                    "{} channel heads ({}): OLM v0 refuses to resolve this channel",
                    hs.len(),
                    hs.join(", ")
                ),
                &file,
                g.source.src.pos,
                Subject::channel(&g.package, &g.channel),
            );
        }
        Head::One(_) => {}
    }
    if let Some(cy) = &chain.cycle {
        sink.push(
            &CYCLE,
            format!("replaces chain loops: {}", cy.join(" -> ")),
            &file,
            g.source.src.pos,
            Subject::channel(&g.package, &g.channel),
        );
    }
    for s in &chain.stranded {
        if let Some(n) = g.node(s) {
            let (f, p) = at(g, n);
            sink.push(
                &STRANDED,
                format!("{s} is stranded: not on the replaces chain from the head and not skipped"),
                &f,
                p,
                subj(n),
            );
        }
    }
    for n in g.graph.node_indices() {
        let e = g.entry(n);
        let (f, p) = at(g, n);
        if e.replaces == e.name {
            sink.push(
                &CYCLE,
                format!("{} replaces itself", e.name),
                &f,
                p,
                subj(n),
            );
        }
        if !e.skip_range.is_empty() {
            match &g.ranges[n.index()] {
                None => {
                    sink.push(
                        &BAD_SKIP_RANGE,
                        format!(
                            "skipRange \"{}\" does not parse: OLM v0 silently ignores it",
                            e.skip_range
                        ),
                        &f,
                        e.skip_range_pos,
                        subj(n),
                    );
                }
                Some(r) => {
                    if let Some(v) = &g.graph[n].version {
                        let above = match r.upper_bound() {
                            None => true,
                            Some((ub, incl)) => ub > *v || (ub == *v && incl),
                        };
                        if above {
                            sink.push(&SKIP_RANGE_ABOVE, format!("skipRange \"{}\" admits versions at or above the bundle's own version {v}", e.skip_range), &f, e.skip_range_pos, subj(n))
                                .help = Some(format!("bound it below the bundle, e.g. \"<{v}\""));
                        }
                    }
                }
            }
        }
    }
    for edge in g.graph.edge_indices() {
        let Some((from, to)) = g.graph.edge_endpoints(edge) else {
            continue;
        };
        let kind = g.graph[edge].kind;
        if kind != EdgeKind::SkipRange
            && g.graph[from].version.is_some()
            && g.graph[to].version.is_some()
            && compare_versions(g.graph[to].key(), g.graph[from].key()).is_lt()
        {
            let (f, p) = at(g, to);
            sink.push(
                &DOWNGRADE,
                format!(
                    "{} ({}) {} {} ({}): an upgrade edge that goes down in version",
                    g.graph[to].name,
                    g.graph[to].version_str(),
                    kind.as_str(),
                    g.graph[from].name,
                    g.graph[from].version_str()
                ),
                &f,
                p,
                subj(to),
            )
            .help = Some("OLM v1 never takes it; OLM v0 does".into());
        }
    }
    let Some(head) = g.head else { return };
    let (out0, out1) = (outcomes(g, Semantics::V0), outcomes(g, Semantics::V1));
    skipped_edges_relied_on(g, head, out0, sink);
    for n in g.graph.node_indices() {
        if n == head {
            continue;
        }
        let (f, p) = at(g, n);
        let p0 = out0[n.index()];
        if p0.stop != Stop::Head {
            sink.push(&V0_STUCK, format!("OLM v0 users on {} stop at {} and never reach the head {}", g.graph[n].name, g.graph[p0.end].name, g.graph[head].name), &f, p, subj(n))
                .help = Some("OLM v0 only lands on entries of the replaces chain that are not skipped; make such an entry name this bundle (replaces, skips or skipRange)".into());
        }
        let p1 = out1[n.index()];
        if p1.stop != Stop::Head {
            let end = p1.end;
            let why = if compare_versions(g.graph[head].key(), g.graph[end].key()).is_le() {
                format!(
                    "the head {} ({}) is not a higher version than {}",
                    g.graph[head].name,
                    g.graph[head].version_str(),
                    g.graph[end].version_str()
                )
            } else {
                "no newer direct successor".to_string()
            };
            sink.push(
                &V1_STUCK,
                format!(
                    "OLM v1 users on {} stop at {}: {why}",
                    g.graph[n].name, g.graph[end].name
                ),
                &f,
                p,
                subj(n),
            );
        }
    }
}

/// GRAPH004: a skipped entry whose edges some users rely on. OLM v0 orders a channel by walking
/// `replaces` from the head and drops every skipped entry from that order (operator-lifecycle-manager
/// `pkg/controller/registry/resolver/resolver.go`, `sortChannel`); only entries of the order are
/// upgrade candidates, so a skipped entry's own `replaces`, `skips` and `skipRange` never take
/// anybody anywhere. That is harmless, and the ordinary z-stream pattern (every release replaces
/// the same base and skips the ones in between), as long as the users those edges name reach the
/// head some other way: the check fires only for the entries a skipped entry names that OLM v0
/// leaves short of the head, and says whether the walk from the head runs through the entry.
fn skipped_edges_relied_on(
    g: &ChannelGraph<'_>,
    head: NodeIndex,
    out0: &[crate::graph::path::Outcome],
    sink: &mut Sink,
) {
    // The entries the walk from the head along `replaces` visits, skipped ones included.
    let mut on_chain = HashSet::new();
    let mut cur = head;
    while on_chain.insert(cur) {
        match g.node(&g.entry(cur).replaces) {
            Some(next) => cur = next,
            None => break,
        }
    }
    let mut skippers: HashMap<&str, Vec<&str>> = HashMap::new();
    for e in &g.source.entries {
        for s in &e.skips {
            skippers
                .entry(s.as_str())
                .or_default()
                .push(e.name.as_str());
        }
    }
    for n in g.graph.node_indices().filter(|&n| g.graph[n].skipped) {
        let e = g.entry(n);
        let named = g
            .graph
            .neighbors_directed(n, petgraph::Direction::Incoming)
            .chain(g.range_sources(n));
        let mut stuck: Vec<NodeIndex> = named
            .filter(|&y| y != n && out0[y.index()].stop != Stop::Head)
            .collect();
        stuck.sort_by(|&a, &b| g.graph[a].name.cmp(&g.graph[b].name));
        stuck.dedup();
        let Some(&first) = stuck.first() else {
            continue;
        };
        let by = skippers
            .get(e.name.as_str())
            .map(|v| {
                let mut v = v.clone();
                v.sort_unstable();
                v.dedup();
                v.join(", ")
            })
            .unwrap_or_default();
        let where_ = if on_chain.contains(&n) {
            " and sits in the replaces chain from the head"
        } else {
            ""
        };
        let users = crate::text::and_more(
            &stuck
                .iter()
                .map(|&y| g.graph[y].name.as_str())
                .collect::<Vec<_>>(),
            3,
        );
        let end = &g.graph[out0[first.index()].end].name;
        let (f, p) = at(g, n);
        sink.push(
            &SKIPPED_IN_CHAIN,
            format!(
                "{} is skipped by {by}{where_}: OLM v0 never lands on it and ignores its edges, so users on {users}, which it names, never reach the head {} (users on {} stop at {end})",
                e.name, g.graph[head].name, g.graph[first].name
            ),
            &f,
            p,
            Subject::entry(&g.package, &g.channel, &e.name),
        )
        .help = Some(format!(
            "name {users} from an entry that is not skipped (such as {by}): skips are not transitive"
        ));
    }
}

/// GRAPH010: for a bundle B in channels C1 and C2, OLM v0 upgrades B in C1 to T; when T is not
/// an entry of C2 and C2's head cannot be reached from T, a user who switches from C1 to C2
/// after that upgrade is stranded (only when T is older than C2's head: above it, switching
/// channels would be a downgrade).
///
/// Linear in the channel entries plus the findings: the channels holding a bundle are grouped
/// by the target their users are upgraded to, the channels lacking a target are found once per
/// (bundle, target), and each (channel, target) path is resolved once.
fn channel_switch_traps(chans: &BTreeMap<String, ChannelGraph<'_>>, sink: &mut Sink) {
    // Bundle name → the channels holding it (by name order) with its node there.
    let mut holders: BTreeMap<&str, Vec<(&str, NodeIndex)>> = BTreeMap::new();
    for (c, g) in chans {
        for n in g.graph.node_indices() {
            holders.entry(&g.graph[n].name).or_default().push((c, n));
        }
    }
    let mut reaches: HashMap<(&str, &str), bool> = HashMap::new();
    for (bundle, held) in &holders {
        // Target name → the channels (with the target's node) that upgrade `bundle` to it.
        let mut by_target: BTreeMap<&str, Vec<(&str, NodeIndex)>> = BTreeMap::new();
        for &(c1, n1) in held {
            let g1 = &chans[c1];
            if let Some((t, _)) = g1.next(n1, Semantics::V0) {
                by_target
                    .entry(&g1.graph[t].name)
                    .or_default()
                    .push((c1, t));
            }
        }
        for (target, froms) in by_target {
            let with_target: HashSet<&str> = holders
                .get(target)
                .map(|h| h.iter().map(|(c, _)| *c).collect())
                .unwrap_or_default();
            for &(c2, _) in held.iter().filter(|(c, _)| !with_target.contains(c)) {
                let g2 = &chans[c2];
                let Some(h2) = g2.head else { continue };
                for &(c1, t) in &froms {
                    let g1 = &chans[c1];
                    // Only users behind C2's head are trapped; above it, switching is a
                    // downgrade.
                    if compare_versions(g1.graph[t].key(), g2.graph[h2].key()).is_ge() {
                        continue;
                    }
                    let ok = *reaches.entry((c2, target)).or_insert_with(|| {
                        destination(g2, &Installed::of(g1, t), Semantics::V0).0 == Stop::Head
                    });
                    if ok {
                        continue;
                    }
                    let (f, pos) = at(g1, t);
                    sink.push(
                        &CHANNEL_SWITCH_TRAP,
                        format!(
                            "{bundle} upgrades to {target} in channel {c1}, but from {target} channel {c2} never reaches its head {}: users switching to {c2} are stranded",
                            g2.graph[h2].name
                        ),
                        &f,
                        pos,
                        Subject::entry(&g1.package, c1, target),
                    )
                    .help = Some(format!("add an entry to {c2} that replaces, skips or covers {target} with its skipRange"));
                }
            }
        }
    }
}
