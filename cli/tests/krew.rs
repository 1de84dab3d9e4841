//! The krew manifest `deploy/krew/olm.yaml` validated as krew validates it
//! (`tests/support/validate_krew.py`: `krew-plugin.schema.json` for the structure, then krew's
//! Go rules the schema cannot hold, each named after its upstream function), a manifest breaking
//! each rule refused, and a release archive of the built binary written in by
//! `scripts/krew-manifest.sh` and installed as krew installs it: the link krew makes,
//! `kubectl-olm`, is the plugin.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn validate(manifest: &Path, install: Option<(&Path, &Path)>) -> Output {
    let mut c = Command::new("python3");
    c.arg(repo("tests/support/validate_krew.py"))
        .arg(repo("tests/support/krew-plugin.schema.json"))
        .arg(manifest);
    if let Some((archive, root)) = install {
        c.arg(archive).arg(root);
    }
    c.output()
        .expect("python3 (with PyYAML and jsonschema, installed by scripts/test.sh)")
}

fn report(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_manifest_is_valid_for_krew() {
    let o = validate(&repo("deploy/krew/olm.yaml"), None);
    assert!(o.status.success(), "{}", report(&o));
}

#[test]
fn manifests_breaking_a_krew_rule_are_refused() {
    let good = std::fs::read_to_string(repo("deploy/krew/olm.yaml")).expect("manifest");
    let dir = tempfile::tempdir().expect("tmp");
    let cases: [(&str, &str, &str, &str); 11] = [
        (
            "olm.yaml",
            "version: v0.1.0",
            "version: 0.1.0",
            "spec.version",
        ),
        (
            "olm.yaml",
            "version: v0.1.0",
            "version: v0.01.0",
            "zero-prefixed",
        ),
        (
            "olm.yaml",
            "version: v0.1.0",
            "version: v0.1",
            "illegal version string",
        ),
        (
            "other.yaml",
            "",
            "",
            "plugin should be named 'other', not 'olm'",
        ),
        ("olm.yaml", "sha256: \"0000", "sha256: \"000A", "sha256"),
        (
            "olm.yaml",
            "        os: linux",
            "        platform: linux",
            "selector",
        ),
        (
            "olm.yaml",
            "        os: linux",
            "        os: plan9",
            "doesn't match any",
        ),
        (
            "olm.yaml",
            "    files:\n    - from: olmctl\n      to: .\n",
            "    files: []\n",
            "files",
        ),
        (
            "olm.yaml",
            "shortDescription: Install",
            "shortDescription: \"two\\nlines\" # Install",
            "shortDescription",
        ),
        (
            "olm.yaml",
            "kind: Plugin",
            "kind: Plugin\napiVersion: krew.googlecontainertools.github.com/v1alpha1",
            "apiVersion",
        ),
        (
            "olm.yaml",
            "  platforms:\n",
            "  platforms:\n  - selector:\n      matchExpressions:\n      - {key: os, operator: In, values: [linux]}\n    uri: https://example.com/a.tar.gz\n    sha256: \"1111111111111111111111111111111111111111111111111111111111111111\"\n    bin: olmctl\n",
            "overlapping",
        ),
    ];
    for (i, (file, from, to, want)) in cases.iter().enumerate() {
        let case = dir.path().join(i.to_string());
        std::fs::create_dir(&case).expect("dir");
        let bad = if from.is_empty() {
            good.clone()
        } else {
            assert!(good.contains(from), "case {i}: {from}");
            good.replacen(from, to, 1)
        };
        let f = case.join(file);
        std::fs::write(&f, &bad).expect("write");
        let o = validate(&f, None);
        let r = report(&o);
        assert_eq!(o.status.code(), Some(1), "case {i} ({to}) passed: {r}");
        assert!(r.contains(want), "case {i}: want {want}: {r}");
    }
}

/// `tar -czf ARCHIVE -C DIR MEMBER`.
fn tar_gz(dir: &Path, member: &str, archive: &Path) {
    let o = Command::new("tar")
        .arg("-C")
        .arg(dir)
        .arg("-czf")
        .arg(archive)
        .arg(member)
        .output()
        .expect("tar");
    assert!(o.status.success(), "{}", report(&o));
}

/// `scripts/krew-manifest.sh ARCHIVE` on `manifest`.
fn krew_manifest(archive: &Path, manifest: &Path) -> Output {
    Command::new("bash")
        .arg(repo("scripts/krew-manifest.sh"))
        .arg(archive)
        .env("MANIFEST", manifest)
        .output()
        .expect("bash")
}

#[test]
fn a_release_archive_is_written_in_and_krew_installs_it_as_kubectl_olm() {
    let dir = tempfile::tempdir().expect("tmp");
    let bin = Path::new(env!("CARGO_BIN_EXE_olmctl"));
    let archive = dir
        .path()
        .join("olmctl-v0.2.0-x86_64-unknown-linux-musl.tar.gz");
    tar_gz(bin.parent().expect("dir"), "olmctl", &archive);

    let manifest = dir.path().join("olm.yaml");
    std::fs::copy(repo("deploy/krew/olm.yaml"), &manifest).expect("copy");
    let o = krew_manifest(&archive, &manifest);
    assert!(o.status.success(), "{}", report(&o));
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let sum = Command::new("sha256sum")
        .arg(&archive)
        .output()
        .expect("sha256sum");
    let sum = String::from_utf8_lossy(&sum.stdout);
    let sum = sum.split_whitespace().next().expect("sum");
    assert!(text.contains(&format!("    sha256: \"{sum}\"\n")), "{text}");
    assert!(text.contains("  version: v0.2.0\n"), "{text}");
    assert!(
        text.contains("    uri: https://github.com/olmctl/olmctl/releases/download/v0.2.0/olmctl-v0.2.0-x86_64-unknown-linux-musl.tar.gz\n"),
        "{text}"
    );

    let root = dir.path().join("krew");
    std::fs::create_dir(&root).expect("root");
    let o = validate(&manifest, Some((&archive, &root)));
    let r = report(&o);
    assert!(o.status.success(), "{r}");
    let link = PathBuf::from(r.lines().last().expect("link").trim());
    assert_eq!(link, root.join("bin/kubectl-olm"));
    let o = Command::new(&link)
        .arg("--help")
        .output()
        .expect("kubectl-olm");
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", report(&o));
    assert!(
        help.contains("Usage: kubectl olm [OPTIONS] <COMMAND>"),
        "{help}"
    );

    // An archive without olmctl at its top is refused before the manifest is touched.
    let wrong = dir
        .path()
        .join("olmctl-v0.3.0-x86_64-unknown-linux-musl.tar.gz");
    tar_gz(dir.path(), "olm.yaml", &wrong);
    let o = krew_manifest(&wrong, &manifest);
    assert_eq!(o.status.code(), Some(2), "{}", report(&o));
    assert!(report(&o).contains("has no olmctl"), "{}", report(&o));
    assert_eq!(std::fs::read_to_string(&manifest).expect("manifest"), text);
}
