//! `olmctl catalog diff` between catalogs whose every value is hostile (issue 28, items 8 and 9):
//! package, bundle and channel names, property types, skipRanges and deprecation messages carry
//! markdown, HTML, links, mentions, autolinks, backtick runs, pipes, terminal escapes, bidi
//! overrides and newlines. `-o markdown` is rendered by a real GFM renderer (comrak with tables,
//! autolinks and strikethrough, raw HTML kept) and must produce exactly the table and sections
//! olmctl meant, with every value shown as code; `-o text` and `-o markdown` carry no raw control
//! character.

mod common;

use std::path::Path;

use comrak::nodes::NodeValue;
use comrak::{Arena, Options, parse_document};
use serde_json::{Value, json};

use common::cli::{code, olmctl, p};
use common::terminal::assert_no_raw_controls;

/// Values that would inject something if written raw.
const HOSTILE: &[&str] = &[
    "\n# heading",
    "\n\n## heading two\n",
    "![x](http://evil/pixel.png)",
    "[a](http://evil)",
    "<img src=x>",
    "<script>alert(1)</script>",
    "</code></summary><img src=x>",
    "a|b",
    "a\\|b",
    "``` x ``",
    "`a|b`",
    "` leading",
    "trailing `",
    "@user",
    "@org/team",
    "http://evil.example",
    "www.evil.example",
    "mail@evil.example",
    "*em* _em_ ~~del~~",
    "&amp; &#64;user",
    "\n| x | y |\n|---|---|\n| 1 | 2 |",
    "\u{1b}]0;title\u{7}",
    "\u{1b}[2J\u{1b}[31m",
    "\u{202e}reversed",
    "\r\nFORGED ok: 0 errors",
    "line\u{2028}sep\u{2029}",
    "tab\there",
    "\\",
    "",
];

/// OLD and NEW catalog blobs: for each hostile value `h` (index `i`), a package `p{i}{h}` that
/// changes in every way the diff reports, a package `a{i}{h}` only NEW has and `r{i}{h}` only
/// OLD has.
fn catalogs() -> (Vec<Value>, Vec<Value>) {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let bundle = |pkg: &str, name: &str, version: &str, custom: Option<(&str, i64)>| {
        let mut props = vec![json!({"type": "olm.package",
            "value": {"packageName": pkg, "version": version}})];
        if let Some((t, v)) = custom {
            props.push(json!({"type": t, "value": v}));
        }
        json!({"schema": "olm.bundle", "package": pkg, "name": name,
            "image": format!("quay.io/x/b:{version}"), "properties": props})
    };
    for (i, h) in HOSTILE.iter().enumerate() {
        let pkg = format!("p{i}{h}");
        let (b0, b1, b2) = (
            format!("p{i}.v0.9.0{h}"),
            format!("p{i}.v1.0.0{h}"),
            format!("p{i}.v1.1.0{h}"),
        );
        let (kept, gone, added) = (format!("kept{h}"), format!("gone{h}"), format!("added{h}"));
        let custom = format!("x.custom{h}");
        old.extend([
            json!({"schema": "olm.package", "name": pkg, "defaultChannel": kept}),
            json!({"schema": "olm.channel", "package": pkg, "name": kept,
                "entries": [{"name": b0}, {"name": b1, "replaces": b0}]}),
            json!({"schema": "olm.channel", "package": pkg, "name": gone,
                "entries": [{"name": b0}]}),
            bundle(&pkg, &b0, "0.9.0", None),
            bundle(&pkg, &b1, "1.0.0", Some((&custom, 1))),
        ]);
        new.extend([
            json!({"schema": "olm.package", "name": pkg, "defaultChannel": added}),
            json!({"schema": "olm.channel", "package": pkg, "name": kept, "entries": [
                {"name": b1},
                {"name": b2, "replaces": b1, "skips": [b0],
                    "skipRange": ">=0.9.0 <1.1.0 || >=5.0.0"}]}),
            json!({"schema": "olm.channel", "package": pkg, "name": added,
                "entries": [{"name": b2}]}),
            bundle(&pkg, &b1, "1.0.0", Some((&custom, 2))),
            bundle(&pkg, &b2, "1.1.0", None),
            json!({"schema": "olm.deprecations", "package": pkg, "entries": [
                {"reference": {"schema": "olm.package"}, "message": h},
                {"reference": {"schema": "olm.channel", "name": kept}, "message": format!("use {added}")},
                {"reference": {"schema": "olm.bundle", "name": b1}, "message": format!("old {h}")}]}),
        ]);
        for (side, name) in [
            (&mut new, format!("a{i}{h}")),
            (&mut old, format!("r{i}{h}")),
        ] {
            let b = format!("{name}.v1.0.0");
            side.extend([
                json!({"schema": "olm.package", "name": name, "defaultChannel": h}),
                json!({"schema": "olm.channel", "package": name, "name": h,
                    "entries": [{"name": b}]}),
                bundle(&name, &b, "1.0.0", None),
            ]);
        }
    }
    (old, new)
}

fn write(dir: &Path, docs: &[Value]) {
    let text: Vec<String> = docs.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("catalog.json"), text.join("\n")).expect("write catalog");
}

/// `catalog diff OLD NEW -o output`: stdout, after checking the exit status (1: different).
fn diff(output: &str) -> String {
    let (old, new) = catalogs();
    let (o, n) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    write(o.path(), &old);
    write(n.path(), &new);
    let out = olmctl(&["catalog", "diff", p(o.path()), p(n.path()), "-o", output]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        code(&out),
        1,
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `s` as comrak writes text in HTML.
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Each value as the outputs show it: control characters escaped (olmctl's `text::escape`).
fn shown(s: &str) -> String {
    olmctl::text::escape(s).into_owned()
}

fn gfm() -> Options<'static> {
    let mut o = Options::default();
    o.extension.table = true;
    o.extension.autolink = true;
    o.extension.strikethrough = true;
    // Raw HTML is written through (GitHub keeps <img>, <a>, <details> ...), so an injected tag
    // shows in the rendered page.
    o.render.r#unsafe = true;
    o
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn markdown_renders_every_value_inert() {
    let md = diff("markdown");
    assert_no_raw_controls("markdown", &md);
    let opts = gfm();
    let rendered = comrak::markdown_to_html(&md, &opts);
    let packages = 3 * HOSTILE.len();

    // Nothing the values spelled: no image, link, script, emphasis, strikethrough, and the only
    // headings are olmctl's own.
    for bad in [
        "<img", "<a ", "<a>", "<script", "<h1", "<h2", "<h5", "<h6", "<em>", "<del>", "<hr",
    ] {
        assert_eq!(count(&rendered, bad), 0, "{bad} in:\n{rendered}\n---\n{md}");
    }
    assert_eq!(count(&rendered, "<h3>"), 1, "{rendered}");
    // One section per package: a heading or a <details> block, each naming it as code.
    let sections = count(&rendered, "<h4>") + count(&rendered, "<details>");
    assert_eq!(sections, packages, "{rendered}");
    assert_eq!(count(&rendered, "<h4><code>"), count(&rendered, "<h4>"));
    assert_eq!(
        count(&rendered, "<details><summary><code>"),
        count(&rendered, "<details>")
    );
    assert_eq!(
        count(&rendered, "</details>"),
        count(&rendered, "<details>")
    );

    // One table: its header and a row per package, each with the 7 cells of the header.
    assert_eq!(count(&rendered, "<table>"), 1, "{rendered}");
    let table = &rendered[rendered.find("<table>").unwrap()..rendered.find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr>").skip(1).collect();
    assert_eq!(rows.len(), 1 + packages, "{table}");
    for r in &rows {
        assert_eq!(count(r, "<td") + count(r, "<th"), 7, "row {r}");
    }
    // Every package name is shown whole, as code in its first cell. (A cell writes `|` as
    // `\|`. Before a value's own backslash, `\\|`, cmark-gfm, which GitHub runs, drops the
    // backslash before the pipe (table.c, unescape_pipes) and shows `\|`; comrak reads `\\` as
    // a pair and shows `\\|`. The row holds either way.)
    for (i, h) in HOSTILE.iter().enumerate() {
        for name in [format!("p{i}{h}"), format!("a{i}{h}"), format!("r{i}{h}")] {
            let comrak_shows = shown(&name).replace("\\|", "\\\\|");
            let cell = format!("<td><code>{}</code></td>", html(&comrak_shows));
            assert_eq!(count(table, &cell), 1, "{cell} in:\n{table}");
        }
        // A deprecation message (free text) is shown whole, as code.
        let message = format!("<code>{}</code>", html(&shown(&format!("old {h}"))));
        assert!(rendered.contains(&message), "{message} in:\n{rendered}");
    }

    // Text GitHub would link after rendering (mentions, bare URLs) only ever in code: the text
    // outside code spans, HTML and links has no '@', 'http' or 'www.' from a value.
    let arena = Arena::new();
    let root = parse_document(&arena, &md, &opts);
    for node in root.descendants() {
        match &node.data.borrow().value {
            NodeValue::Text(t) => {
                for bad in ["@", "http", "www.", "<", ">"] {
                    assert!(!t.contains(bad), "{bad} in text {t:?}");
                }
            }
            NodeValue::Link(l) => panic!("a link to {} in:\n{md}", l.url),
            NodeValue::Image(l) => panic!("an image from {} in:\n{md}", l.url),
            NodeValue::HtmlInline(h) => panic!("inline HTML {h:?} in:\n{md}"),
            NodeValue::HtmlBlock(b) => {
                // olmctl's collapsed sections: the value inside <code>, nothing else raw.
                let outside: String = b
                    .literal
                    .split("<code>")
                    .map(|s| s.split_once("</code>").map_or(s, |(_, rest)| rest))
                    .collect();
                for bad in ["@", "http", "www.", "<img", "<a", "<script"] {
                    assert!(!outside.contains(bad), "{bad} in HTML {:?}", b.literal);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn text_has_no_raw_controls_or_forged_lines() {
    let text = diff("text");
    assert_no_raw_controls("text", &text);
    for l in text.lines() {
        assert!(
            l.starts_with("package ")
                || l.starts_with("  ")
                || l.starts_with("upgrade check: ")
                || l.contains(" packages differ "),
            "a line olmctl did not write: {l:?} in:\n{text}"
        );
    }
    // The values are still there, escaped.
    assert!(
        text.contains("package p21\\u{1b}]0;title\\u{7}: changed"),
        "{text}"
    );
    assert!(
        text.contains("package p24\\r\\nFORGED ok: 0 errors: changed"),
        "{text}"
    );
}
