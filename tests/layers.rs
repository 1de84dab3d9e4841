//! The library's top-level modules form layers: no module uses a module of its own layer or of
//! a higher one, and inside a module no two files use each other (a cycle), except a `mod.rs`
//! and its direct children. Read from the source text of every `src/**/*.rs` (the generated
//! `src/serve/gen/` skipped): `crate::m` paths (also inside `use crate::{...}` groups),
//! `super::` paths that reach the crate root, and intra-doc links to `crate::m` in comments.
//! Plain comments and strings do not count. The table is the README's (Layout).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, bottom first. A module may use only modules of lower layers.
const LAYERS: &[&[&str]] = &[
    &[
        "text",
        "gosort",
        "gojson",
        "range",
        "imageref",
        "outdir",
        "encoding",
        "openshift",
        "linediff",
    ],
    &["markdown", "diag", "names"],
    &["input"],
    &["fbc"],
    &["model"],
    &["graph"],
    &["bundle"],
    &["checks", "oci", "olmv1", "rbac", "resolve"],
    &[
        "diff", "serve", "template", "gate", "install", "catalog", "validate", "status",
    ],
    &["codes", "build", "manage", "baseline"],
    &["sarif", "github", "codeclimate"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// `src/a/b.rs` → `["a", "b"]`, `src/a/mod.rs` → `["a"]`, `src/lib.rs` → `[]`.
fn module_path(file: &str) -> Vec<String> {
    let rel = file.trim_start_matches("src/").trim_end_matches(".rs");
    let mut segs: Vec<String> = rel.split('/').map(str::to_string).collect();
    if matches!(segs.last().map(String::as_str), Some("mod" | "lib")) {
        segs.pop();
    }
    segs
}

/// The text with comments and string/char literals blanked (newlines kept), and the comments
/// of each line (1-based).
fn split_code(text: &str) -> (String, BTreeMap<usize, String>) {
    let c: Vec<char> = text.chars().collect();
    let (mut code, mut comments) = (String::new(), BTreeMap::<usize, String>::new());
    let (mut i, mut line) = (0, 1);
    let blank = |code: &mut String, ch: char, line: &mut usize| {
        if ch == '\n' {
            *line += 1;
            code.push('\n');
        } else {
            code.push(' ');
        }
    };
    let ident = |k: usize| k > 0 && (c[k - 1].is_alphanumeric() || c[k - 1] == '_');
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                comments.entry(line).or_default().push(c[i]);
                code.push(' ');
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    if depth == 0 {
                        code.push_str("  ");
                        i += 2;
                        break;
                    }
                }
                if i >= c.len() {
                    break;
                }
                comments.entry(line).or_default().push(c[i]);
                blank(&mut code, c[i], &mut line);
                i += 1;
            }
        } else if at(i) == 'r' && !ident(i) && (at(i + 1) == '"' || at(i + 1) == '#') {
            // A raw string r"..." or r#"..."#.
            let mut j = i + 1;
            while at(j) == '#' {
                j += 1;
            }
            if at(j) != '"' {
                code.push(c[i]);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            let mut k = j + 1;
            while k < c.len() && !(c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#')) {
                k += 1;
            }
            for &ch in &c[i..(k + 1 + hashes).min(c.len())] {
                blank(&mut code, ch, &mut line);
            }
            i = k + 1 + hashes;
        } else if at(i) == '"' {
            code.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                let n = if c[i] == '\\' { 2 } else { 1 };
                for &ch in &c[i..(i + n).min(c.len())] {
                    blank(&mut code, ch, &mut line);
                }
                i += n;
            }
            code.push(' ');
            i += 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal (a lifetime has no closing quote).
            let mut k = i + 1;
            if at(k) == '\\' {
                k += 2;
            } else {
                k += 1;
            }
            while k < c.len() && c[k] != '\'' {
                k += 1;
            }
            for _ in i..=k.min(c.len() - 1) {
                code.push(' ');
            }
            i = k + 1;
        } else {
            if c[i] == '\n' {
                line += 1;
            }
            code.push(c[i]);
            i += 1;
        }
    }
    (code, comments)
}

/// A token with its line.
#[derive(Debug, Clone, PartialEq)]
struct Tok {
    text: String,
    line: usize,
}

fn tokens(code: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    for (n, l) in code.lines().enumerate() {
        let c: Vec<char> = l.chars().collect();
        let mut i = 0;
        while i < c.len() {
            if c[i].is_alphanumeric() || c[i] == '_' {
                let s = i;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                out.push(Tok {
                    text: c[s..i].iter().collect(),
                    line: n + 1,
                });
            } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
                out.push(Tok {
                    text: "::".into(),
                    line: n + 1,
                });
                i += 2;
            } else {
                if !c[i].is_whitespace() {
                    out.push(Tok {
                        text: c[i].to_string(),
                        line: n + 1,
                    });
                }
                i += 1;
            }
        }
    }
    out
}

/// The paths starting at `t[i]` (`a::b::{c, d::e}` gives `a::b::c` and `a::b::d::e`), and the
/// index after them.
fn paths(t: &[Tok], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        match t.get(i).map(|x| x.text.as_str()) {
            Some("{") => {
                let mut out = Vec::new();
                i += 1;
                while i < t.len() && t[i].text != "}" {
                    if t[i].text == "," {
                        i += 1;
                        continue;
                    }
                    let (sub, j) = paths(t, i);
                    out.extend(sub.into_iter().map(|s| [prefix.clone(), s].concat()));
                    i = j.max(i + 1);
                }
                return (out, i + 1);
            }
            Some(s) if s.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                prefix.push(s.to_string());
                i += 1;
                if t.get(i).map(|x| x.text.as_str()) == Some("::") {
                    i += 1;
                    continue;
                }
                return (vec![prefix], i);
            }
            _ => return (vec![prefix], i),
        }
    }
}

/// One use of a path: the line and the absolute path (from the crate root).
fn uses(file: &str, text: &str) -> Vec<(usize, Vec<String>)> {
    let (code, comments) = split_code(text);
    let t = tokens(&code);
    let base = module_path(file);
    let mut out = Vec::new();
    // Inline modules (`mod tests {`): their name and the brace depth they close at.
    let (mut inline, mut depth): (Vec<(String, usize)>, usize) = (Vec::new(), 0);
    let mut i = 0;
    while i < t.len() {
        let s = t[i].text.as_str();
        let prev = i.checked_sub(1).map(|p| t[p].text.as_str());
        let next = t.get(i + 1).map(|x| x.text.as_str());
        match s {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            "mod" if t.get(i + 2).is_some_and(|x| x.text == "{") => {
                inline.push((t[i + 1].text.clone(), depth));
            }
            "crate" | "super" | "self"
                if next == Some("::") && prev != Some("::") && prev != Some("$") =>
            {
                let line = t[i].line;
                let mut here: Vec<String> = base.clone();
                here.extend(inline.iter().map(|(m, _)| m.clone()));
                let (found, j) = paths(&t, i);
                for p in found {
                    let mut abs = if p[0] == "crate" {
                        Vec::new()
                    } else {
                        here.clone()
                    };
                    for seg in &p {
                        match seg.as_str() {
                            "crate" | "self" => {}
                            "super" => {
                                abs.pop();
                            }
                            _ => abs.push(seg.clone()),
                        }
                    }
                    if !abs.is_empty() {
                        out.push((line, abs));
                    }
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Intra-doc links: [`crate::m::...`] and [..](crate::m::...).
    for (line, c) in comments {
        for (k, _) in c.match_indices("crate::") {
            let before = &c[..k];
            if before.ends_with("[`") || before.ends_with('[') || before.ends_with("](") {
                let m: String = c[k + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push((line, vec![m]));
            }
        }
    }
    out
}

/// The file of module path `segs` among `files` (its longest prefix that is a file).
fn file_of<'a>(segs: &[String], files: &'a BTreeSet<String>) -> Option<&'a String> {
    (1..=segs.len()).rev().find_map(|k| {
        let p = segs[..k].join("/");
        files
            .get(&format!("src/{p}.rs"))
            .or_else(|| files.get(&format!("src/{p}/mod.rs")))
    })
}

/// Whether `a` is `dir/mod.rs` and `b` a direct child of `dir` (or the other way round).
fn parent_child(a: &str, b: &str) -> bool {
    let pc = |p: &str, c: &str| {
        p.strip_suffix("mod.rs").is_some_and(|dir| {
            c.strip_prefix(dir).is_some_and(|rest| {
                rest != "mod.rs"
                    && (!rest.contains('/')
                        || rest.matches('/').count() == 1 && rest.ends_with("/mod.rs"))
            })
        })
    };
    pc(a, b) || pc(b, a)
}

/// Every violation in `files` (path, text).
fn check(files: &[(String, String)]) -> Vec<String> {
    let names: BTreeSet<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in files {
        let own = module_path(file);
        let Some(me) = own.first() else { continue };
        let Some(my_layer) = layer(me) else {
            problems.push(format!("{file}: module {me} is not in the layer table"));
            continue;
        };
        for (line, abs) in uses(file, text) {
            let m = &abs[0];
            if m == me {
                if let Some(target) = file_of(&abs, &names)
                    && target != file
                {
                    edges
                        .entry(file.clone())
                        .or_default()
                        .insert(target.clone());
                }
                continue;
            }
            let Some(their) = layer(m) else {
                // A crate-root item of lib.rs, not a module.
                continue;
            };
            if their >= my_layer {
                let rel = if their > my_layer { ">" } else { "=" };
                problems.push(format!(
                    "{file}:{line}: module {me} (layer {my_layer}) uses module {m} (layer {their} {rel} {my_layer})"
                ));
            }
        }
    }
    // File-level cycles: pairs of files that reach each other, mod.rs ↔ child edges aside.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(f) = todo.pop() {
            for g in edges.get(&f).into_iter().flatten() {
                if !parent_child(&f, g) && seen.insert(g.clone()) {
                    todo.push(g.clone());
                }
            }
        }
        seen
    };
    let mut cycles = BTreeSet::new();
    for a in edges.keys() {
        let from_a = reach(a);
        for b in &from_a {
            if a < b && reach(b).contains(a) {
                cycles.insert(format!("{a} and {b} use each other (a file-level cycle)"));
            }
        }
    }
    problems.extend(cycles);
    problems
}

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("entry").path();
        let rel = p.to_string_lossy().replace('\\', "/");
        if rel.starts_with("src/serve/gen") {
            continue;
        }
        if p.is_dir() {
            sources(&p, out);
        } else if rel.ends_with(".rs") {
            out.push((rel, std::fs::read_to_string(&p).expect("read")));
        }
    }
}

#[test]
fn the_library_is_layered() {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).expect("cd");
    let mut files = Vec::new();
    sources(Path::new("src"), &mut files);
    files.sort();
    assert!(files.len() > 100, "{}", files.len());
    let problems = check(&files);
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

fn synthetic(files: &[(&str, &str)]) -> Vec<String> {
    let v: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    check(&v)
}

#[test]
fn the_checker_finds_climbs_and_cycles() {
    // Downward uses, comments, strings, `$crate` and plain doc text are fine.
    let ok = synthetic(&[
        (
            "src/fbc/mod.rs",
            "//! Read by `crate::checks` (plain text).\nuse crate::{text::esc, input};\nmod a;\nmod b;\nfn f() { let _ = \"crate::gate\"; let _ = '\"'; }\nmacro_rules! m { () => { $crate::gate::x() } }\n",
        ),
        ("src/fbc/a.rs", "use super::b::B;\nuse super::X;\n"),
        ("src/fbc/b.rs", "pub struct B;\nuse super::X;\n"),
        ("src/text.rs", "pub fn esc() {}\n"),
    ]);
    assert!(ok.is_empty(), "{ok:?}");

    // Upward: a path, a `use crate::{...}` group, a `super::` path reaching the root, an
    // intra-doc link, and a use inside an inline module.
    let bad = synthetic(&[
        (
            "src/fbc/write.rs",
            "use crate::model::Index;\nuse crate::{text, checks::Code};\nfn f() {\n    super::super::gate::run();\n}\n/// See [`crate::graph::x`].\nfn g() {}\nmod tests {\n    use super::super::super::serve;\n}\n",
        ),
        ("src/fbc/mod.rs", "pub mod write;\n"),
        ("src/text.rs", "use crate::diag::Finding;\n"),
        ("src/newmod.rs", ""),
    ]);
    assert_eq!(
        bad,
        [
            "src/fbc/write.rs:1: module fbc (layer 3) uses module model (layer 4 > 3)",
            "src/fbc/write.rs:2: module fbc (layer 3) uses module checks (layer 7 > 3)",
            "src/fbc/write.rs:4: module fbc (layer 3) uses module gate (layer 8 > 3)",
            "src/fbc/write.rs:9: module fbc (layer 3) uses module serve (layer 8 > 3)",
            "src/fbc/write.rs:6: module fbc (layer 3) uses module graph (layer 5 > 3)",
            "src/text.rs:1: module text (layer 0) uses module diag (layer 1 > 0)",
            "src/newmod.rs: module newmod is not in the layer table",
        ]
    );

    // A same-layer use, and two sibling files using each other (through a third too).
    let cyc = synthetic(&[
        ("src/oci/mod.rs", "mod a;\nmod b;\nmod c;\nuse a::A;\n"),
        ("src/oci/a.rs", "use super::b::B;\n"),
        ("src/oci/b.rs", "use crate::oci::c::C;\n"),
        ("src/oci/c.rs", "use super::a::A;\nuse super::X;\n"),
        ("src/checks/mod.rs", "use crate::oci::layer;\n"),
        ("src/cli/mod.rs", "use crate::sarif;\n"),
        ("src/oci/net.rs", "use super::registry::R;\n"),
        ("src/oci/registry.rs", "use super::net::N;\n"),
    ]);
    assert_eq!(
        cyc,
        [
            "src/checks/mod.rs:1: module checks (layer 7) uses module oci (layer 7 = 7)",
            "src/cli/mod.rs: module cli is not in the layer table",
            "src/oci/a.rs and src/oci/b.rs use each other (a file-level cycle)",
            "src/oci/a.rs and src/oci/c.rs use each other (a file-level cycle)",
            "src/oci/b.rs and src/oci/c.rs use each other (a file-level cycle)",
            "src/oci/net.rs and src/oci/registry.rs use each other (a file-level cycle)",
        ]
    );
}
