//! `olmctl catalog check-upgrades --base OLD NEW`: what a pull request on a catalog repository
//! runs. Everyone who may run a bundle of the old catalog (every channel entry) must still reach
//! the channel head of the new catalog under OLM v0 and v1; heads may not move backwards; a
//! removed bundle needs an entry that upgrades from it; channels and packages may not vanish.
//! A user already stuck in the old catalog is reported as a warning (not a regression).

use std::path::Path;
use std::sync::Arc;

use crate::diag::Severity::{Error, Warning};
use crate::diag::{Finding, Subject, sort_findings};
use crate::fbc::decl::DeclarativeConfig;
use crate::fbc::node::Pos;
use crate::graph::path::{Semantics, Stop, destination};
use crate::graph::{CatalogGraphs, ChannelGraph, Installed, compare_versions};
use crate::model::chain::{Head, heads};

use super::fbc::Sink;

codes! {
    STRANDED = "UPG001", Error, "Users of an old-catalog bundle no longer reach the channel head in the new catalog.";
    STILL_STUCK = "UPG002", Warning, "Users of an old-catalog bundle were already stuck before the head in the old catalog and still are.";
    HEAD_BACKWARDS = "UPG003", Error, "A channel head moved to a lower version.";
    CHANNEL_REMOVED = "UPG004", Error, "A channel of the old catalog is gone: its users cannot upgrade.";
    PACKAGE_REMOVED = "UPG005", Error, "A package of the old catalog is gone: its users cannot upgrade.";
    DANGLING_REPLACES = "UPG006", Error, "An entry now replaces a bundle that is not in its channel, and users of the base catalog lose their upgrades because of it (the consequences are listed under it).";
    NEW_HEADS = "UPG007", Error, "A channel with one head in the base catalog has several now: OLM v0 refuses to resolve it (the consequences are listed under it).";
}

/// The entry a user should end at: the channel head; under OLM v1, which has no notion of a
/// head and only takes the highest successor (operator-controller `successors.go`), the newest
/// of several heads.
fn goal(g: &ChannelGraph<'_>, sem: Semantics) -> Option<String> {
    if let Some(h) = g.head {
        return Some(g.graph[h].name.clone());
    }
    if sem == Semantics::V0 {
        return None;
    }
    let Head::Many(hs) = heads(&g.source.entries) else {
        return None;
    };
    hs.iter()
        .filter_map(|h| g.node(h))
        .max_by(|&a, &b| compare_versions(g.graph[a].key(), g.graph[b].key()))
        .map(|n| g.graph[n].name.clone())
}

fn reaches_head(g: &ChannelGraph<'_>, from: &Installed, sem: Semantics) -> (bool, String) {
    let (stop, end) = destination(g, from, sem);
    let ok = stop == Stop::Head || (stop != Stop::Loop && goal(g, sem).as_ref() == Some(&end));
    (ok, end)
}

/// A user of the base catalog who no longer reaches the head.
struct Lost {
    sem: Semantics,
    name: String,
    end: String,
    removed: bool,
    file: Arc<Path>,
    pos: Pos,
}

/// What in the new channel explains its regressions: entries whose `replaces` now names a
/// bundle that is not in the channel (new since the base), then a new second head.
fn causes(pkg: &str, ch: &str, o: &ChannelGraph<'_>, n: &ChannelGraph<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let file = n.source.src.file.clone();
    for e in &n.source.entries {
        if e.replaces.is_empty() || n.node(&e.replaces).is_some() {
            continue;
        }
        let before = o.node(&e.name).map(|x| o.entry(x).replaces.as_str());
        if before == Some(e.replaces.as_str()) {
            continue; // dangling in the base too (an older bundle pruned): not this change
        }
        let names = n.source.entries.iter().map(|x| x.name.as_str());
        let guess = crate::text::nearest(&e.replaces, names.filter(|x| *x != e.name));
        let mut msg = format!(
            "{} replaces {}, which is not an entry of channel {ch}",
            e.name, e.replaces
        );
        let help = match (guess, before) {
            (Some(g), _) => {
                msg.push_str(&format!(" (did you mean {g}?)"));
                format!("replaces: {g}")
            }
            (None, Some(b)) if !b.is_empty() => {
                format!("the base catalog has replaces: {b}")
            }
            _ => "name an entry of the channel (replaces, skips or skipRange)".to_string(),
        };
        let f = Finding::new(&DANGLING_REPLACES, msg)
            .at(Some(crate::diag::Location::new(
                file.clone(),
                e.pos.line,
                e.pos.col,
            )))
            .about(Subject::entry(pkg, ch, &e.name))
            .help(help);
        out.push(f);
    }
    if let (Head::One(_), Head::Many(hs)) = (heads(&o.source.entries), heads(&n.source.entries)) {
        let heads = format!("{} heads ({})", hs.len(), hs.join(", "));
        if let Some(first) = out.first_mut() {
            first.notes.push(format!(
                "channel {ch} now has {heads}: OLM v0 refuses to resolve it, every subscription to it fails"
            ));
        } else {
            out.push(
                Finding::new(
                    &NEW_HEADS,
                    format!("channel {ch} has {heads} where the base catalog had one: OLM v0 refuses to resolve it"),
                )
                .at(Some(crate::diag::Location::new(file.clone(), n.source.src.pos.line, n.source.src.pos.col)))
                .about(Subject::channel(pkg, ch))
                .help("make every head but the newest replaced, skipped or covered by another entry"),
            );
        }
    }
    out
}

/// The users of channel `ch` of the base catalog who no longer reach the head in the new one
/// (UPG001) or were already stuck (UPG002). When the new channel has a cause ([`causes`]), its
/// regressions are listed under the cause, grouped by where users stop, instead of one finding
/// per user.
fn channel_users(pkg: &str, ch: &str, o: &ChannelGraph<'_>, n: &ChannelGraph<'_>, sink: &mut Sink) {
    let mut lost: Vec<Lost> = Vec::new();
    for on in o.graph.node_indices() {
        let user = Installed::of(o, on);
        let name = &o.graph[on].name;
        // Where to point: the entry in the new catalog, else the old one.
        let (file, pos): (Arc<Path>, Pos) = match n.node(name) {
            Some(x) => (n.source.src.file.clone(), n.entry(x).pos),
            None => (o.source.src.file.clone(), o.entry(on).pos),
        };
        let removed = n.node(name).is_none();
        for sem in [Semantics::V0, Semantics::V1] {
            let (ok_new, end) = reaches_head(n, &user, sem);
            if ok_new {
                continue;
            }
            let (ok_old, _) = reaches_head(o, &user, sem);
            let l = Lost {
                sem,
                name: name.clone(),
                end,
                removed,
                file: file.clone(),
                pos,
            };
            if ok_old {
                lost.push(l);
            } else {
                still_stuck(pkg, ch, n, &l, sink);
            }
        }
    }
    if lost.is_empty() {
        return;
    }
    let mut found = causes(pkg, ch, o, n);
    if found.is_empty() {
        for l in &lost {
            let head = goal(n, l.sem).unwrap_or_else(|| "<no single head>".to_string());
            sink.push(
                &STRANDED,
                format!("{}: {}; the head {head} is not reached", sem_name(l.sem), what(l)),
                &l.file,
                l.pos,
                Subject::entry(pkg, ch, &l.name),
            )
            .help = Some("this worked in the base catalog: restore an edge (replaces, skips or skipRange) that names this bundle".into());
        }
        return;
    }
    // The consequences, under the first cause: per semantics, the users grouped by where
    // they stop.
    let mut notes = Vec::new();
    for sem in [Semantics::V0, Semantics::V1] {
        let mine: Vec<&Lost> = lost.iter().filter(|l| l.sem == sem).collect();
        if mine.is_empty() {
            continue;
        }
        let Some(head) = goal(n, sem) else {
            let names: Vec<&str> = mine.iter().map(|l| l.name.as_str()).collect();
            notes.push(format!(
                "{}: users on {} reached the head in the base catalog and now cannot resolve the channel",
                sem_name(sem),
                crate::text::and_more(&names, 3)
            ));
            continue;
        };
        let mut by_end: std::collections::BTreeMap<(bool, &str), Vec<&str>> = Default::default();
        for l in &mine {
            by_end
                .entry((l.removed, l.end.as_str()))
                .or_default()
                .push(&l.name);
        }
        for ((removed, end), names) in by_end {
            let users = crate::text::and_more(&names, 3);
            notes.push(if removed {
                format!("{}: {users} removed and nothing upgrades from it; the head {head} is not reached", sem_name(sem))
            } else {
                format!("{}: users on {users} stop at {end} and never reach the head {head}", sem_name(sem))
            });
        }
    }
    if found.len() > 1 {
        notes.push(format!(
            "{} other causes in this channel are reported beside it",
            found.len() - 1
        ));
    }
    found[0].notes.extend(notes);
    sink.findings.extend(found);
}

fn what(l: &Lost) -> String {
    if l.removed {
        format!(
            "{} was removed and no entry of the new channel upgrades from it",
            l.name
        )
    } else {
        format!("{} stops at {}", l.name, l.end)
    }
}

fn still_stuck(pkg: &str, ch: &str, n: &ChannelGraph<'_>, l: &Lost, sink: &mut Sink) {
    let head = goal(n, l.sem).unwrap_or_else(|| "<no single head>".to_string());
    sink.push(
        &STILL_STUCK,
        format!(
            "{}: {}; the head {head} is not reached",
            sem_name(l.sem),
            what(l)
        ),
        &l.file,
        l.pos,
        Subject::entry(pkg, ch, &l.name),
    )
    .help = Some("already the case in the base catalog".into());
}

fn sem_name(s: Semantics) -> &'static str {
    match s {
        Semantics::V0 => "OLM v0",
        Semantics::V1 => "OLM v1",
    }
}

/// Compares `old` and `new`.
pub fn check(old: &DeclarativeConfig, new: &DeclarativeConfig) -> Vec<Finding> {
    check_graphs(
        &CatalogGraphs::build(old, None),
        &CatalogGraphs::build(new, None),
    )
}

/// [`check`] over graphs already built.
pub fn check_graphs(og: &CatalogGraphs<'_>, ng: &CatalogGraphs<'_>) -> Vec<Finding> {
    let mut sink = Sink::default();
    for (pkg, ochans) in &og.packages {
        let Some(nchans) = ng.packages.get(pkg) else {
            if let Some(g) = ochans.values().next() {
                sink.push(
                    &PACKAGE_REMOVED,
                    format!("package {pkg} is not in the new catalog"),
                    &g.source.src.file,
                    g.source.src.pos,
                    Subject::package(pkg),
                );
            }
            continue;
        };
        for (ch, o) in ochans {
            let Some(n) = nchans.get(ch) else {
                sink.push(
                    &CHANNEL_REMOVED,
                    format!(
                        "channel {ch} is not in the new catalog; {} entries lose their upgrades",
                        o.graph.node_count()
                    ),
                    &o.source.src.file,
                    o.source.src.pos,
                    Subject::channel(pkg, ch),
                );
                continue;
            };
            if let (Some(oh), Some(nh)) = (o.head, n.head)
                && compare_versions(n.graph[nh].key(), o.graph[oh].key()).is_lt()
            {
                sink.push(
                    &HEAD_BACKWARDS,
                    format!(
                        "channel head moved backwards: {} ({}) -> {} ({})",
                        o.graph[oh].name,
                        o.graph[oh].version_str(),
                        n.graph[nh].name,
                        n.graph[nh].version_str()
                    ),
                    &n.source.src.file,
                    n.entry(nh).pos,
                    Subject::entry(pkg, ch, &n.graph[nh].name),
                );
            }
            channel_users(pkg, ch, o, n, &mut sink);
        }
    }
    let mut f = sink.findings;
    sort_findings(&mut f);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(channel_rows: &str) -> DeclarativeConfig {
        let mut text =
            String::from("---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n");
        for v in ["1.0.0", "1.1.0", "1.2.0"] {
            text.push_str(&format!("---\nschema: olm.bundle\npackage: foo\nname: foo.v{v}\nimage: q.io/f/b:v{v}\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: {v}}}\n"));
        }
        text.push_str("---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n");
        text.push_str(channel_rows);
        let mut c = DeclarativeConfig::default();
        let file: Arc<Path> = Arc::from(Path::new("c.yaml"));
        let problems = crate::fbc::load::parse_text(&text, &file, &mut c);
        assert!(problems.is_empty(), "{problems:?}");
        c
    }

    const OLD: &str = "- name: foo.v1.0.0\n- name: foo.v1.1.0\n  replaces: foo.v1.0.0\n";
    const NEW: &str = "- name: foo.v1.0.0\n- name: foo.v1.1.0\n  replaces: foo.v1.0.0\n- name: foo.v1.2.0\n  replaces: foo.v1.1.0\n";

    /// A bundle whose version or release changed between the catalogs is still the entry of
    /// its name: its users at the head stay at the head.
    #[test]
    fn a_head_with_a_new_release_is_not_stranded() {
        let mut text = String::new();
        text.push_str("---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n");
        for (v, rel) in [("1.0.0", ""), ("1.1.0", ", release: '1'")] {
            text.push_str(&format!("---\nschema: olm.bundle\npackage: foo\nname: foo.v{v}\nimage: q.io/f/b:v{v}\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: {v}{rel}}}\n"));
        }
        text.push_str("---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n");
        text.push_str(OLD);
        let mut new = DeclarativeConfig::default();
        let file: Arc<Path> = Arc::from(Path::new("c.yaml"));
        assert!(crate::fbc::load::parse_text(&text, &file, &mut new).is_empty());
        let f = check(&cfg(OLD), &new);
        assert!(f.is_empty(), "{f:#?}");
    }

    #[test]
    fn adding_a_head_is_clean() {
        assert!(check(&cfg(OLD), &cfg(NEW)).is_empty());
    }

    #[test]
    fn breaking_a_middle_edge_strands_users() {
        let broken =
            "- name: foo.v1.0.0\n- name: foo.v1.1.0\n- name: foo.v1.2.0\n  replaces: foo.v1.1.0\n";
        let f = check(&cfg(OLD), &cfg(broken));
        // Without the edge, 1.0.0 is a second head: that is the cause, reported once, and the
        // users it strands are listed under it. OLM v0 refuses the channel; OLM v1 takes 1.1.0
        // to the newest head 1.2.0 and leaves 1.0.0 where it is.
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, "UPG007");
        assert!(
            f[0].message
                .contains("2 heads (foo.v1.0.0, foo.v1.2.0) where the base catalog had one"),
            "{f:#?}"
        );
        assert_eq!(
            f[0].notes,
            vec![
                "OLM v0: users on foo.v1.0.0, foo.v1.1.0 reached the head in the base catalog and now cannot resolve the channel".to_string(),
                "OLM v1: users on foo.v1.0.0 stop at foo.v1.0.0 and never reach the head foo.v1.2.0".to_string(),
            ]
        );
        // Keeping one head but dropping 1.1.0's edge to 1.0.0 strands only 1.0.0.
        let skip_edge = "- name: foo.v1.0.0\n- name: foo.v1.1.0\n- name: foo.v1.2.0\n  replaces: foo.v1.1.0\n  skips: [foo.v1.0.0]\n";
        let ok = check(&cfg(OLD), &cfg(skip_edge));
        assert!(ok.is_empty(), "{ok:#?}");
    }

    /// One typo in a `replaces` (issue 40: `victoriametrics-operator.v0.70.0` for `v0.70.1`):
    /// one finding naming the missing bundle with the entry it likely meant, the second head
    /// and the stranded users under it; the newest head is not called stranded.
    #[test]
    fn a_dangling_replaces_is_the_cause_and_names_the_nearest_entry() {
        let old = "- name: foo.v1.0.0\n- name: foo.v1.1.0\n  replaces: foo.v1.0.0\n- name: foo.v1.2.0\n  replaces: foo.v1.1.0\n";
        let typo = "- name: foo.v1.0.0\n- name: foo.v1.1.0\n  replaces: foo.v1.0.0\n- name: foo.v1.2.0\n  replaces: foo.v1.1.1\n";
        let f = check(&cfg(old), &cfg(typo));
        assert_eq!(f.len(), 1, "{f:#?}");
        let d = &f[0];
        assert_eq!(d.code, "UPG006");
        assert_eq!(
            d.message,
            "foo.v1.2.0 replaces foo.v1.1.1, which is not an entry of channel stable (did you mean foo.v1.1.0?)"
        );
        assert_eq!(d.help.as_deref(), Some("replaces: foo.v1.1.0"));
        assert_eq!(d.subject.bundle.as_deref(), Some("foo.v1.2.0"));
        let notes = d.notes.join("\n");
        assert!(
            notes.contains("now has 2 heads (foo.v1.1.0, foo.v1.2.0)"),
            "{notes}"
        );
        assert!(
            notes.contains("OLM v1: users on foo.v1.0.0, foo.v1.1.0 stop at foo.v1.1.0 and never reach the head foo.v1.2.0"),
            "{notes}"
        );
        assert!(!notes.contains("users on foo.v1.2.0"), "{notes}");
        assert!(!notes.contains("<no single head>"), "{notes}");
        // A replaces that was dangling in the base already (a pruned bundle) is no cause.
        let pruned = "- name: foo.v1.1.0\n  replaces: foo.v0.9.0\n- name: foo.v1.2.0\n  replaces: foo.v1.1.0\n";
        assert!(check(&cfg(pruned), &cfg(pruned)).is_empty());
    }

    #[test]
    fn head_backwards_and_removed_bundle() {
        let f = check(&cfg(NEW), &cfg(OLD));
        assert!(f.iter().any(|x| x.code == "UPG003"), "{f:#?}");
        // foo.v1.2.0 was removed and nothing upgrades from it.
        assert!(
            f.iter()
                .any(|x| x.code == "UPG001" && x.message.contains("was removed")),
            "{f:#?}"
        );
    }

    #[test]
    fn removed_channel_and_package() {
        let mut new = cfg(NEW);
        new.channels.clear();
        assert!(check(&cfg(OLD), &new).iter().any(|x| x.code == "UPG004"));
        let f = check(&cfg(OLD), &DeclarativeConfig::default());
        assert_eq!(f.iter().filter(|x| x.code == "UPG005").count(), 1);
    }
}
