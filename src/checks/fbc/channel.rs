//! Channel rules: package and name (FBC020-022), entries (FBC023, FBC025, FBC030-032), and the
//! upgrade-graph shape opm requires: non-empty (FBC024), exactly one head (FBC026-027), no cycle
//! (FBC028), no stranded entries (FBC029).

use std::collections::HashSet;

use super::Sink;
use super::codes::*;
use crate::diag::Subject;
use crate::model::Index;
use crate::model::chain::{Head, analyze};

/// Runs the channel rules.
pub fn check(idx: &Index<'_>, sink: &mut Sink) {
    for (pkg, view) in &idx.packages {
        let known_package = view.package().is_some() && !pkg.is_empty();
        for (name, blobs) in &view.channels {
            let first = blobs[0];
            let subj = Subject::channel(pkg, name);
            let (file, pos) = (&first.src.file, first.src.pos);
            if !known_package {
                for c in blobs {
                    sink.push(
                        &CHANNEL_UNKNOWN_PACKAGE,
                        format!("unknown package \"{pkg}\" for channel \"{name}\""),
                        &c.src.file,
                        c.src.pos,
                        subj.clone(),
                    )
                    .help = Some(if pkg.is_empty() {
                        "set `package` on the channel".into()
                    } else {
                        format!(
                            "add an olm.package blob named \"{pkg}\" or fix the channel's `package`"
                        )
                    });
                }
            }
            if name.is_empty() {
                for c in blobs {
                    sink.push(
                        &CHANNEL_NO_NAME,
                        format!("package \"{pkg}\" contains channel with no name"),
                        &c.src.file,
                        c.src.pos,
                        subj.clone(),
                    );
                }
                continue;
            }
            for dup in blobs.iter().skip(1) {
                sink.push(
                    &DUPLICATE_CHANNEL,
                    format!("package \"{pkg}\" has duplicate channel \"{name}\""),
                    &dup.src.file,
                    dup.src.pos,
                    subj.clone(),
                )
                .help = Some(format!(
                    "the first definition is at {}:{}",
                    file.display(),
                    pos.line
                ));
            }
            if first.entries.is_empty() {
                sink.push(
                    &EMPTY_CHANNEL,
                    "channel must contain at least one bundle",
                    file,
                    pos,
                    subj.clone(),
                );
                continue;
            }
            let mut seen = HashSet::new();
            for e in &first.entries {
                let esubj = Subject::entry(pkg, name, &e.name);
                if e.name.is_empty() {
                    sink.push(
                        &ENTRY_NO_NAME,
                        "channel entry has no name",
                        file,
                        e.pos,
                        subj.clone(),
                    );
                    continue;
                }
                if !seen.insert(e.name.as_str()) {
                    sink.push(
                        &DUPLICATE_ENTRY,
                        format!(
                            "invalid package \"{pkg}\", channel \"{name}\": duplicate entry \"{}\"",
                            e.name
                        ),
                        file,
                        e.pos,
                        esubj.clone(),
                    );
                }
                if known_package && !view.bundles.contains_key(e.name.as_str()) {
                    sink.push(&ENTRY_NO_BUNDLE, format!("no olm.bundle blob found in package \"{pkg}\" for channel entry \"{}\"", e.name), file, e.pos, esubj.clone())
                        .help = Some("add the bundle (opm render <bundle image>) or remove the entry".into());
                }
                for (i, s) in e.skips.iter().enumerate() {
                    if s.is_empty() {
                        sink.push(
                            &EMPTY_SKIP,
                            format!("skip[{i}] is empty"),
                            file,
                            e.pos,
                            esubj.clone(),
                        );
                    }
                }
                if !e.skip_range.is_empty()
                    && let Err(err) = crate::range::Range::parse(&e.skip_range)
                {
                    sink.push(&BAD_SKIP_RANGE, format!("invalid skipRange \"{}\": {err}", e.skip_range), file, e.skip_range_pos, esubj.clone())
                        .help = Some("use blang/semver syntax: comparators separated by spaces (AND) or `||` (OR), e.g. \">=1.0.0 <1.2.0\"; `^` and `~` are not supported".into());
                }
            }
            graph(first, pkg, name, sink);
        }
    }
}

fn graph(c: &crate::fbc::decl::Channel, pkg: &str, name: &str, sink: &mut Sink) {
    let r = analyze(c);
    let subj = Subject::channel(pkg, name);
    let (file, pos) = (&c.src.file, c.src.pos);
    let entry_pos = |n: &str| {
        c.entries
            .iter()
            .find(|e| e.name == n)
            .map_or(pos, |e| e.pos)
    };
    match &r.head {
        Head::None => {
            sink.push(&NO_HEAD, "no channel head found in graph", file, pos, subj.clone()).help =
                Some("every entry is replaced or skipped by another: the replaces/skips edges form a cycle".into());
        }
        Head::Many(hs) => {
            sink.push(&MULTIPLE_HEADS, format!("multiple channel heads found in graph: {}", hs.join(", ")), file, pos, subj.clone())
                .help = Some("exactly one entry may be unreferenced; make the newer heads replace or skip the older ones".into());
        }
        Head::One(_) => {}
    }
    if let Some(cy) = &r.cycle {
        sink.push(
            &CYCLE,
            format!(
                "detected cycle in replaces chain of upgrade graph: {}",
                cy.join(" -> ")
            ),
            file,
            entry_pos(cy[0]),
            subj.clone(),
        );
    }
    if !r.stranded.is_empty() {
        sink.push(&STRANDED, format!("channel contains one or more stranded bundles: {}", r.stranded.join(", ")), file, entry_pos(r.stranded[0]), subj)
            .help = Some("link them into the replaces chain from the head, or skip them from an entry on the chain (skips are not transitive)".into());
    }
}
