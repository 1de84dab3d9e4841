//! A [`CatalogDiff`] for people (text), for machines (JSON) and for a pull-request comment
//! (Markdown, each package collapsible when its section is long), each with the verdict of
//! `check-upgrades` (the findings for that package) beside it.
//!
//! Every value from the catalogs (names, versions, property types, ranges, messages, and the
//! findings' messages that quote them) is written through the output's `Style`: escaped by
//! [`crate::text::escape`] in text, an inert code span ([`crate::markdown`]) in Markdown.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{BundleRef, CatalogDiff, ChannelRef, Deprecation, Edge, PackageDiff, Status};
use crate::diag::{Finding, Severity};

/// A package section longer than this many lines is collapsed in Markdown.
pub const COLLAPSE_AFTER: usize = 12;

/// The upgrade findings by package (findings without a package under "").
pub fn by_package(findings: &[Finding]) -> BTreeMap<String, Vec<&Finding>> {
    let mut m: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        m.entry(f.subject.package.clone().unwrap_or_default())
            .or_default()
            .push(f);
    }
    m
}

/// How an output shows what came from the catalogs.
struct Style {
    /// A name, version, property type or range.
    value: fn(&str) -> String,
    /// Free text (a deprecation message), set apart from the line around it.
    quoted: fn(&str) -> String,
    /// Between the old and the new of a move or an edge.
    arrow: &'static str,
}

fn text_value(s: &str) -> String {
    crate::text::escape(s).into_owned()
}

fn text_quoted(s: &str) -> String {
    crate::text::escape(&format!("{s:?}")).into_owned()
}

/// Text for a terminal.
const TEXT: Style = Style {
    value: text_value,
    quoted: text_quoted,
    arrow: "->",
};

/// The lines of the HTML page (which escapes them for HTML itself).
const PAGE: Style = Style {
    arrow: "→", ..TEXT
};

/// Markdown: every value a code span ([`crate::markdown::code`]).
const MARKDOWN: Style = Style {
    value: crate::markdown::code,
    quoted: crate::markdown::code,
    arrow: "→",
};

fn bundle(b: &BundleRef, s: &Style) -> String {
    if b.version.is_empty() {
        (s.value)(&b.name)
    } else {
        format!("{} ({})", (s.value)(&b.name), (s.value)(&b.version))
    }
}

/// Names joined with commas; more than five as the first two, an ellipsis, the last and the
/// count (the JSON output lists every one).
fn short_list(names: &[String]) -> String {
    match names {
        [a, b, .., z] if names.len() > 5 => format!("{a}, {b}, …, {z} ({} entries)", names.len()),
        _ => names.join(", "),
    }
}

/// Edges grouped by target: "from, from -> to (kind)", one line per (to, kind, range), so a
/// skipRange reads as one line listing the entries it covers.
fn edge_lines(edges: &[Edge], s: &Style) -> Vec<String> {
    let mut groups: BTreeMap<(&str, &str, Option<&str>), Vec<&str>> = BTreeMap::new();
    for e in edges {
        groups
            .entry((e.to.as_str(), e.kind, e.range.as_deref()))
            .or_default()
            .push(e.from.as_str());
    }
    groups
        .into_iter()
        .map(|((to, kind, range), froms)| {
            let froms: Vec<String> = froms.into_iter().map(s.value).collect();
            let froms = short_list(&froms);
            let (arrow, to) = (s.arrow, (s.value)(to));
            match range {
                Some(r) => format!("{froms} {arrow} {to} (skipRange {})", (s.quoted)(r)),
                None => format!("{froms} {arrow} {to} ({kind})"),
            }
        })
        .collect()
}

fn channel(c: &ChannelRef, s: &Style) -> String {
    let entries = format!(
        "{} entr{}",
        c.entries,
        if c.entries == 1 { "y" } else { "ies" }
    );
    let name = (s.value)(&c.name);
    if c.head.is_empty() {
        format!("{name} ({entries})")
    } else {
        format!("{name} ({entries}, head {})", (s.value)(&c.head))
    }
}

fn deprecation(d: &Deprecation, s: &Style) -> String {
    let what = match d.schema.as_str() {
        "olm.package" => "package".to_string(),
        "olm.channel" => format!("channel {}", (s.value)(&d.name)),
        "olm.bundle" => format!("bundle {}", (s.value)(&d.name)),
        other => format!("{} {}", (s.value)(other), (s.value)(&d.name)),
    };
    format!("{what}: {}", (s.quoted)(&d.message))
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "info",
    }
}

/// The lines of one package's changes as (label, items), every value written in style `s`;
/// channels nest under "channel NAME".
fn lines(p: &PackageDiff, s: &Style) -> Vec<(String, Vec<String>)> {
    let (v, arrow) = (s.value, s.arrow);
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |label: &str, items: Vec<String>| {
        if !items.is_empty() {
            out.push((label.to_string(), items));
        }
    };
    if let Some(m) = &p.default_channel {
        add(
            "default channel",
            vec![format!("{} {arrow} {}", v(&m.old), v(&m.new))],
        );
    }
    add(
        "bundles added",
        p.bundles_added.iter().map(|b| bundle(b, s)).collect(),
    );
    add(
        "bundles removed",
        p.bundles_removed.iter().map(|b| bundle(b, s)).collect(),
    );
    let list = |names: &[String]| names.iter().map(|n| v(n)).collect::<Vec<_>>().join(", ");
    add(
        "bundles changed",
        p.bundles_changed
            .iter()
            .map(|c| format!("{}: {}", v(&c.name), list(&c.changed)))
            .collect(),
    );
    add(
        "channels added",
        p.channels_added.iter().map(|c| channel(c, s)).collect(),
    );
    add(
        "channels removed",
        p.channels_removed.iter().map(|c| channel(c, s)).collect(),
    );
    for c in &p.channels {
        let mut items = Vec::new();
        if let Some(h) = &c.head {
            // An empty head: the channel has none or several (diff::head).
            let head = |n: &str| {
                if n.is_empty() {
                    "(no single head)".to_string()
                } else {
                    v(n)
                }
            };
            items.push(format!("head {} {arrow} {}", head(&h.old), head(&h.new)));
        }
        if !c.entries_added.is_empty() {
            items.push(format!("entries added: {}", list(&c.entries_added)));
        }
        if !c.entries_removed.is_empty() {
            items.push(format!("entries removed: {}", list(&c.entries_removed)));
        }
        for (what, edges) in [("added", &c.edges_added), ("removed", &c.edges_removed)] {
            items.extend(
                edge_lines(edges, s)
                    .into_iter()
                    .map(|l| format!("edge {what}: {l}")),
            );
        }
        add(&format!("channel {}", v(&c.name)), items);
    }
    add(
        "deprecations added",
        p.deprecations_added
            .iter()
            .map(|d| deprecation(d, s))
            .collect(),
    );
    add(
        "deprecations removed",
        p.deprecations_removed
            .iter()
            .map(|d| deprecation(d, s))
            .collect(),
    );
    out
}

/// Each package's changes as lines ("label: items", a channel's items each on its own line),
/// for the HTML diff page.
pub fn package_lines(d: &CatalogDiff) -> BTreeMap<String, Vec<String>> {
    d.packages
        .iter()
        .map(|p| {
            let mut out = vec![format!("package {}", status(p.status))];
            for (label, items) in lines(p, &PAGE) {
                if label.starts_with("channel ") {
                    out.extend(items.into_iter().map(|i| format!("{label}: {i}")));
                } else {
                    out.push(format!("{label}: {}", items.join(", ")));
                }
            }
            (p.name.clone(), out)
        })
        .collect()
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Changed => "changed",
    }
}

fn summary(d: &CatalogDiff) -> String {
    let count = |s: Status| d.packages.iter().filter(|p| p.status == s).count();
    let n = d.packages.len();
    format!(
        "{n} package{} differ{} ({} added, {} removed, {} changed)",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
        count(Status::Added),
        count(Status::Removed),
        count(Status::Changed)
    )
}

/// A finding on one line, its message (which quotes catalog values) written in style `s`.
fn verdict_line(f: &Finding, s: &Style) -> String {
    format!(
        "{} {}: {}",
        f.code,
        severity(f.severity),
        (s.value)(&f.message)
    )
}

/// Text for a terminal.
pub fn text(d: &CatalogDiff, findings: &[Finding]) -> String {
    let verdicts = by_package(findings);
    let mut out = String::new();
    for p in &d.packages {
        let _ = writeln!(
            out,
            "package {}: {}",
            (TEXT.value)(&p.name),
            status(p.status)
        );
        for (label, items) in lines(p, &TEXT) {
            if label.starts_with("channel ") {
                let _ = writeln!(out, "  {label}:");
                for i in items {
                    let _ = writeln!(out, "    {i}");
                }
            } else {
                let _ = writeln!(out, "  {label}: {}", items.join(", "));
            }
        }
        for f in verdicts.get(&p.name).into_iter().flatten() {
            let _ = writeln!(out, "  upgrade check: {}", verdict_line(f, &TEXT));
        }
    }
    for f in verdicts.get("").into_iter().flatten() {
        let _ = writeln!(out, "upgrade check: {}", verdict_line(f, &TEXT));
    }
    if d.is_empty() {
        out.push_str("the catalogs are the same\n");
    } else {
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let _ = writeln!(
            out,
            "{}; upgrade check: {errors} error{}",
            summary(d),
            if errors == 1 { "" } else { "s" }
        );
    }
    out
}

/// JSON: the diff with each package's upgrade findings.
pub fn json(d: &CatalogDiff, findings: &[Finding]) -> serde_json::Value {
    let verdicts = by_package(findings);
    let packages: Vec<serde_json::Value> = d
        .packages
        .iter()
        .map(|p| {
            let mut v = serde_json::to_value(p).unwrap_or_default();
            v["upgradeCheck"] = verdicts
                .get(&p.name)
                .into_iter()
                .flatten()
                .map(|f| {
                    serde_json::json!({
                        "code": f.code,
                        "severity": severity(f.severity),
                        "message": f.message,
                    })
                })
                .collect();
            v
        })
        .collect();
    serde_json::json!({
        "identical": d.is_empty(),
        "packages": packages,
        "upgradeCheck": serde_json::from_str::<serde_json::Value>(&crate::diag::render_json(findings))
            .unwrap_or_default(),
    })
}

fn verdict_cell(fs: Option<&Vec<&Finding>>) -> String {
    let fs = fs.map(Vec::as_slice).unwrap_or_default();
    let errors = fs.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = fs
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    match (errors, warnings) {
        (0, 0) => "ok".to_string(),
        (0, w) => format!("{w} warning{}", if w == 1 { "" } else { "s" }),
        (e, 0) => format!("**{e} error{}**", if e == 1 { "" } else { "s" }),
        (e, w) => format!(
            "**{e} error{}**, {w} warning{}",
            if e == 1 { "" } else { "s" },
            if w == 1 { "" } else { "s" }
        ),
    }
}

/// Markdown for a pull-request comment: a summary table, then a section per package
/// (collapsed when longer than [`COLLAPSE_AFTER`] lines).
pub fn markdown(d: &CatalogDiff, findings: &[Finding]) -> String {
    let verdicts = by_package(findings);
    let mut out = String::from("### Catalog diff\n\n");
    if d.is_empty() {
        out.push_str("The catalogs are the same.\n");
        return out;
    }
    let _ = writeln!(out, "{}.\n", summary(d));
    out.push_str("| package | change | bundles +/−/~ | channels +/− | edges +/− | heads moved | upgrade check |\n");
    out.push_str("|---|---|---|---|---|---|---|\n");
    for p in &d.packages {
        let edges_added: usize = p.channels.iter().map(|c| c.edges_added.len()).sum();
        let edges_removed: usize = p.channels.iter().map(|c| c.edges_removed.len()).sum();
        let heads = p.channels.iter().filter(|c| c.head.is_some()).count();
        let _ = writeln!(
            out,
            "| {} | {} | {}/{}/{} | {}/{} | {}/{} | {} | {} |",
            crate::markdown::cell(&p.name),
            status(p.status),
            p.bundles_added.len(),
            p.bundles_removed.len(),
            p.bundles_changed.len(),
            p.channels_added.len(),
            p.channels_removed.len(),
            edges_added,
            edges_removed,
            heads,
            verdict_cell(verdicts.get(&p.name))
        );
    }
    out.push('\n');
    for p in &d.packages {
        let mut body = String::new();
        let mut count = 0;
        for (label, items) in lines(p, &MARKDOWN) {
            if label.starts_with("channel ") {
                let _ = writeln!(body, "- **{label}**");
                for i in items {
                    let _ = writeln!(body, "  - {i}");
                    count += 1;
                }
            } else {
                let _ = writeln!(body, "- **{label}**: {}", items.join(", "));
            }
            count += 1;
        }
        for f in verdicts.get(&p.name).into_iter().flatten() {
            let _ = writeln!(body, "- upgrade check: {}", verdict_line(f, &MARKDOWN));
            count += 1;
        }
        let status = status(p.status);
        if count > COLLAPSE_AFTER {
            let _ = write!(
                out,
                "<details><summary>{} ({status}): {count} changes</summary>\n\n{body}\n</details>\n\n",
                crate::markdown::html_code(&p.name)
            );
        } else {
            let _ = write!(
                out,
                "#### {} ({status})\n\n{body}\n",
                crate::markdown::code(&p.name)
            );
        }
    }
    for f in verdicts.get("").into_iter().flatten() {
        let _ = writeln!(out, "- upgrade check: {}", verdict_line(f, &MARKDOWN));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{ChannelDiff, Moved};

    #[test]
    fn long_lists_are_shortened_with_their_count() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            short_list(&names(&["a", "b", "c", "d", "e"])),
            "a, b, c, d, e"
        );
        assert_eq!(
            short_list(&names(&["a", "b", "c", "d", "e", "f"])),
            "a, b, …, f (6 entries)"
        );
    }

    /// Edges to one target with one kind and range read as one line.
    #[test]
    fn edges_are_grouped_by_target() {
        let e = |from: &str, to: &str, kind: &'static str, range: Option<&str>| Edge {
            from: from.into(),
            to: to.into(),
            kind,
            range: range.map(String::from),
        };
        let edges = [
            e("a", "c", "skipRange", Some("<2.0.0")),
            e("a", "b", "replaces", None),
            e("b", "c", "skipRange", Some("<2.0.0")),
            e("b", "c", "replaces", None),
        ];
        assert_eq!(
            edge_lines(&edges, &TEXT),
            [
                "a -> b (replaces)",
                "b -> c (replaces)",
                "a, b -> c (skipRange \"<2.0.0\")"
            ]
        );
    }

    /// A channel that lost its single head says so instead of printing an empty name.
    #[test]
    fn a_head_move_to_several_heads_is_named() {
        let p = PackageDiff {
            name: "p".into(),
            status: crate::diff::Status::Changed,
            default_channel: None,
            bundles_added: Vec::new(),
            bundles_removed: Vec::new(),
            bundles_changed: Vec::new(),
            channels_added: Vec::new(),
            channels_removed: Vec::new(),
            deprecations_added: Vec::new(),
            deprecations_removed: Vec::new(),
            channels: vec![ChannelDiff {
                name: "stable".into(),
                head: Some(Moved {
                    old: "p.v1".into(),
                    new: String::new(),
                }),
                ..ChannelDiff::default()
            }],
        };
        let got = lines(&p, &TEXT);
        assert!(
            got.iter()
                .flat_map(|(_, items)| items)
                .any(|i| i == "head p.v1 -> (no single head)"),
            "{got:?}"
        );
    }
}
