//! What the release ships runs on its own: the static olmctl (scripts/static.sh, the build
//! scripts/release.sh makes in release mode) names no ELF interpreter and no shared library,
//! prints its version and commit, and validates a catalog in an otherwise empty chroot; the
//! olmctl image, built by scripts/images.sh from that binary twice to the same digest, carries
//! its entrypoint, user, working directory and OCI labels, and runs `--version` and `catalog
//! validate` from its own unpacked layers, as `docker run -v "$PWD:/src" IMAGE catalog validate
//! ...` runs it.

use std::path::Path;
use std::process::{Command, Output};

use olmctl_testdata::image::{
    Runner, assert_static, manifest_and_config, runtime_root, static_binary, unpack,
};
use olmctl_testdata::{readme_example, root, root as root_dir};

const OLMCTL: &str = env!("CARGO_BIN_EXE_olmctl");
const USER: u32 = 65532;
const ENTRYPOINT: &str = "/usr/local/bin/olmctl";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `git` in the repository, trimmed; `None` outside a checkout.
fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git")
        .args(args)
        .current_dir(root())
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| text(&o.stdout).trim().to_string())
}

/// What `--version` prints: the version and the commit (12 hex digits and the commit date).
fn expected_version() -> String {
    let commit = git(&["log", "-1", "--abbrev=12", "--format=%h %cs"])
        .unwrap_or_else(|| "commit unknown".into());
    format!("olmctl {} ({commit})\n", env!("CARGO_PKG_VERSION"))
}

/// A catalog with one error: a channel entry whose bundle is missing (FBC025).
const BROKEN: &str = "schema: olm.package\nname: p\ndefaultChannel: stable\n---\n\
                      schema: olm.channel\npackage: p\nname: stable\nentries:\n- name: p.v1.0.0\n";

/// Copies the repository's catalog/ (valid) to `dest`.
fn copy_catalog(dest: &Path) {
    olmctl_testdata::copy_tree(&root().join("catalog"), dest);
}

fn run(runner: &Runner, root: &Path, workdir: &str, entry: &str, args: &[&str]) -> Output {
    runner
        .command(root, workdir, entry, args)
        .env_clear()
        .output()
        .unwrap_or_else(|e| panic!("start {entry} in {}: {e}", root.display()))
}

fn assert_ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} ({:?}):\n{}\n{}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    );
}

/// Validates the catalog `valid` (exit 0), then the same directory holding a broken catalog
/// (exit 1, olmctl's message naming the file and line).
fn validates(runner: &Runner, root: &Path, workdir: &str, entry: &str, dir: &str, on_disk: &Path) {
    let o = run(runner, root, workdir, entry, &["catalog", "validate", dir]);
    assert_ok(&o, "catalog validate of the repository's catalog");
    assert!(
        text(&o.stdout).starts_with("ok: 0 errors"),
        "{}",
        text(&o.stdout)
    );
    std::fs::remove_dir_all(on_disk).expect("rm");
    std::fs::create_dir_all(on_disk.join("p")).expect("mkdir");
    std::fs::write(on_disk.join("p/catalog.yaml"), BROKEN).expect("write");
    let o = run(runner, root, workdir, entry, &["catalog", "validate", dir]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    assert!(
        out.starts_with(&format!(
            "error[FBC025]: no olm.bundle blob found in package \"p\" for channel entry \
             \"p.v1.0.0\"\n  --> {dir}/p/catalog.yaml:9:3\n"
        )),
        "{out}"
    );
}

#[test]
fn the_static_binary_runs_in_an_empty_chroot() {
    let bin = static_binary("olmctl");
    assert_static(&bin);
    // The commit comes from the checkout, the same in both builds.
    for b in [bin.as_path(), Path::new(OLMCTL)] {
        let o = Command::new(b).arg("--version").output().expect("run");
        assert_ok(&o, "--version");
        assert_eq!(text(&o.stdout), expected_version(), "{}", b.display());
    }

    // A root holding nothing but the binary and a catalog.
    let work = tempfile::tempdir().expect("tmp");
    let root = work.path().join("empty");
    std::fs::create_dir(&root).expect("mkdir");
    std::fs::copy(&bin, root.join("olmctl")).expect("copy");
    let catalog = root.join("catalog");
    copy_catalog(&catalog);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let runner = Runner::for_root(&root, (USER, USER), "/olmctl", &["--version"]);
    let o = run(&runner, &root, "/", "/olmctl", &["--version"]);
    assert_ok(&o, "--version in the empty root");
    assert_eq!(text(&o.stdout), expected_version());
    let dir = runner.path_of(&root, "/catalog");
    validates(&runner, &root, "/", "/olmctl", &dir, &catalog);
}

/// Builds the olmctl image with scripts/images.sh into `out`/olmctl-image; returns the layout.
fn build_image(out: &Path) -> std::path::PathBuf {
    let o = Command::new("bash")
        .arg(root().join("scripts/images.sh"))
        .arg("olmctl")
        .env("OLMCTL", OLMCTL)
        .env("OLMCTL_BIN", static_binary("olmctl"))
        .env("OUT", out)
        .output()
        .expect("run scripts/images.sh");
    assert_ok(&o, "scripts/images.sh olmctl");
    out.join("olmctl-image")
}

#[test]
fn the_olmctl_image_runs_from_its_own_layers() {
    runtime_root();
    let work = tempfile::tempdir().expect("tmp");
    let (l1, l2) = (
        build_image(&work.path().join("1")),
        build_image(&work.path().join("2")),
    );
    let (manifest, config) = manifest_and_config(&l1);
    assert_eq!(
        manifest,
        manifest_and_config(&l2).0,
        "same binary and root, same image"
    );
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 3, "the runtime root, /src, the binary");
    let c = &config["config"];
    assert_eq!(c["Entrypoint"], serde_json::json!([ENTRYPOINT]));
    assert_eq!(c["User"], USER.to_string(), "runs as non-root");
    assert_eq!(c["WorkingDir"], "/src");
    assert_eq!(c["Env"], serde_json::json!(["PATH=/usr/local/bin:/bin"]));
    let label = |k: &str| c["Labels"][format!("org.opencontainers.image.{k}")].clone();
    assert_eq!(label("source"), "https://github.com/olmctl/olmctl");
    assert_eq!(label("version"), env!("CARGO_PKG_VERSION"));
    let head = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    assert_eq!(label("revision"), head.as_str());
    assert_eq!(label("title"), "olmctl");

    let root = work.path().join("rootfs");
    unpack(&l1, env!("CARGO_PKG_VERSION"), &root);
    let entry = root.join(ENTRYPOINT.trim_start_matches('/'));
    assert_static(&entry);
    assert!(root.join("etc/ssl/certs/ca-certificates.crt").is_file());
    assert!(
        root.join("src").is_dir(),
        "the working directory is in the image"
    );
    assert!(root.join("bin/sh").exists(), "a shell for CI job scripts");
    let runner = Runner::for_root(&root, (USER, USER), ENTRYPOINT, &["--version"]);
    let o = run(&runner, &root, "/src", ENTRYPOINT, &["--version"]);
    assert_ok(&o, "--version from the image");
    assert_eq!(text(&o.stdout), expected_version());

    // The repository mounted at /src: a path relative to the working directory, and absolute.
    let catalog = root.join("src/catalog");
    copy_catalog(&catalog);
    validates(&runner, &root, "/src", ENTRYPOINT, "catalog", &catalog);
    copy_catalog(&root.join("src/again"));
    let dir = runner.path_of(&root, "/src/again");
    validates(
        &runner,
        &root,
        "/src",
        ENTRYPOINT,
        &dir,
        &root.join("src/again"),
    );
    // The image's shell finds olmctl on the image's PATH.
    let o = runner
        .command(&root, "/src", "/bin/sh", &["-c", "olmctl --version"])
        .env_clear()
        .env("PATH", "/usr/local/bin:/bin")
        .output()
        .expect("sh");
    assert_ok(&o, "sh -c 'olmctl --version' in the image");
    assert_eq!(text(&o.stdout), expected_version());

    gitlab_job_runs_in_the_image(&runner, &root);
}

/// README's GitLab CI job, as GitLab's runner runs it in the image: the entrypoint cleared, the
/// script's lines in the image's /bin/sh in $CI_PROJECT_DIR, stopping at the first failing line;
/// its code quality reports then validate against the format GitLab documents.
fn gitlab_job_runs_in_the_image(runner: &Runner, root: &Path) {
    let o = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\nprint(json.dumps(yaml.safe_load(sys.argv[1])))",
            &readme_example("gitlab"),
        ])
        .output()
        .expect("python3 with pyyaml");
    assert_ok(&o, "the README's GitLab job parses");
    let job: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let job = &job["olmctl"];
    assert_eq!(
        job["image"]["name"],
        format!("ghcr.io/olmctl/olmctl:{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(job["image"]["entrypoint"], serde_json::json!([""]));
    let script: Vec<&str> = job["script"]
        .as_array()
        .expect("script")
        .iter()
        .map(|l| l.as_str().expect("a line"))
        .collect();
    let reports: Vec<&str> = job["artifacts"]["reports"]["codequality"]
        .as_array()
        .expect("codequality reports")
        .iter()
        .map(|l| l.as_str().expect("a path"))
        .collect();
    assert_eq!(job["artifacts"]["when"], "always");
    let project = root.join("builds/project");
    let schema = root_dir().join("tests/support/codeclimate-gitlab.schema.json");
    let run_job = || {
        for r in &reports {
            let _ = std::fs::remove_file(project.join(r));
        }
        let o = runner
            .command(
                root,
                "/builds/project",
                "/bin/sh",
                &["-c", &format!("set -e\n{}\n", script.join("\n"))],
            )
            .env_clear()
            .env("PATH", "/usr/local/bin:/bin")
            .env("CI_PROJECT_DIR", "/builds/project")
            .output()
            .expect("sh");
        for r in &reports {
            let check = Command::new("python3")
                .args([
                    "-c",
                    "import json, sys, jsonschema\n\
                     jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))",
                ])
                .arg(project.join(r))
                .arg(&schema)
                .output()
                .expect("python3");
            assert_ok(&check, &format!("{r} validates as a code quality report"));
        }
        let first: Vec<serde_json::Value> =
            serde_json::from_slice(&std::fs::read(project.join(reports[0])).expect("report"))
                .expect("JSON");
        (o, first)
    };
    // The project checked out: a catalog with an error fails the job; the report names it.
    // GitLab's docker executor clones with umask 0000 (unless FF_DISABLE_UMASK_FOR_DOCKER_EXECUTOR)
    // so that a job image's non-root user can write there: the directory is 0777 here too.
    std::fs::create_dir_all(project.join("catalog/p")).expect("mkdir");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    std::fs::write(project.join("catalog/p/catalog.yaml"), BROKEN).expect("write");
    let (o, issues) = run_job();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0]["check_name"], "FBC025");
    assert_eq!(issues[0]["location"]["path"], "catalog/p/catalog.yaml");
    // Fixed: the job passes, with empty reports.
    std::fs::remove_dir_all(project.join("catalog")).expect("rm");
    copy_catalog(&project.join("catalog"));
    let (o, issues) = run_job();
    assert_ok(&o, "the GitLab job on a clean catalog");
    assert_eq!(issues, Vec::<serde_json::Value>::new());
}
