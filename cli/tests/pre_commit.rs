//! The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real pre-commit (PyPI; scripts/
//! test.sh installs it) in a throwaway git repository with README.md's configurations: the hook
//! repository is this one's hook files committed to a local repository (README's `repo:` and
//! `rev:` replaced by it), its script finding olmctl through $OLMCTL; the `language: system`
//! example runs olmctl from PATH. Each hook fails on a catalog or bundle with one problem, with
//! olmctl's own message, and passes once it is fixed.

use std::path::Path;
use std::process::{Command, Output};

use olmctl_testdata::{git, readme_example, root};

const OLMCTL: &str = env!("CARGO_BIN_EXE_olmctl");

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A catalog with one error: a channel entry whose bundle is missing (FBC025).
const BROKEN: &str = "schema: olm.package\nname: p\ndefaultChannel: stable\n---\n\
                      schema: olm.channel\npackage: p\nname: stable\nentries:\n- name: p.v1.0.0\n";

/// A throwaway git repository, with pre-commit's cache beside it.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let r = Repo {
            dir: tempfile::tempdir().expect("tmp"),
        };
        std::fs::create_dir(r.path()).expect("mkdir");
        r.git(&["init", "-q"]);
        r
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }

    fn git(&self, args: &[&str]) -> String {
        git(&self.path(), args)
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
        self.git(&["add", "-A"]);
    }

    fn copy_dir(&self, from: &Path, to: &str) {
        for e in std::fs::read_dir(from).expect("read_dir") {
            let e = e.expect("entry");
            let rel = format!("{to}/{}", e.file_name().to_string_lossy());
            if e.path().is_dir() {
                self.copy_dir(&e.path(), &rel);
            } else {
                let content = std::fs::read_to_string(e.path()).expect("read");
                self.write(&rel, &content);
            }
        }
    }

    /// pre-commit with `args` in the repository; olmctl from `$OLMCTL` and PATH.
    fn pre_commit(&self, args: &[&str]) -> Output {
        let bin = self.dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        let link = bin.join("olmctl");
        if !link.exists() {
            std::os::unix::fs::symlink(OLMCTL, &link).expect("symlink");
        }
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new("python3")
            .args(["-m", "pre_commit"])
            .args(args)
            .current_dir(self.path())
            .env("PRE_COMMIT_HOME", self.dir.path().join("cache"))
            .env("OLMCTL", OLMCTL)
            .env("PATH", path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1")
            .output()
            .expect("run pre-commit (python3 -m pip install pre-commit)")
    }

    /// `pre-commit run --all-files --verbose`.
    fn run(&self) -> (Option<i32>, String) {
        let o = self.pre_commit(&["run", "--all-files", "--verbose", "--color", "never"]);
        (o.status.code(), text(&o.stdout) + &text(&o.stderr))
    }
}

/// The hook's result line (`name....Passed`/`Failed`) and olmctl's output as pre-commit shows.
fn assert_result(got: &(Option<i32>, String), passed: bool, name: &str, olmctl_says: &str) {
    let (code, out) = got;
    let verdict = if passed { "Passed" } else { "Failed" };
    assert_eq!(*code, Some(if passed { 0 } else { 1 }), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with(name) && l.contains("..."))
        .unwrap_or_else(|| panic!("no result line for {name}:\n{out}"));
    assert!(line.ends_with(verdict), "{line}\n{out}");
    assert!(out.contains(olmctl_says), "{olmctl_says:?} not in:\n{out}");
}

const FBC025: &str = "error[FBC025]: no olm.bundle blob found in package \"p\" for channel \
                      entry \"p.v1.0.0\"\n  --> catalog/p/catalog.yaml:9:3\n";

/// This repository's hook files (working tree) committed to a new local repository: the hook
/// repository the README's configuration names, at the returned revision.
fn hook_repository(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("scripts")).expect("mkdir");
    for f in [".pre-commit-hooks.yaml", "scripts/pre-commit-hook.sh"] {
        std::fs::copy(root().join(f), dir.join(f)).expect("copy");
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "hooks"]);
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn the_readme_configuration_runs_the_hooks() {
    let repo = Repo::new();
    let hooks = repo.dir.path().join("hooks");
    let rev = hook_repository(&hooks);
    let example = readme_example("pre-commit");
    for part in ["repo: https://github.com/olmctl/olmctl", "rev: v0.1.0"] {
        assert!(example.contains(part), "README's example has no {part:?}");
    }
    let config = example
        .replace(
            "repo: https://github.com/olmctl/olmctl",
            &format!("repo: {}", hooks.display()),
        )
        .replace("rev: v0.1.0", &format!("rev: {rev}"));
    repo.write(".pre-commit-config.yaml", &config);

    // A catalog with an error.
    repo.write("catalog/p/catalog.yaml", BROKEN);
    assert_result(&repo.run(), false, "olmctl catalog validate", FBC025);

    // Fixed: the repository's own catalog in its place; no bundle changed.
    std::fs::remove_dir_all(repo.path().join("catalog")).expect("rm");
    repo.copy_dir(&root().join("catalog"), "catalog");
    let got = repo.run();
    for name in [
        "olmctl catalog fmt --check",
        "olmctl catalog validate",
        "olmctl catalog lint",
    ] {
        assert_result(&got, true, name, "");
    }
    assert!(
        got.1
            .lines()
            .any(|l| l.starts_with("olmctl bundle validate") && l.ends_with("Skipped")),
        "{}",
        got.1
    );

    // Out of canonical form: fmt --check fails as olmctl says; `olmctl catalog fmt` fixes it.
    let file = "catalog/olmctl-operator/catalog.yaml";
    let canonical = std::fs::read_to_string(repo.path().join(file)).expect("read");
    repo.write(
        file,
        &canonical.replacen("schema: olm.package\n", "schema:   olm.package\n", 1),
    );
    let o = Command::new(OLMCTL)
        .args(["catalog", "fmt", "--check", "catalog"])
        .current_dir(repo.path())
        .output()
        .expect("olmctl");
    assert_eq!(o.status.code(), Some(1));
    let says = text(&o.stdout) + &text(&o.stderr);
    assert_result(
        &repo.run(),
        false,
        "olmctl catalog fmt --check",
        says.trim(),
    );
    let o = Command::new(OLMCTL)
        .args(["catalog", "fmt", "catalog"])
        .current_dir(repo.path())
        .output()
        .expect("olmctl");
    assert!(o.status.success(), "{}", text(&o.stderr));
    repo.git(&["add", "-A"]);
    assert_result(&repo.run(), true, "olmctl catalog fmt --check", "");

    // A bundle: validated when its files change; a kustomize manifests/ directory is not one.
    repo.copy_dir(&root().join("bundle"), "bundles/olmctl-operator");
    repo.write("config/manifests/kustomization.yaml", "resources: []\n");
    let name = "olmctl bundle validate";
    assert_result(
        &repo.run(),
        true,
        name,
        "ok: 0 errors, 0 warnings, 0 info (1 bundle)",
    );
    let csv = "bundles/olmctl-operator/manifests/olmctl-operator.clusterserviceversion.yaml";
    let good = std::fs::read_to_string(repo.path().join(csv)).expect("read");
    assert!(good.contains("\n  version: 0.3.0\n"));
    repo.write(
        csv,
        &good.replacen("\n  version: 0.3.0\n", "\n  version: banana\n", 1),
    );
    assert_result(
        &repo.run(),
        false,
        name,
        "error[CSV013]: spec.version \"banana\" is not a semantic version",
    );
    repo.write(csv, &good);
    assert_result(&repo.run(), true, name, "(1 bundle)");
}

#[test]
fn the_readme_system_hooks_run_olmctl_from_path() {
    let repo = Repo::new();
    repo.write(
        ".pre-commit-config.yaml",
        &readme_example("pre-commit-system"),
    );
    repo.write("catalog/p/catalog.yaml", BROKEN);
    assert_result(&repo.run(), false, "olmctl catalog validate", FBC025);
    std::fs::remove_dir_all(repo.path().join("catalog")).expect("rm");
    repo.copy_dir(&root().join("catalog"), "catalog");
    assert_result(&repo.run(), true, "olmctl catalog validate", "");
}

/// A bundle directory whose name reads as an option (`--select=GP003` would run one rule,
/// `--help` would print the help, both exiting 0; `-o json` would be an output format) is a
/// directory to the bundle hook: a broken bundle there fails it with olmctl's finding. A name
/// with glob characters is that name, not a pattern: `[b]*` holding only manifests/ (its CSV
/// makes it a bundle directory) is validated, and refused for its missing metadata/.
#[test]
fn bundle_directories_named_like_options_are_validated() {
    let repo = Repo::new();
    let hooks = repo.dir.path().join("hooks");
    let rev = hook_repository(&hooks);
    repo.write(
        ".pre-commit-config.yaml",
        &format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: olmctl-bundle-validate\n",
            hooks.display()
        ),
    );
    let csv = "manifests/olmctl-operator.clusterserviceversion.yaml";
    let good = std::fs::read_to_string(root().join("bundle").join(csv)).expect("read");
    let broken = good.replacen("\n  version: 0.3.0\n", "\n  version: banana\n", 1);
    assert_ne!(broken, good);
    // At the top of the repository, so that the paths pre-commit passes start with the name.
    for dir in ["--select=GP003", "-o json", "--help"] {
        repo.copy_dir(&root().join("bundle"), dir);
        repo.write(&format!("{dir}/{csv}"), &broken);
        let got = repo.run();
        assert_result(&got, false, "olmctl bundle validate", "error[CSV013]: ");
        assert!(
            got.1.contains(&format!("\n  --> {dir}/{csv}:")),
            "{}",
            got.1
        );
        std::fs::remove_dir_all(repo.path().join(dir)).expect("rm");
        repo.git(&["add", "-A"]);
    }
    repo.write(&format!("[b]*/{csv}"), &broken);
    assert_result(
        &repo.run(),
        false,
        "olmctl bundle validate",
        "error: [b]*: not a bundle directory",
    );
}
