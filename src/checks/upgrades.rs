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

use super::fbc::Sink;

codes! {
    STRANDED = "UPG001", Error, "Users of an old-catalog bundle no longer reach the channel head in the new catalog.";
    STILL_STUCK = "UPG002", Warning, "Users of an old-catalog bundle were already stuck before the head in the old catalog and still are.";
    HEAD_BACKWARDS = "UPG003", Error, "A channel head moved to a lower version.";
    CHANNEL_REMOVED = "UPG004", Error, "A channel of the old catalog is gone: its users cannot upgrade.";
    PACKAGE_REMOVED = "UPG005", Error, "A package of the old catalog is gone: its users cannot upgrade.";
}

fn reaches_head(g: &ChannelGraph<'_>, from: &Installed, sem: Semantics) -> (bool, String) {
    let (stop, end) = destination(g, from, sem);
    (stop == Stop::Head, end)
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
            let head = n
                .head
                .map_or("<no single head>".to_string(), |h| n.graph[h].name.clone());
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
                    let what = if removed {
                        format!(
                            "{name} was removed and no entry of the new channel upgrades from it"
                        )
                    } else {
                        format!("{name} stops at {end}")
                    };
                    let code = if ok_old { &STRANDED } else { &STILL_STUCK };
                    sink.push(
                        code,
                        format!("{}: {what}; the head {head} is not reached", sem_name(sem)),
                        &file,
                        pos,
                        Subject::entry(pkg, ch, name),
                    )
                    .help = Some(if ok_old {
                        "this worked in the base catalog: restore an edge (replaces, skips or skipRange) that names this bundle".into()
                    } else {
                        "already the case in the base catalog".into()
                    });
                }
            }
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
        let stranded: Vec<(&str, String)> = f
            .iter()
            .filter(|x| x.code == "UPG001")
            .map(|x| {
                (
                    x.message.split(':').next().unwrap_or(""),
                    x.subject.bundle.clone().unwrap_or_default(),
                )
            })
            .collect();
        // Without the edge, 1.0.0 is a second head: the channel has no single head, so nobody
        // reaches one (OLM v0 refuses the channel).
        assert_eq!(
            stranded,
            vec![
                ("OLM v0", "foo.v1.0.0".into()),
                ("OLM v1", "foo.v1.0.0".into()),
                ("OLM v0", "foo.v1.1.0".into()),
                ("OLM v1", "foo.v1.1.0".into())
            ]
        );
        assert!(f.iter().all(|x| x.message.contains("<no single head>")));
        // Keeping one head but dropping 1.1.0's edge to 1.0.0 strands only 1.0.0.
        let skip_edge = "- name: foo.v1.0.0\n- name: foo.v1.1.0\n- name: foo.v1.2.0\n  replaces: foo.v1.1.0\n  skips: [foo.v1.0.0]\n";
        let ok = check(&cfg(OLD), &cfg(skip_edge));
        assert!(ok.is_empty(), "{ok:#?}");
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
