//! Hostile input on the output side (issue 14): writers never follow a symlink out of the
//! output directory, and text output never carries a raw control character from a file name,
//! a catalog value or an argument (also in `-o github`, YAML and completion; the GitHub Action's
//! log and summary: `ci_action.rs`, `a_hostile_base_ref_is_shown_escaped`).

#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{code, olmctl, p};
use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use common::write_tree;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file below `dir` (links not followed) with its bytes, for before/after comparison.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read victim") {
            let path = e.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("meta");
            if meta.is_dir() {
                stack.push(path);
            } else {
                m.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    m
}

/// A directory outside every output directory, with files that must survive untouched.
struct Victim {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    before: BTreeMap<PathBuf, Vec<u8>>,
}

impl Victim {
    fn new() -> Victim {
        let tmp = write_tree(&[
            ("annotations.yaml", "victim annotations\n"),
            ("precious.yaml", "precious\n"),
            ("catalog.yaml", CATALOG),
            ("notes.txt", "notes\n"),
        ]);
        let dir = tmp.path().to_path_buf();
        let before = snapshot(&dir);
        Victim {
            _tmp: tmp,
            dir,
            before,
        }
    }
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    fn assert_untouched(&self) {
        assert_eq!(
            snapshot(&self.dir),
            self.before,
            "the victim directory changed"
        );
    }
}

/// Asserts a refusal: exit 2, the link named on stderr.
fn assert_refused(o: &Output, link: &str) {
    let err = stderr(o);
    assert_eq!(code(o), 2, "expected a refusal: {err}");
    assert!(
        err.contains(link) && err.contains("symbolic link"),
        "the error should name the link {link}: {err}"
    );
}

fn widget_src() -> PathBuf {
    common::root().join("tests/data/widget-operator")
}

fn generate(out: &Path, package: &str) -> Output {
    let src = widget_src();
    olmctl(&[
        "bundle",
        "generate",
        "--manifests",
        p(&src),
        "--package",
        package,
        "--version",
        "0.3.0",
        "--channels",
        "stable",
        "--ignore-kind",
        "Namespace",
        "-O",
        p(out),
    ])
}

const CSV_FILE: &str = "manifests/widget-operator.clusterserviceversion.yaml";

#[test]
fn generate_refuses_linked_manifests_and_metadata_dirs() {
    for sub in ["manifests", "metadata"] {
        let v = Victim::new();
        let out = tempfile::tempdir().expect("tmp");
        symlink(&v.dir, out.path().join(sub)).expect("symlink");
        let o = generate(out.path(), "widget-operator");
        assert_refused(&o, sub);
        v.assert_untouched();
    }
}

#[test]
fn generate_refuses_linked_files() {
    for (rel, victim_file) in [
        (CSV_FILE, "precious.yaml"),
        ("bundle.Dockerfile", "notes.txt"),
        ("metadata/annotations.yaml", "annotations.yaml"),
        // A stale link in manifests/ is not a file of the bundle layout.
        ("manifests/stale.yaml", "precious.yaml"),
    ] {
        let v = Victim::new();
        let out = tempfile::tempdir().expect("tmp");
        let at = out.path().join(rel);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        symlink(v.file(victim_file), &at).expect("symlink");
        let o = generate(out.path(), "widget-operator");
        assert_refused(&o, rel.rsplit('/').next().expect("name"));
        v.assert_untouched();
        assert!(
            std::fs::symlink_metadata(&at).expect("link").is_symlink(),
            "{rel}: the link stays"
        );
    }
}

#[test]
fn generate_follows_a_linked_output_dir_and_cleans_only_its_files() {
    let real = tempfile::tempdir().expect("tmp");
    let holder = tempfile::tempdir().expect("tmp");
    let out = holder.path().join("out");
    symlink(real.path(), &out).expect("symlink");
    std::fs::create_dir_all(real.path().join("manifests/keep")).expect("mkdir");
    std::fs::write(real.path().join("manifests/keep/x.yaml"), "x").expect("write");
    std::fs::write(real.path().join("manifests/old.yaml"), "old").expect("write");
    let o = generate(&out, "widget-operator");
    // Exit 1: validation reports the subdirectory of manifests/ (BND002).
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(real.path().join(CSV_FILE).is_file());
    assert!(
        !real.path().join("manifests/old.yaml").exists(),
        "stale file removed"
    );
    assert!(real.path().join("manifests/keep/x.yaml").is_file());
}

const CATALOG: &str = "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/foo/bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n";

#[test]
fn fmt_in_place_refuses_a_linked_catalog_file() {
    let v = Victim::new();
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir(dir.path().join("foo")).expect("mkdir");
    symlink(v.file("catalog.yaml"), dir.path().join("foo/catalog.yaml")).expect("symlink");
    let o = olmctl(&["catalog", "fmt", p(dir.path())]);
    assert_refused(&o, "catalog.yaml");
    v.assert_untouched();
    // A linked package directory likewise.
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("all.yaml"), CATALOG).expect("write");
    symlink(&v.dir, dir.path().join("foo")).expect("symlink");
    let o = olmctl(&["catalog", "fmt", p(dir.path())]);
    assert_refused(&o, "foo");
    v.assert_untouched();
}

#[test]
fn fmt_in_place_removes_a_linked_old_file_not_its_target() {
    // A link leaving the catalog is refused before anything is read or written (issue 28).
    let v = Victim::new();
    let dir = tempfile::tempdir().expect("tmp");
    symlink(v.file("catalog.yaml"), dir.path().join("old.yaml")).expect("symlink");
    let o = olmctl(&["catalog", "fmt", p(dir.path())]);
    assert_refused(&o, "old.yaml");
    assert!(stderr(&o).contains("outside"), "{}", stderr(&o));
    v.assert_untouched();
    // A link inside it (its target in .indexignore, so read once): the link goes, the target
    // stays.
    std::fs::remove_file(dir.path().join("old.yaml")).expect("rm");
    std::fs::create_dir(dir.path().join("keep")).expect("mkdir");
    std::fs::write(dir.path().join("keep/catalog.yaml"), CATALOG).expect("write");
    std::fs::write(dir.path().join(".indexignore"), "keep/\n").expect("write");
    symlink("keep/catalog.yaml", dir.path().join("old.yaml")).expect("symlink");
    let o = olmctl(&["catalog", "fmt", p(dir.path())]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(dir.path().join("foo/catalog.yaml").is_file());
    assert!(std::fs::symlink_metadata(dir.path().join("old.yaml")).is_err());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep/catalog.yaml")).expect("kept"),
        CATALOG
    );
}

#[test]
fn fmt_out_refuses_links_already_there() {
    let src = write_tree(&[("c.yaml", CATALOG)]);
    // A linked package directory, then a linked file.
    let v = Victim::new();
    let out = tempfile::tempdir().expect("tmp");
    symlink(&v.dir, out.path().join("foo")).expect("symlink");
    let o = olmctl(&["catalog", "fmt", p(src.path()), "--out", p(out.path())]);
    assert_refused(&o, "foo");
    v.assert_untouched();
    let out = tempfile::tempdir().expect("tmp");
    std::fs::create_dir(out.path().join("foo")).expect("mkdir");
    symlink(v.file("catalog.yaml"), out.path().join("foo/catalog.yaml")).expect("symlink");
    let o = olmctl(&["catalog", "fmt", p(src.path()), "--out", p(out.path())]);
    assert_refused(&o, "catalog.yaml");
    v.assert_untouched();
}

fn demo_bundle() -> tempfile::TempDir {
    write_tree(&[
        ("manifests/demo.clusterserviceversion.yaml", CSV),
        ("manifests/widgets.crd.yaml", CRD),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ])
}

#[test]
fn oci_layout_refuses_links_inside() {
    let bundle = demo_bundle();
    let build = |layout: &Path| {
        olmctl(&[
            "bundle",
            "build",
            p(bundle.path()),
            "--tag",
            "localhost:5000/demo:v1",
            "--oci-layout",
            p(layout),
        ])
    };
    for (rel, victim_file) in [
        ("index.json", Some("notes.txt")),
        ("oci-layout", Some("notes.txt")),
        ("blobs", None),
        ("blobs/sha256", None),
    ] {
        let v = Victim::new();
        let layout = tempfile::tempdir().expect("tmp");
        let at = layout.path().join(rel);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        match victim_file {
            Some(f) => symlink(v.file(f), &at).expect("symlink"),
            None => symlink(&v.dir, &at).expect("symlink"),
        }
        let o = build(layout.path());
        assert_refused(&o, rel.rsplit('/').next().expect("name"));
        v.assert_untouched();
    }
    // A linked layout directory given by the user is followed.
    let real = tempfile::tempdir().expect("tmp");
    let holder = tempfile::tempdir().expect("tmp");
    let linked = holder.path().join("layout");
    symlink(real.path(), &linked).expect("symlink");
    let o = build(&linked);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(real.path().join("index.json").is_file());
}

/// Issue 39 item 8: while `olmctl man --out-dir` writes its pages again and again, a thread
/// keeps putting a link to a victim outside where the first page goes (and a file again): the
/// victim is never written, in 100 runs. A run writes its pages, or refuses the link it finds
/// (exit 2, naming it); before, one wrote through a link swapped in after its check.
#[test]
fn man_pages_are_never_written_through_a_link_swapped_in() {
    use common::race::Swapper;
    let v = Victim::new();
    let out = tempfile::tempdir().expect("tmp");
    let run = || olmctl(&["man", "--out-dir", p(out.path())]);
    assert_eq!(code(&run()), 0);
    let swapper = Swapper::relink(&out.path().join("olmctl.1"), &v.file("notes.txt"));
    let (mut written, mut refused) = (0, 0);
    for _ in 0..100 {
        let o = run();
        match code(&o) {
            0 => written += 1,
            _ => {
                assert_refused(&o, "olmctl.1");
                refused += 1;
            }
        }
        v.assert_untouched();
    }
    let swaps = swapper.stop();
    eprintln!("{swaps} swaps: {written} runs wrote the pages, {refused} refused a link");
    assert!(
        swaps >= 100,
        "the link was swapped in and out: {swaps} times"
    );
}

// ---- Terminal escape injection ----

/// Injections: screen clear, title change, bell, carriage return over the line, and a newline
/// followed by a forged line.
const EVIL: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\r\nFORGED ok: 0 errors\u{9b}31m\u{202e}";

/// No raw control character (other than the newline of the tool's own line structure) and no
/// line that an injected value started.
fn assert_clean(what: &str, bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    common::terminal::assert_no_raw_controls(what, &s);
    for l in s.lines() {
        assert!(
            !l.trim_start().starts_with("FORGED"),
            "{what}: forged line {l:?} in:\n{s}"
        );
    }
}

fn assert_output_clean(what: &str, o: &Output) {
    assert_clean(&format!("{what} (stdout)"), &o.stdout);
    assert_clean(&format!("{what} (stderr)"), &o.stderr);
}

/// A catalog whose file name, package, channel and bundle names and skipRange carry `EVIL`.
fn evil_catalog() -> (tempfile::TempDir, String) {
    let pkg = format!("foo{EVIL}");
    let ch = format!("stable{EVIL}");
    let b1 = format!("foo.v1.0.0{EVIL}");
    let b2 = format!("foo.v1.1.0{EVIL}");
    let bundle = |name: &str, v: &str| {
        serde_json::json!({"schema": "olm.bundle", "package": pkg, "name": name,
            "image": format!("quay.io/foo/bundle:v{v}"),
            "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": v}}]})
    };
    let blobs = [
        serde_json::json!({"schema": "olm.package", "name": pkg, "defaultChannel": ch}),
        serde_json::json!({"schema": "olm.channel", "package": pkg, "name": ch, "entries": [
            {"name": b1},
            {"name": b2, "replaces": b1, "skipRange": ">=0.1.0 <1.0.0"},
            {"name": format!("foo.v0.9.0{EVIL}"), "replaces": format!("gone{EVIL}")}
        ]}),
        bundle(&b1, "1.0.0"),
        bundle(&b2, "1.1.0"),
        serde_json::json!({"schema": "olm.bundle", "package": pkg, "name": format!("x{EVIL}"),
            "unknownField": EVIL, "image": EVIL}),
    ];
    let text: Vec<String> = blobs.iter().map(|b| b.to_string()).collect();
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join(format!("cat{EVIL}.json")), text.join("\n")).expect("write");
    (dir, pkg)
}

/// The command lines run with hostile values by [`text_output_escapes_controls`]: catalog
/// `d` (from [`evil_catalog`], package `pkg`), an empty directory `empty`, and `EVIL` as file
/// names, image references, package names and flags. Where a command needs a registry or a
/// cluster, or its input is hard to forge, the run is the error that names the hostile input.
fn hostile_runs(d: &str, empty: &str, pkg: &str) -> Vec<(&'static str, Vec<String>)> {
    let evil_file = format!("/nonexistent/{EVIL}");
    let resolve_catalog = format!("c/olm={d}");
    let runs: Vec<(&str, Vec<&str>)> = vec![
        // The package's name reaches the text as a Subscription's and a bundle's.
        (
            "resolve",
            vec![
                "resolve",
                "-n",
                "team",
                "-f",
                empty,
                "--catalog",
                &resolve_catalog,
                "--subscribe",
                pkg,
                "--from",
                "c/olm",
            ],
        ),
        ("validate", vec!["catalog", "validate", d]),
        // Workflow commands: the runner prints what it does not take as a command, and shows
        // the annotation's message and file.
        (
            "validate github",
            vec!["catalog", "validate", d, "-o", "github"],
        ),
        ("lint github", vec!["catalog", "lint", d, "-o", "github"]),
        ("ls", vec!["catalog", "ls", d]),
        ("ls channels", vec!["catalog", "ls", d, "--channels"]),
        ("ls bundles", vec!["catalog", "ls", d, "--bundles"]),
        ("ls package", vec!["catalog", "ls", d, "-p", EVIL]),
        (
            "generate dockerfile label",
            vec!["catalog", "generate", "dockerfile", d, "-l", EVIL],
        ),
        (
            "generate dockerfile dir",
            vec!["catalog", "generate", "dockerfile", &evil_file],
        ),
        ("lint", vec!["catalog", "lint", d]),
        (
            "check-upgrades",
            vec!["catalog", "check-upgrades", "--base", d, d],
        ),
        ("diff text", vec!["catalog", "diff", empty, d]),
        ("diff text removed", vec!["catalog", "diff", d, empty]),
        (
            "diff markdown",
            vec!["catalog", "diff", empty, d, "-o", "markdown"],
        ),
        (
            "graph text",
            vec!["catalog", "graph", d, "--format", "text"],
        ),
        ("graph dot", vec!["catalog", "graph", d, "--format", "dot"]),
        (
            "graph mermaid",
            vec!["catalog", "graph", d, "--format", "mermaid"],
        ),
        (
            "graph mermaid v0",
            vec![
                "catalog",
                "graph",
                d,
                "--format",
                "mermaid",
                "--draw-v0-semantics",
            ],
        ),
        (
            "path",
            vec!["catalog", "path", d, "-p", pkg, "--from", "1.0.0"],
        ),
        (
            "path unknown",
            vec!["catalog", "path", d, "-p", EVIL, "--from", "1.0.0"],
        ),
        ("graph unknown", vec!["catalog", "graph", d, "-p", EVIL]),
        ("fmt check", vec!["catalog", "fmt", d, "--check"]),
        ("render", vec!["catalog", "render", EVIL]),
        ("serve", vec!["catalog", "serve", d]),
        ("push", vec!["catalog", "push", d, "--tag", EVIL]),
        ("pull", vec!["catalog", "pull", EVIL, empty]),
        ("template", vec!["catalog", "template", &evil_file]),
        // Writes a template (YAML, a data format) when it succeeds.
        (
            "template convert",
            vec!["catalog", "template", "convert", &evil_file],
        ),
        ("build", vec!["catalog", "build", &evil_file]),
        ("check catalog", vec!["check", "catalog", d]),
        ("check history", vec!["check", "history", &evil_file]),
        ("bundle unpack", vec!["bundle", "unpack", EVIL, empty]),
        (
            "bundle render",
            vec![
                "bundle",
                "render",
                EVIL,
                "--olmv1",
                "--install-namespace",
                EVIL,
            ],
        ),
        (
            "bundle permissions",
            vec![
                "bundle",
                "permissions",
                EVIL,
                "--olmv1",
                "--install-namespace",
                EVIL,
            ],
        ),
        (
            "bundle installer-rbac",
            vec![
                "bundle",
                "installer-rbac",
                EVIL,
                "--install-namespace",
                EVIL,
            ],
        ),
        (
            "gate evaluate",
            vec![
                "gate",
                "evaluate",
                "--policy",
                &evil_file,
                "--filename",
                &evil_file,
            ],
        ),
        (
            "image build",
            vec![
                "image",
                "build",
                "--base-image",
                EVIL,
                "--binary",
                &evil_file,
                "--tag",
                EVIL,
            ],
        ),
        // --print writes Kubernetes objects (YAML, a data format).
        (
            "install",
            vec!["install", EVIL, "--catalog", "quay.io/x/catalog:1"],
        ),
        ("uninstall", vec!["uninstall", EVIL]),
        (
            "status",
            vec!["status", "-n", EVIL, "--kubeconfig", &evil_file],
        ),
        (
            "packages",
            vec!["packages", EVIL, "-n", EVIL, "--kubeconfig", &evil_file],
        ),
        (
            "describe",
            vec!["describe", EVIL, "-c", EVIL, "--kubeconfig", &evil_file],
        ),
        (
            "upgrade",
            vec!["upgrade", EVIL, "-n", EVIL, "--kubeconfig", &evil_file],
        ),
        (
            "list-operands",
            vec![
                "list-operands",
                EVIL,
                "-n",
                EVIL,
                "--kubeconfig",
                &evil_file,
            ],
        ),
        (
            "catalog add",
            vec![
                "catalog",
                "add",
                EVIL,
                EVIL,
                "-d",
                EVIL,
                "-p",
                EVIL,
                "--kubeconfig",
                &evil_file,
            ],
        ),
        (
            "catalog list",
            vec!["catalog", "list", "-n", EVIL, "--kubeconfig", &evil_file],
        ),
        (
            "catalog remove",
            vec!["catalog", "remove", EVIL, "--kubeconfig", &evil_file],
        ),
        ("completion", vec!["completion", "bash"]),
        ("man", vec!["man", "--out-dir", &evil_file]),
        ("validate missing", vec!["catalog", "validate", EVIL]),
        ("explain", vec!["explain", EVIL]),
        ("codes", vec!["codes"]),
    ];
    runs.into_iter()
        .map(|(what, args)| (what, args.into_iter().map(String::from).collect()))
        .collect()
}

/// The commands [`bundle_and_image_output_escapes_controls`] runs with hostile values.
const BUNDLE_RUNS: &[&str] = &[
    "bundle generate",
    "bundle validate",
    "bundle build",
    "check upgrade",
];

#[test]
fn text_output_escapes_controls() {
    let (dir, pkg) = evil_catalog();
    let d = p(dir.path());
    let empty = tempfile::tempdir().expect("tmp");
    let bad_flag = format!("--bogus{EVIL}");
    let bad_format = format!("--format={EVIL}");
    let mut runs = hostile_runs(d, p(empty.path()), &pkg);
    for (what, args) in [
        ("bad flag", vec!["catalog", "ls", &bad_flag]),
        ("bad value", vec!["catalog", "graph", d, "--format", EVIL]),
        ("bad value =", vec!["catalog", "graph", d, &bad_format]),
    ] {
        runs.push((what, args.into_iter().map(String::from).collect()));
    }
    for (what, args) in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = olmctl(&args);
        assert_output_clean(what, &o);
    }
    // The values are still shown, escaped.
    let o = olmctl(&["catalog", "ls", d]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("foo\\u{1b}[2J"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = olmctl(&["catalog", "diff", p(empty.path()), d]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("package foo\\u{1b}[2J"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Every command of the command line (from clap), as its words: `catalog diff`.
fn commands() -> Vec<String> {
    use clap::CommandFactory;
    fn walk(c: &clap::Command, words: &str, out: &mut Vec<String>) {
        let subs: Vec<&clap::Command> = c
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        // A command with arguments of its own runs by itself too (`catalog template FILE`).
        if subs.is_empty() || c.get_positionals().next().is_some() {
            out.push(words.to_string());
        }
        for s in subs {
            let w = format!("{words} {}", s.get_name());
            walk(s, w.trim_start(), out);
        }
    }
    let mut out = Vec::new();
    walk(&olmctl_cli::Cli::command(), "", &mut out);
    out.sort();
    out
}

/// The command an argument list runs: its leading subcommand names.
fn command_of(args: &[String]) -> String {
    use clap::CommandFactory;
    let mut c = olmctl_cli::Cli::command();
    let mut words = Vec::new();
    for a in args {
        let Some(sub) = c.find_subcommand(a).cloned() else {
            break;
        };
        words.push(a.clone());
        c = sub;
    }
    words.join(" ")
}

/// A new command cannot skip the checks above: every command of the command line is run with
/// hostile values by [`text_output_escapes_controls`] or
/// [`bundle_and_image_output_escapes_controls`]. Add a new one to [`hostile_runs`].
#[test]
fn every_command_is_run_with_hostile_values() {
    let mut run: Vec<String> = hostile_runs("d", "e", "p")
        .iter()
        .map(|(_, args)| command_of(args))
        .chain(BUNDLE_RUNS.iter().map(|s| s.to_string()))
        .collect();
    run.sort();
    run.dedup();
    let all = commands();
    let missing: Vec<&String> = all.iter().filter(|c| !run.contains(c)).collect();
    assert!(
        missing.is_empty(),
        "not run with hostile values (add a run to hostile_runs): {missing:?}"
    );
    assert_eq!(run, all, "a run names a command that does not exist");
}

#[test]
fn dot_and_mermaid_stay_well_formed() {
    let (dir, _) = evil_catalog();
    let o = olmctl(&["catalog", "graph", p(dir.path()), "--format", "dot"]);
    let dot = String::from_utf8_lossy(&o.stdout).into_owned();
    // Every quoted string closes on its line: an even number of unescaped quotes.
    for l in dot.lines() {
        let mut quotes = 0;
        let mut escaped = false;
        for c in l.chars() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => quotes += 1,
                _ => escaped = false,
            }
            if c != '\\' {
                escaped = false;
            }
        }
        assert_eq!(quotes % 2, 0, "unbalanced quotes in DOT line {l:?}");
    }
    let o = olmctl(&["catalog", "graph", p(dir.path()), "--format", "mermaid"]);
    let mermaid = String::from_utf8_lossy(&o.stdout).into_owned();
    // Node ids are single tokens: no spaces or brackets leaked from names.
    for l in mermaid.lines().filter(|l| l.contains("-->")) {
        let id = l.trim_start().split('[').next().expect("id");
        assert!(!id.contains(' '), "mermaid id {id:?} in {l:?}");
    }
}

#[test]
fn bundle_and_image_output_escapes_controls() {
    let holder = tempfile::tempdir().expect("tmp");
    let out = holder.path().join(format!("out{EVIL}"));
    // A hostile package name is refused, naming it.
    let o = generate(&out, &format!("widget{EVIL}"));
    assert_eq!(code(&o), 2);
    assert_output_clean("bundle generate refused", &o);
    let o = generate(&out, "widget-operator");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_output_clean("bundle generate", &o);
    let o = olmctl(&["bundle", "validate", p(&out)]);
    assert_output_clean("bundle validate", &o);
    // A clean bundle in a directory with a hostile name, into a layout with one.
    let bundle = demo_bundle();
    let dir = holder.path().join(format!("bundle{EVIL}"));
    std::fs::rename(bundle.path(), &dir).expect("move");
    let layout = holder.path().join(format!("layout{EVIL}"));
    let o = olmctl(&[
        "bundle",
        "build",
        p(&dir),
        "--tag",
        "localhost:5000/demo:v1",
        "--oci-layout",
        p(&layout),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_output_clean("bundle build", &o);
    let o = olmctl(&[
        "bundle",
        "build",
        &format!("{}-missing", p(&dir)),
        "--tag",
        "localhost:5000/demo:v1",
    ]);
    assert_output_clean("bundle build missing", &o);
    let o = olmctl(&["check", "upgrade", p(&dir), EVIL]);
    assert_output_clean("check upgrade", &o);
    let o = olmctl(&["check", "upgrade", p(&dir), p(&dir)]);
    assert_output_clean("check upgrade same", &o);
}

/// `bundle unpack` / `catalog pull`: the target directory the user names may be a link (it is
/// followed), but it must be empty, so nothing already in it (a link included) is written
/// through; links in the image itself are checked by the extractor (tests/oci_extract.rs).
#[test]
fn pull_targets_follow_the_named_link_and_refuse_existing_entries() {
    use olmctl::oci::extract::{Budget, Limits, Select, apply_layer};
    use olmctl::oci::pull::prepare_dest;
    let real = tempfile::tempdir().expect("tmp");
    let holder = tempfile::tempdir().expect("tmp");
    let linked = holder.path().join("dest");
    symlink(real.path(), &linked).expect("symlink");
    assert_eq!(prepare_dest(&linked), Ok(false));
    let tar = common::hostile::hostile_tar(&[(
        "manifests/a.yaml",
        tar::EntryType::Regular,
        "",
        b"a: 1\n",
    )]);
    let mut budget = Budget::new(Limits::default());
    apply_layer(
        &tar,
        "layer 0",
        None,
        &linked,
        &Select::default(),
        &mut budget,
    )
    .expect("extracts");
    assert_eq!(
        std::fs::read(real.path().join("manifests/a.yaml")).expect("file"),
        b"a: 1\n"
    );
    // A target already holding a link (to a victim) is refused before anything is pulled.
    let v = Victim::new();
    let dest = tempfile::tempdir().expect("tmp");
    symlink(&v.dir, dest.path().join("manifests")).expect("symlink");
    let e = prepare_dest(dest.path()).expect_err("refused");
    assert!(e.contains("not empty"), "{e}");
    v.assert_untouched();
}

/// Bidirectional controls and separators that go-yaml v2 (so opm) writes raw, as libyaml counts
/// them printable: overrides, isolates, marks, the line and paragraph separators.
const BIDI: &str =
    "safe\u{202e}gnp.exe \u{2066}x\u{2069}\u{200f}\u{200e}\u{61c}\u{2028}\u{2029}\u{202a}";

/// `bundle render` writes YAML, which reaches a terminal: a value with bidi controls (in one
/// line, in a multi-line text, in a key) is written escaped (`\u202E` in a double-quoted
/// scalar), and the YAML reads back, through olmctl's own loader, to the same values.
#[test]
fn bundle_render_escapes_bidi_controls_in_yaml() {
    let note = format!("{BIDI}{EVIL}");
    let multi = format!("line one{BIDI}\nline two\n");
    let with = |annotations: &serde_json::Value| {
        let crd = CRD.replacen(
            "metadata:\n  name: widgets.demo.io\n",
            &format!("metadata:\n  name: widgets.demo.io\n  annotations: {annotations}\n"),
            1,
        );
        let bundle = write_tree(&[
            ("manifests/demo.clusterserviceversion.yaml", CSV),
            ("manifests/widgets.crd.yaml", &crd),
            ("metadata/annotations.yaml", ANNOTATIONS),
        ]);
        olmctl(&[
            "bundle",
            "render",
            p(bundle.path()),
            "--olmv1",
            "--install-namespace",
            "ns",
        ])
    };
    // In a key, the API server refuses them (`ValidateAnnotations`): refused, and said escaped.
    let key = format!("k{BIDI}");
    let o = with(&serde_json::json!({key: "v"}));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_output_clean("bundle render", &o);
    assert!(
        stderr(&o).contains("metadata.annotations: Invalid value: \"ksafe\\u202e"),
        "{}",
        stderr(&o)
    );
    let annotations = serde_json::json!({"note": note, "multi": multi});
    let o = with(&annotations);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_output_clean("bundle render", &o);
    let yaml = String::from_utf8(o.stdout).expect("UTF-8");
    assert!(
        yaml.contains("\"safe\\u202Egnp.exe \\u2066x\\u2069"),
        "{yaml}"
    );
    let mut found = None;
    olmctl::fbc::yaml::parse_documents(&yaml, |n| {
        let v: serde_json::Value = serde_json::from_str(&n.to_json()).expect("JSON");
        if v["kind"] == "CustomResourceDefinition" {
            found = Some(v["metadata"]["annotations"].clone());
        }
    })
    .expect("the YAML parses");
    assert_eq!(found, Some(annotations));
}

/// `kubectl olm` completion (kubectl_complete-olm) offers no file name it cannot show: one with a
/// control or bidi character is left out, the others are offered; with only such names, none,
/// and no file completion by the shell either (which would list them raw).
#[test]
fn completion_leaves_out_file_names_with_controls() {
    let dir = tempfile::tempdir().expect("tmp");
    let bin = dir.path().join("kubectl_complete-olm");
    symlink(common::olmctl_bin(), &bin).expect("symlink");
    let work = dir.path().join("work");
    for name in [
        "cat-plain",
        "cat\u{1b}]0;pwned\u{7}",
        "cat\u{7}bell",
        "cat\u{202e}lmay.exe",
        "cat\u{9b}31m",
    ] {
        std::fs::create_dir_all(work.join(name)).expect("mkdir");
        std::fs::write(work.join(format!("{name}.yaml")), "").expect("write");
    }
    for partial in ["cat", "./cat", &format!("{}/cat", p(&work))] {
        let o = std::process::Command::new(&bin)
            .args(["catalog", "validate", partial])
            .current_dir(&work)
            .output()
            .expect("run");
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_output_clean("completion", &o);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let offered: Vec<&str> = out.lines().collect();
        let plain = format!("{partial}-plain");
        assert!(
            offered.contains(&format!("{plain}/").as_str())
                && offered.contains(&format!("{plain}.yaml").as_str()),
            "{partial}: {out}"
        );
        assert_eq!(offered.last(), Some(&":6"), "{out}");
    }
    let o = std::process::Command::new(&bin)
        .args(["catalog", "validate", "cat\u{7}"])
        .current_dir(&work)
        .output()
        .expect("run");
    assert_eq!(String::from_utf8_lossy(&o.stdout), ":4\n");
}
