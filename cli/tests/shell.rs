//! `olmctl completion` and `olmctl man`: bash sources the script and completes subcommands and
//! flags; the other shells' scripts are generated (and syntax-checked when that shell is
//! installed); the man pages are one per visible command, the same bytes on every run, and
//! render with groff without a warning.

mod common;

use std::path::Path;
use std::process::Command;

use common::cli::{code, olmctl, p};

fn stdout(args: &[&str]) -> String {
    let o = olmctl(args);
    assert_eq!(
        code(&o),
        0,
        "olmctl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

/// The words bash completes for `line` (the word being completed last, possibly empty), with
/// the script sourced as a user's shell does.
fn bash_complete(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let program = format!(
        "source '{}' || exit 9\n\
         complete -p olmctl >/dev/null || exit 8\n\
         COMP_WORDS=({})\nCOMP_CWORD={cword}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _olmctl olmctl '{}' '{prev}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.join(" "),
        words[cword],
    );
    let o = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash");
    assert!(
        o.status.success(),
        "bash: {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let mut words: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    words.sort();
    words
}

#[test]
fn bash_sources_the_script_and_completes_subcommands_and_flags() {
    let dir = tempfile::tempdir().expect("tmp");
    let script = dir.path().join("olmctl.bash");
    std::fs::write(&script, stdout(&["completion", "bash"])).expect("write");

    assert_eq!(bash_complete(&script, &["olmctl", "cat"]), ["catalog"]);
    assert_eq!(
        bash_complete(&script, &["olmctl", "c"]),
        ["catalog", "check", "codes", "completion"]
    );
    assert_eq!(
        bash_complete(&script, &["olmctl", "catalog", "val"]),
        ["validate"]
    );
    assert_eq!(
        bash_complete(&script, &["olmctl", "status", "--all"]),
        ["--all-namespaces"]
    );
    // The shells a value may name.
    assert_eq!(
        bash_complete(&script, &["olmctl", "completion", "p"]),
        ["powershell"]
    );
}

#[test]
fn every_shell_gets_a_script_naming_the_commands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let s = stdout(&["completion", shell]);
        for word in ["catalog", "validate", "status", "all-namespaces"] {
            assert!(s.contains(word), "{shell}: no {word}");
        }
    }
    // Syntax-checked by the shells that are installed (CI has bash only).
    let dir = tempfile::tempdir().expect("tmp");
    for (shell, args) in [("zsh", &["-n"][..]), ("fish", &["--no-execute"][..])] {
        let Ok(probe) = Command::new(shell).arg("-c").arg("exit 0").output() else {
            continue;
        };
        if !probe.status.success() {
            continue;
        }
        let f = dir.path().join(shell);
        std::fs::write(&f, stdout(&["completion", shell])).expect("write");
        let o = Command::new(shell)
            .args(args)
            .arg(&f)
            .output()
            .expect(shell);
        assert!(
            o.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // An unknown shell is a usage error naming the choices.
    let o = olmctl(&["completion", "tcsh"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("powershell"));
}

/// The page names `olmctl man --out-dir` must write: one per visible command, as git names
/// them, from the command line's own definition.
fn expected_pages() -> Vec<String> {
    fn walk(c: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        out.push(format!("{prefix}.1"));
        for s in c.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(s, &format!("{prefix}-{}", s.get_name()), out);
        }
    }
    let mut cmd = olmctl_cli::command(false).disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "olmctl", &mut out);
    out.sort();
    out
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn man_pages_are_one_per_command_deterministic_and_render() {
    let page = stdout(&["man"]);
    assert!(page.contains(".TH olmctl 1"), "{page}");
    assert!(page.contains("status"), "{page}");

    let (a, b) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let printed = stdout(&["man", "--out-dir", p(a.path())]);
    stdout(&["man", "--out-dir", p(b.path())]);
    let want = expected_pages();
    assert!(want.contains(&"olmctl-catalog-validate.1".to_string()));
    assert!(want.contains(&"olmctl-status.1".to_string()));
    assert_eq!(listing(a.path()), want);
    let mut printed: Vec<&str> = printed.lines().collect();
    printed.sort();
    let paths: Vec<String> = want
        .iter()
        .map(|n| a.path().join(n).display().to_string())
        .collect();
    assert_eq!(printed, paths);
    for name in &want {
        let (x, y) = (a.path().join(name), b.path().join(name));
        let x = std::fs::read(&x).expect("page");
        assert_eq!(x, std::fs::read(&y).expect("page"), "{name} differs");
        // The page without --out-dir is the top one.
        if name == "olmctl.1" {
            assert_eq!(x, page.as_bytes());
        }
    }

    // Rendered by groff (man's formatter; the machine image has it), warnings on.
    let validate = a.path().join("olmctl-catalog-validate.1");
    // Plain text: no overstriking for bold or underline (grotty -c -b -o -u).
    let o = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
        .arg(&validate)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("groff (the machine image ships it)");
    // Justified: words joined by one space again.
    let text = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("olmctl-catalog-validate"), "{text}");
    assert!(text.contains("SYNOPSIS"), "{text}");
    assert!(text.contains("olmctl catalog validate"), "{text}");
}

#[test]
fn man_refuses_to_write_through_a_symlink_in_its_directory() {
    let dir = tempfile::tempdir().expect("tmp");
    let elsewhere = tempfile::tempdir().expect("tmp");
    let target = elsewhere.path().join("victim");
    std::fs::write(&target, "keep").expect("write");
    std::os::unix::fs::symlink(&target, dir.path().join("olmctl-status.1")).expect("symlink");
    let o = olmctl(&["man", "--out-dir", p(dir.path())]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("olmctl-status.1"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep");
}
