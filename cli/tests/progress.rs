//! Many inputs at once (`bundle validate DIR...`, `check history PKG...`): each input's
//! findings are printed as it is checked, in the order given, with a summary line of its own;
//! one that cannot be read stops none of the others; progress is drawn on stderr only when it
//! is a terminal and `--quiet` is not given.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::cli::{code, olmctl, p};

fn cnpg(version: &str) -> PathBuf {
    common::shared_fixtures()
        .join("first-day/operators/cloudnative-pg")
        .join(version)
}

/// Where each line of `text` holding `needle` starts, in order.
fn lines_with(text: &str, needle: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn bundles_are_reported_one_by_one_in_the_order_given() {
    let (b1, b2) = (cnpg("1.29.2"), cnpg("1.29.1"));
    let missing = tempfile::tempdir().expect("tmp").path().join("gone");
    let o = olmctl(&["bundle", "validate", p(&b1), p(&missing), p(&b2)]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    // The directory that cannot be read is an error (exit 2); the bundles after it are
    // still checked.
    assert_eq!(code(&o), 2, "{stdout}{stderr}");
    assert!(stderr.contains(p(&missing)), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let own = |b: &PathBuf| {
        lines
            .iter()
            .position(|l| l.starts_with("ok: ") && l.ends_with(&format!("({})", p(b))))
            .unwrap_or_else(|| panic!("no summary line of {}: {stdout}", p(b)))
    };
    let (s1, s2) = (own(&b1), own(&b2));
    assert!(s1 < s2, "{stdout}");
    // Each bundle's findings come before its own summary line, after the previous one's.
    let v1292 = lines_with(&stdout, "bundle `cloudnative-pg.v1.29.2`");
    let v1291 = lines_with(&stdout, "bundle `cloudnative-pg.v1.29.1`");
    assert!(!v1292.is_empty() && !v1291.is_empty(), "{stdout}");
    assert!(v1292.iter().all(|&i| i < s1), "{stdout}");
    assert!(v1291.iter().all(|&i| s1 < i && i < s2), "{stdout}");
    // The total says that one was not read.
    assert_eq!(
        lines.last().copied(),
        Some("failed: 0 errors, 4 warnings, 0 info, 1 not read (3 bundles)")
    );
    // Not a terminal: no progress.
    assert!(!stderr.contains("bundles"), "{stderr}");

    // One bundle: its findings and one summary line, as before.
    let o = olmctl(&["bundle", "validate", p(&b1)]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 0);
    assert_eq!(lines_with(&stdout, "ok: ").len(), 1, "{stdout}");
    assert!(
        stdout.ends_with("ok: 0 errors, 2 warnings, 0 info (1 bundle)\n"),
        "{stdout}"
    );

    // JSON: one document with every readable bundle's findings.
    let o = olmctl(&[
        "bundle",
        "validate",
        p(&b1),
        p(&missing),
        p(&b2),
        "-o",
        "json",
    ]);
    assert_eq!(code(&o), 2);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let bundles: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["bundle"].as_str())
        .collect();
    assert!(
        bundles.contains(&"cloudnative-pg.v1.29.2") && bundles.contains(&"cloudnative-pg.v1.29.1"),
        "{v}"
    );
}

/// Runs `olmctl args` with a pseudo-terminal as stdin, stdout and stderr (util-linux
/// `script`) and returns what the terminal showed.
fn on_terminal(args: &[&str]) -> String {
    let line = std::iter::once(common::olmctl_bin().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let o = Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env("NO_COLOR", "1")
        .output()
        .expect("run script (util-linux)");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn progress_is_drawn_on_a_terminal_unless_quiet() {
    let (b1, b2) = (cnpg("1.29.2"), cnpg("1.29.1"));
    let shown = on_terminal(&["bundle", "validate", p(&b1), p(&b2)]);
    assert!(shown.contains("/2 bundles"), "{shown}");
    assert!(shown.contains("(2 bundles)"), "{shown}");
    let quiet = on_terminal(&["bundle", "validate", "--quiet", p(&b1), p(&b2)]);
    assert!(!quiet.contains("/2 bundles"), "{quiet}");
    assert!(quiet.contains("(2 bundles)"), "{quiet}");

    let pkg = common::shared_fixtures().join("first-day/operators/cloudnative-pg");
    // The same package twice: two inputs.
    let other = pkg.clone();
    let shown = on_terminal(&["check", "history", p(&pkg), p(&other)]);
    assert!(shown.contains("/2 packages"), "{shown}");
    let quiet = on_terminal(&["-q", "check", "history", p(&pkg), p(&other)]);
    assert!(!quiet.contains("/2 packages"), "{quiet}");
}

#[test]
fn packages_are_reported_one_by_one_in_the_order_given() {
    let pkg = common::shared_fixtures().join("first-day/operators/cloudnative-pg");
    let missing = tempfile::tempdir().expect("tmp").path().join("gone");
    let o = olmctl(&["check", "history", p(&pkg), p(&missing)]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{stdout}{stderr}");
    assert!(stderr.contains(p(&missing)), "{stderr}");
    // The package that was read has a summary line of its own, before the total.
    let own = lines_with(&stdout, &format!("({})", p(&pkg)));
    assert_eq!(own.len(), 1, "{stdout}");
    let total = lines_with(&stdout, "(2 packages (");
    assert_eq!(total.len(), 1, "{stdout}");
    assert!(own[0] < total[0], "{stdout}");
}
