//! The GitHub Action (action.yml over scripts/github-action.sh and
//! scripts/github-action-install.sh), run end to end here with README.md's workflow: its olmctl
//! step's `with:` inputs given to the action as the runner gives them (tests/support/
//! run_action.py runs the composite steps with GitHub's variables: GITHUB_WORKSPACE, a temp
//! GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_PATH, RUNNER_TEMP), in a local git repository whose
//! base ref holds the catalog before the pull request's change. The annotations are olmctl's `-o
//! github` lines, the SARIF file (where the workflow's upload-sarif step reads it) one run with
//! every check's results, the summary each check's
//! result and `catalog diff -o markdown`; the exit status follows fail-level. The install step
//! downloads a release (a file:// place here), checks it against SHA256SUMS and refuses a
//! mismatch. Values from the inputs reach the log and the summary escaped: a hostile base-ref
//! forges no workflow command and carries no raw control character.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use olmctl_testdata::image::static_binary;
use olmctl_testdata::{copy_tree, git, readme_example, root};
use serde_json::Value;

const OLMCTL: &str = env!("CARGO_BIN_EXE_olmctl");

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// README's workflow: the `with:` of its olmctl step (GitHub's `github.base_ref` given as
/// `base_ref`), after checking how the workflow wires the action to upload-sarif.
fn readme_inputs(base_ref: &str) -> Value {
    let o = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\n\
             wf = yaml.safe_load(sys.stdin)\n\
             steps = wf['jobs']['olmctl']['steps']\n\
             print(json.dumps(steps))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(readme_example("github").as_bytes())?;
            c.wait_with_output()
        })
        .expect("python3 with pyyaml");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let steps: Vec<Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    let action = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("olmctl/olmctl@"))
        })
        .expect("the olmctl step");
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
        })
        .expect("the upload-sarif step");
    // upload-sarif reads the file the action writes (its sarif-file input, else its default).
    let sarif = action["with"]["sarif-file"]
        .as_str()
        .unwrap_or("olmctl.sarif")
        .to_string();
    assert_eq!(upload["with"]["sarif_file"], sarif);
    assert_eq!(
        upload["if"], "${{ !cancelled() }}",
        "uploaded when the checks fail"
    );
    let mut with = action["with"].clone();
    for v in with.as_object_mut().expect("with").values_mut() {
        if let Some(s) = v.as_str() {
            *v = Value::from(s.replace("${{ github.base_ref }}", base_ref));
        }
    }
    with
}

/// The action run by run_action.py in `work` with `with` inputs; (status, stdout, outputs).
fn run_action(work: &Path, tmp: &Path, with: &Value, path: &str) -> (Option<i32>, String, Value) {
    let summary = tmp.join("summary.md");
    std::fs::write(&summary, "").expect("write");
    let runner = tmp.join("runner");
    std::fs::create_dir_all(&runner).expect("mkdir");
    let o = Command::new("python3")
        .arg(root().join("tests/support/run_action.py"))
        .arg(root())
        .arg(with.to_string())
        .current_dir(work)
        .env("GITHUB_WORKSPACE", work)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("RUNNER_TEMP", &runner)
        .env("PATH", path)
        .env_remove("OLMCTL")
        .output()
        .expect("python3");
    let out = text(&o.stdout);
    let last = out.lines().last().unwrap_or_default();
    let outputs: Value = serde_json::from_str(last)
        .unwrap_or_else(|_| panic!("no outputs line:\n{out}\n{}", text(&o.stderr)));
    // The runner's temp directory is left clean.
    assert_eq!(std::fs::read_dir(&runner).expect("ls").count(), 0);
    (o.status.code(), out, outputs)
}

fn olmctl(dir: &Path, args: &[&str]) -> Output {
    Command::new(OLMCTL)
        .args(args)
        .current_dir(dir)
        .env("GITHUB_WORKSPACE", dir)
        .output()
        .expect("olmctl")
}

/// PATH with olmctl (a link to the built binary) first.
fn path_with_olmctl(tmp: &Path) -> String {
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(OLMCTL, bin.join("olmctl")).expect("symlink");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn the_readme_workflow_runs_the_action() {
    let tmp = tempfile::tempdir().expect("tmp");
    let work = tmp.path().join("work");
    copy_tree(&root().join("catalog"), &work.join("catalog"));
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "base"]);
    // actions/checkout with fetch-depth 0 leaves the base branch as origin/<base_ref>.
    git(&work, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    let file = work.join("catalog/olmctl-operator/catalog.yaml");
    let base_text = std::fs::read_to_string(&file).expect("read");
    // The pull request: an entry without its bundle, which splits the channel's head.
    std::fs::write(
        &file,
        base_text.replacen(
            "entries:\n",
            "entries:\n- name: olmctl-operator.v9.9.9\n",
            1,
        ),
    )
    .expect("write");
    git(&work, &["commit", "-q", "-am", "change"]);

    let with = readme_inputs("main");
    assert_eq!(with["base-ref"], "origin/main");
    let path = path_with_olmctl(tmp.path());
    let (status, out, outputs) = run_action(&work, tmp.path(), &with, &path);
    assert_eq!(status, Some(1), "errors fail the step:\n{out}");

    // The annotations: each check's `-o github` lines, in the order of the checks.
    let base_dir = tmp.path().join("base");
    std::fs::create_dir_all(&base_dir).expect("mkdir");
    let archive = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "git archive origin/main -- catalog | tar -x -C '{}'",
            base_dir.display()
        ))
        .current_dir(&work)
        .status()
        .expect("git archive");
    assert!(archive.success());
    let base_catalog = base_dir.join("catalog");
    let checks: Vec<Vec<&str>> = vec![
        vec!["catalog", "validate", "catalog"],
        vec!["catalog", "lint", "catalog"],
        vec![
            "catalog",
            "check-upgrades",
            "catalog",
            "--base",
            base_catalog.to_str().expect("UTF-8"),
        ],
    ];
    let mut want_annotations = String::new();
    let mut findings = 0;
    let mut errors = 0;
    let mut warnings = 0;
    for c in &checks {
        let mut a = c.clone();
        a.extend(["-o", "github"]);
        let o = olmctl(&work, &a);
        want_annotations.push_str(
            &text(&o.stdout)
                .lines()
                .filter(|l| l.starts_with("::"))
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
        );
        let mut a = c.clone();
        a.extend(["-o", "json"]);
        let v: Value = serde_json::from_slice(&olmctl(&work, &a).stdout).expect("JSON");
        for f in v["findings"].as_array().expect("findings") {
            findings += 1;
            match f["severity"].as_str() {
                Some("error") => errors += 1,
                Some("warning") => warnings += 1,
                _ => {}
            }
        }
    }
    assert!(errors > 0);
    let got_annotations: String = out
        .lines()
        .filter(|l| l.starts_with("::") && !l.starts_with("::group::") && l != &"::endgroup::")
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(got_annotations, want_annotations);
    assert_eq!(outputs["sarif-file"], "olmctl.sarif");
    assert_eq!(outputs["errors"], errors.to_string());
    assert_eq!(outputs["warnings"], warnings.to_string());

    // One SARIF run holding every check's results, rules sorted and indexed.
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(work.join("olmctl.sarif")).expect("the SARIF file"))
            .expect("JSON");
    assert_eq!(sarif["version"], "2.1.0");
    let runs = sarif["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let results = runs[0]["results"].as_array().expect("results");
    assert_eq!(results.len(), findings);
    let rules: Vec<&str> = runs[0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    let mut sorted = rules.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(rules, sorted);
    for r in results {
        let i = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(r["ruleId"], rules[i]);
    }

    // The job summary: each check's result line, then the diff against the base ref.
    let summary = std::fs::read_to_string(tmp.path().join("summary.md")).expect("summary");
    for c in &checks[..2] {
        let o = olmctl(&work, c);
        let last = text(&o.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string();
        assert!(
            summary.contains(&format!("- `olmctl {}`: {last}\n", c.join(" "))),
            "{summary}"
        );
    }
    assert!(
        summary.contains(
            "- `olmctl catalog check-upgrades catalog --base origin/main:catalog`: failed: "
        ),
        "{summary}"
    );
    let diff = olmctl(
        &work,
        &[
            "catalog",
            "diff",
            base_catalog.to_str().expect("UTF-8"),
            "catalog",
            "-o",
            "markdown",
        ],
    );
    assert!(
        summary.ends_with(&format!(
            "### Catalog changes against `origin/main`\n\n{}",
            text(&diff.stdout)
        )),
        "{summary}"
    );

    // fail-level none: the same findings, the step passes.
    let mut lenient = with.clone();
    lenient["fail-level"] = Value::from("none");
    let (status, out, _) = run_action(&work, tmp.path(), &lenient, &path);
    assert_eq!(status, Some(0), "{out}");

    // The change reverted: no findings, the step passes.
    std::fs::write(&file, &base_text).expect("write");
    git(&work, &["commit", "-q", "-am", "revert"]);
    let (status, out, outputs) = run_action(&work, tmp.path(), &with, &path);
    assert_eq!(status, Some(0), "{out}");
    assert_eq!(outputs["errors"], "0");
}

/// A release as scripts/release.sh lays it out: `<place>/v<version>/<archive>` and SHA256SUMS.
fn release_place(tmp: &Path) -> (PathBuf, String) {
    let version = env!("CARGO_PKG_VERSION");
    let dir = tmp.join(format!("releases/v{version}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let asset = format!("olmctl-v{version}-x86_64-unknown-linux-musl.tar.gz");
    let bin = static_binary("olmctl");
    let o = Command::new("tar")
        .arg("-czf")
        .arg(dir.join(&asset))
        .arg("-C")
        .arg(bin.parent().expect("dir"))
        .arg("olmctl")
        .output()
        .expect("tar");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = Command::new("sha256sum")
        .arg(&asset)
        .current_dir(&dir)
        .output()
        .expect("sha256sum");
    std::fs::write(dir.join("SHA256SUMS"), &o.stdout).expect("write");
    (tmp.join("releases"), asset)
}

fn install(tmp: &Path, releases: &Path) -> (Output, String) {
    let gpath = tmp.join("github-path");
    std::fs::write(&gpath, "").expect("write");
    let runner = tmp.join("runner");
    std::fs::create_dir_all(&runner).expect("mkdir");
    let o = Command::new("bash")
        .arg(root().join("scripts/github-action-install.sh"))
        .env("PATH", "/usr/bin:/bin")
        .env("OLMCTL_VERSION", env!("CARGO_PKG_VERSION"))
        .env("OLMCTL_RELEASES", format!("file://{}", releases.display()))
        .env("GITHUB_PATH", &gpath)
        .env("RUNNER_TEMP", &runner)
        .output()
        .expect("bash");
    (o, std::fs::read_to_string(&gpath).expect("read"))
}

#[test]
fn the_install_step_checks_the_release() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (releases, asset) = release_place(tmp.path());
    let (o, added) = install(tmp.path(), &releases);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dir = PathBuf::from(added.trim());
    assert_eq!(dir, tmp.path().join("runner/olmctl/bin"));
    let v = Command::new(dir.join("olmctl"))
        .arg("--version")
        .output()
        .expect("run");
    assert!(text(&v.stdout).starts_with(&format!("olmctl {} (", env!("CARGO_PKG_VERSION"))));
    assert_eq!(text(&o.stdout), text(&v.stdout));

    // A checksum that does not match: refused, nothing on the path.
    let sums = releases.join(format!("v{}/SHA256SUMS", env!("CARGO_PKG_VERSION")));
    std::fs::write(&sums, format!("{}  {asset}\n", "0".repeat(64))).expect("write");
    let (o, added) = install(tmp.path(), &releases);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("FAILED"), "{}", text(&o.stderr));
    assert_eq!(added, "");
}

const BUNDLE_CSV: &str = "manifests/olmctl-operator.clusterserviceversion.yaml";

/// This repository's bundle at `work/dir`, its CSV's version broken (CSV013) when `broken`.
fn bundle_at(work: &Path, dir: &str, broken: bool) {
    let to = work.join(dir);
    copy_tree(&root().join("bundle"), &to);
    if broken {
        let csv = to.join(BUNDLE_CSV);
        let good = std::fs::read_to_string(&csv).expect("read");
        let bad = good.replacen("\n  version: 0.3.0\n", "\n  version: banana\n", 1);
        assert_ne!(bad, good);
        std::fs::write(&csv, bad).expect("write");
    }
}

/// A bundle directory whose name reads as an option (`--select=GP003` would run one rule and
/// `--help` print the help, both exiting 0; `-o json` would be an output format) is a
/// directory: the broken bundle there fails the step with its finding as an annotation. The
/// input's words are the directories (`-o json` is `-o` and `json`).
#[test]
fn bundle_directories_named_like_options_are_validated() {
    let tmp = tempfile::tempdir().expect("tmp");
    let work = tmp.path().join("work");
    let path = path_with_olmctl(tmp.path());
    // The input, its directories (the broken one first).
    for (bundles, dirs) in [
        ("--select=GP003", &["--select=GP003"][..]),
        ("--help", &["--help"]),
        ("-o json", &["-o", "json"]),
        ("broken --select=GP003", &["broken", "--select=GP003"]),
    ] {
        for (i, dir) in dirs.iter().enumerate() {
            bundle_at(&work, dir, i == 0);
        }
        let with = serde_json::json!({"checks": "bundle-validate", "bundles": bundles});
        let (status, out, outputs) = run_action(&work, tmp.path(), &with, &path);
        assert_eq!(status, Some(1), "{bundles}: {out}");
        assert!(
            out.contains(&format!(
                "\n::error title=olmctl CSV013,file={}/{BUNDLE_CSV},line=",
                dirs[0]
            )),
            "{out}"
        );
        let counted = match dirs.len() {
            1 => "(1 bundle)\n".to_string(),
            n => format!("({n} bundles)\n"),
        };
        assert!(out.contains(&counted), "{counted:?} not in {out}");
        assert_eq!(outputs["errors"], "1", "{out}");
        std::fs::remove_dir_all(&work).expect("rm");
    }
}

/// The bundles input is names separated by white space (spaces, tabs, line breaks: a YAML block
/// with one a line), each a directory as written: `*` is no pattern.
#[test]
fn the_bundles_input_is_names_separated_by_white_space() {
    let tmp = tempfile::tempdir().expect("tmp");
    let work = tmp.path().join("work");
    let path = path_with_olmctl(tmp.path());
    bundle_at(&work, "good", false);
    bundle_at(&work, "broken", true);
    let with = serde_json::json!({"checks": "bundle-validate", "bundles": "good\n\tbroken  \n"});
    let (status, out, outputs) = run_action(&work, tmp.path(), &with, &path);
    assert_eq!(status, Some(1), "{out}");
    assert!(
        out.contains("::group::olmctl bundle validate good broken\n"),
        "{out}"
    );
    assert_eq!(outputs["errors"], "1", "{out}");
    let summary = std::fs::read_to_string(tmp.path().join("summary.md")).expect("summary");
    assert!(
        summary.contains("- `olmctl bundle validate good broken`: failed: 1 error"),
        "{summary}"
    );
    // No directory is named `*`: olmctl says so (exit 2), the good and broken ones are not read.
    let with = serde_json::json!({"checks": "bundle-validate", "bundles": "*"});
    let (status, out, _) = run_action(&work, tmp.path(), &with, &path);
    assert_eq!(status, Some(2), "{out}");
    assert!(out.contains("::group::olmctl bundle validate *\n"), "{out}");
    assert!(!out.contains("CSV013"), "{out}");
}

/// Control characters, a line that would be a workflow command of its own, a right-to-left
/// override and a backtick (which would close a Markdown code span).
const HOSTILE_REF: &str = "x\u{1b}]0;pwned\u{7}\u{9b}31m\r\n::warning::FORGED\u{202e}`";

/// No raw control or bidi character, and no line a value started.
fn assert_inert(what: &str, s: &str) {
    common::terminal::assert_no_raw_controls(what, s);
    assert!(
        !s.lines().any(|l| l.starts_with("::warning::FORGED")),
        "{what}: a forged line in:\n{s}"
    );
}

/// A base-ref that is not a commit is named in the error escaped; one that is (a commit found by
/// its message, which git allows to hold anything) is shown escaped in the group titles and
/// the summary, as a code span fenced past its backtick.
#[test]
fn a_hostile_base_ref_is_shown_escaped() {
    let tmp = tempfile::tempdir().expect("tmp");
    let work = tmp.path().join("work");
    copy_tree(&root().join("catalog"), &work.join("catalog"));
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "-A"]);
    let message = HOSTILE_REF.replace(['\r', '\n'], " ");
    git(&work, &["commit", "-q", "-m", &message]);
    let path = path_with_olmctl(tmp.path());

    let with = serde_json::json!({"base-ref": HOSTILE_REF});
    let (status, out, _) = run_action(&work, tmp.path(), &with, &path);
    assert_eq!(status, Some(2), "{out}");
    assert_inert("the error", &out);
    assert!(
        out.contains(
            "::error title=olmctl::base-ref x\\u{1b}]0;pwned\\u{7}\\u{9b}31m\\r\\n::warning::FORGED\\u{202e}` \
             is not a commit of "
        ),
        "{out}"
    );

    // `REV^{/TEXT}`: the youngest commit whose message matches TEXT.
    let base_ref = format!("HEAD^{{/{message}}}");
    let with = serde_json::json!({"base-ref": base_ref});
    let (status, out, _) = run_action(&work, tmp.path(), &with, &path);
    assert_eq!(status, Some(0), "{out}");
    assert_inert("the log", &out);
    let shown = "HEAD^{/x\\u{1b}]0;pwned\\u{7}\\u{9b}31m  ::warning::FORGED\\u{202e}`}";
    assert!(
        out.contains(&format!(
            "::group::olmctl catalog check-upgrades catalog --base {shown}:catalog\n"
        )),
        "{out}"
    );
    let summary = std::fs::read_to_string(tmp.path().join("summary.md")).expect("summary");
    assert_inert("the summary", &summary);
    assert!(
        summary.contains(&format!("\n### Catalog changes against ``{shown}``\n")),
        "{summary}"
    );
}
