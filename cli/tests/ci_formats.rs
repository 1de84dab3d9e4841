//! Findings for CI systems, checked against the other side: `-o github` prints, byte for byte,
//! what GitHub's own toolkit (`@actions/core` 1.11.1, run with node: `core.error(message,
//! {title, file, startLine, startColumn})`) prints for the same findings, paths relative to
//! $GITHUB_WORKSPACE; `-o codeclimate` validates against the report format GitLab documents
//! (tests/support/codeclimate-gitlab.schema.json, with python3's jsonschema), one issue per
//! finding, paths relative to $CI_PROJECT_DIR that name the files, fingerprints apart.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use olmctl_testdata::{fixture_catalog, root, shared_fixtures};
use serde_json::{Value, json};

const OLMCTL: &str = env!("CARGO_BIN_EXE_olmctl");

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// olmctl with `args` in `cwd`, the CI variables in `env` only.
fn olmctl(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(OLMCTL);
    c.args(args)
        .current_dir(cwd)
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("CI_PROJECT_DIR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run olmctl")
}

/// The findings of `-o json` for the same command.
fn findings(cwd: &Path, args: &[&str]) -> Vec<Value> {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    let o = olmctl(cwd, &a, &[]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON findings");
    v["findings"].as_array().expect("findings").clone()
}

/// `p` with `..` resolved by name, not through the file system (symlinks kept): the runner's
/// view of a path below the workspace.
fn by_name(p: &Path) -> PathBuf {
    p.components().fold(PathBuf::new(), |mut p, c| {
        match c {
            std::path::Component::ParentDir => {
                p.pop();
            }
            std::path::Component::CurDir => {}
            c => p.push(c),
        }
        p
    })
}

/// `@actions/core`, installed by scripts/test.sh into target/npm (or $ACTIONS_CORE).
fn actions_core() -> PathBuf {
    let p = std::env::var_os("ACTIONS_CORE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/npm/node_modules/@actions/core"));
    assert!(
        p.join("package.json").is_file(),
        "{}: no @actions/core; scripts/test.sh installs it (npm install --prefix target/npm \
         @actions/core@1.11.1)",
        p.display()
    );
    p
}

/// What the toolkit prints for each finding (JSON form), paths made relative to `workspace`
/// from `cwd` as the runner resolves them.
fn toolkit_commands(found: &[Value], cwd: &Path, workspace: &Path) -> String {
    let calls: Vec<Value> = found
        .iter()
        .map(|f| {
            let mut message = f["message"].as_str().expect("message").to_string();
            let subject: Vec<String> = ["package", "channel", "bundle"]
                .iter()
                .filter_map(|k| f[*k].as_str().map(|v| format!("{k} `{v}`")))
                .collect();
            if !subject.is_empty() {
                message.push('\n');
                message.push_str(&subject.join(", "));
            }
            if let Some(p) = f["path"].as_str() {
                message.push_str(&format!("\nfield: {p}"));
            }
            if let Some(h) = f["help"].as_str() {
                message.push_str(&format!("\nhelp: {h}"));
            }
            let mut props = json!({"title": format!("olmctl {}", f["code"].as_str().unwrap())});
            if let Some(file) = f["file"].as_str() {
                let abs = by_name(&cwd.join(file));
                let rel = abs.strip_prefix(workspace).expect("below the workspace");
                props["file"] = json!(rel.to_str().expect("UTF-8"));
                if let Some(l) = f["line"].as_u64().filter(|l| *l > 0) {
                    props["startLine"] = json!(l);
                    if let Some(c) = f["column"].as_u64().filter(|c| *c > 0) {
                        props["startColumn"] = json!(c);
                    }
                }
            }
            let kind = match f["severity"].as_str() {
                Some("error") => "error",
                Some("warning") => "warning",
                _ => "notice",
            };
            json!([kind, message, props])
        })
        .collect();
    let script = format!(
        "const core = require({core});\n\
         for (const [kind, message, props] of {calls}) core[kind](message, props);\n",
        core = json!(actions_core().to_str().expect("UTF-8")),
        calls = Value::Array(calls),
    );
    let o = Command::new("node")
        .args(["-e", &script])
        .stdin(Stdio::null())
        .output()
        .expect("run node");
    assert!(o.status.success(), "node: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Checks `-o github` of `args` against the toolkit; returns how many commands there were.
fn github_matches_the_toolkit(cwd: &Path, args: &[&str], workspace: &Path) -> usize {
    let found = findings(cwd, args);
    let mut a = args.to_vec();
    a.extend(["-o", "github"]);
    let o = olmctl(cwd, &a, &[("GITHUB_WORKSPACE", workspace)]);
    let out = text(&o.stdout);
    let want_status = if found.iter().any(|f| f["severity"] == "error") {
        1
    } else {
        0
    };
    assert_eq!(
        o.status.code(),
        Some(want_status),
        "{out}{}",
        text(&o.stderr)
    );
    let lines: Vec<&str> = out.lines().collect();
    let (summary, commands) = lines.split_last().expect("a summary line");
    let commands: String = commands.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(commands, toolkit_commands(&found, cwd, workspace));
    assert!(
        summary.starts_with(if want_status == 1 { "failed: " } else { "ok: " }),
        "{summary}"
    );
    found.len()
}

#[test]
fn github_commands_are_what_the_toolkit_prints() {
    // The community catalog's lint findings (errors and warnings), run from the repository with
    // the fixtures as the workspace, named as the repository names them (../shared may be a
    // symbolic link, which the runner does not resolve either).
    let fixtures = by_name(&shared_fixtures());
    let catalog = by_name(&fixture_catalog());
    let rel = format!(
        "../shared/fixtures/{}",
        catalog.strip_prefix(&fixtures).unwrap().display()
    );
    let n = github_matches_the_toolkit(&root(), &["catalog", "lint", &rel], &fixtures);
    assert!(n > 10, "{n} findings");

    // A file whose path needs escaping (`,`, `:`, `%`, a space) and a message with quotes.
    let work = tempfile::tempdir().expect("tmp");
    let dir = work.path().join("a,b: c%d/p");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("catalog.yaml"),
        "schema: olm.package\nname: p\ndefaultChannel: stable\n---\nschema: olm.channel\n\
         package: p\nname: stable\nentries:\n- name: \"p.v1.0.0%0A::warning::x\"\n",
    )
    .expect("write");
    let n = github_matches_the_toolkit(
        work.path(),
        &["catalog", "validate", "a,b: c%d"],
        work.path(),
    );
    assert!(n >= 1);
}

#[test]
fn codeclimate_reports_are_what_gitlab_reads() {
    let fixtures = shared_fixtures().canonicalize().expect("fixtures");
    let catalog = fixture_catalog().canonicalize().expect("catalog");
    let args = ["catalog", "lint", catalog.to_str().expect("UTF-8")];
    let found = findings(&root(), &args);
    let mut a = args.to_vec();
    a.extend(["-o", "codeclimate"]);
    let o = olmctl(&root(), &a, &[("CI_PROJECT_DIR", &fixtures)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let work = tempfile::tempdir().expect("tmp");
    let report = work.path().join("gl-code-quality-report.json");
    std::fs::write(&report, &o.stdout).expect("write");
    let schema = root().join("tests/support/codeclimate-gitlab.schema.json");
    let check = Command::new("python3")
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))",
        ])
        .arg(&report)
        .arg(&schema)
        .output()
        .expect("python3");
    assert!(
        check.status.success(),
        "the report does not validate:\n{}",
        text(&check.stderr)
    );

    let issues: Vec<Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(issues.len(), found.len());
    let mut fingerprints: Vec<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), issues.len(), "fingerprints apart");
    for (i, f) in issues.iter().zip(&found) {
        assert_eq!(i["check_name"], f["code"]);
        let path = i["location"]["path"].as_str().unwrap();
        let file = Path::new(f["file"].as_str().unwrap());
        assert_eq!(fixtures.join(path), file, "relative to CI_PROJECT_DIR");
        assert!(fixtures.join(path).is_file());
        assert_eq!(i["location"]["lines"]["begin"], f["line"]);
        let sev = match f["severity"].as_str().unwrap() {
            "error" => "major",
            "warning" => "minor",
            _ => "info",
        };
        assert_eq!(i["severity"], sev);
        assert!(
            i["description"]
                .as_str()
                .unwrap()
                .starts_with(f["message"].as_str().unwrap())
        );
    }
    // The same run twice, the same bytes.
    let again = olmctl(&root(), &a, &[("CI_PROJECT_DIR", &fixtures)]);
    assert_eq!(again.stdout, o.stdout);
}
