//! Images against a real registry (Debian's docker-registry on 127.0.0.1) and skopeo:
//! reproducible bundle builds, push/inspect/copy, unpack and pull round trips, catalog images
//! with and without a multi-platform base, OCI layouts, auth, retries and hostile layers.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::flaky::FlakyProxy;
use common::hostile::hostile_tar;
use common::registry::{PASSWORD, TestRegistry, USER, client, rt};
use common::*;
use olmctl::oci::image::{Artifact, Blob, Manifest, Platform, new_config};
use olmctl::oci::layer::LayerBuilder;
use olmctl::oci::media;
use olmctl::oci::registry::parse_ref;
use serde_json::Value;

fn olmctl(args: &[&str]) -> Output {
    olmctl_env(args, &[], None)
}

/// Runs olmctl with extra environment and optional stdin. HOME points at an empty directory
/// so that no auth file of the machine is read.
fn olmctl_env(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut c = Command::new(crate::common::olmctl_bin());
    c.args(args)
        .env("NO_COLOR", "1")
        .env("HOME", home.path())
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("SOURCE_DATE_EPOCH")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("run olmctl");
    if let Some(s) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    child.wait_with_output().expect("olmctl output")
}

fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn skopeo(args: &[&str]) -> Output {
    Command::new("skopeo")
        .args(args)
        .output()
        .expect("skopeo is installed (apt-get install skopeo, as .ci/run does)")
}

fn skopeo_json(args: &[&str]) -> Value {
    let o = skopeo(args);
    assert!(o.status.success(), "skopeo {args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("skopeo JSON")
}

/// `skopeo inspect --raw|--config` of an image in a test registry.
fn skopeo_inspect(tag: &str, what: &str) -> Value {
    skopeo_json(&[
        "inspect",
        what,
        "--tls-verify=false",
        &format!("docker://{tag}"),
    ])
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A fixture bundle with a scorecard config, read in place.
fn fixture_bundle() -> PathBuf {
    fixture_operators().join("kube-green/0.7.1")
}

/// Every file below `dir` (relative path → bytes), only under `subdirs`.
fn files_below(dir: &Path, subdirs: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> = subdirs
        .iter()
        .map(|s| dir.join(s))
        .filter(|p| p.exists())
        .collect();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// `annotations.yaml` read independently: `  key: value` lines under `annotations:`.
fn annotations(dir: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join("metadata/annotations.yaml")).unwrap();
    text.lines()
        .filter(|l| l.starts_with("  ") && !l.trim_start().starts_with('#'))
        .filter_map(|l| l.trim().split_once(": "))
        .map(|(k, v)| {
            (
                k.to_string(),
                v.trim_matches(|c| c == '"' || c == '\'').to_string(),
            )
        })
        .collect()
}

fn digest_of(stdout: &str) -> String {
    stdout.trim().rsplit('@').next().unwrap().to_string()
}

/// Names (and kinds) of the entries of a gzipped tar.
fn tar_names(gz: &[u8]) -> Vec<String> {
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(gz));
    a.entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn bundle_build_is_reproducible_and_carries_labels_and_files() {
    let dir = fixture_bundle();
    let reg = TestRegistry::start();
    let tag = reg.image("kube-green/bundle:v0.7.1");
    let first = digest_of(&ok(&olmctl(&["bundle", "build", p(&dir), "--tag", &tag])));
    let second = digest_of(&ok(&olmctl(&["bundle", "build", p(&dir), "--tag", &tag])));
    assert_eq!(first, second, "same bundle, same digest");
    assert!(first.starts_with("sha256:") && first.len() == 71);
    // A copy of the bundle elsewhere (other mtimes, other path) gives the same digest too.
    let copy = tempfile::tempdir().unwrap();
    for (rel, data) in files_below(&dir, &["manifests", "metadata", "tests"]) {
        let to = copy.path().join(&rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, data).unwrap();
    }
    let third = digest_of(&ok(&olmctl(&[
        "bundle",
        "build",
        p(copy.path()),
        "--tag",
        &tag,
    ])));
    assert_eq!(first, third);

    let pushed = ok(&olmctl(&[
        "bundle",
        "build",
        p(&dir),
        "--tag",
        &tag,
        "--push",
    ]));
    assert_eq!(digest_of(&pushed), first);
    assert_eq!(
        pushed.trim(),
        format!("{}@{first}", reg.image("kube-green/bundle"))
    );

    // skopeo sees the labels of annotations.yaml, an OCI manifest and one layer.
    let inspect = skopeo_json(&["inspect", "--tls-verify=false", &format!("docker://{tag}")]);
    assert_eq!(inspect["Digest"], first);
    let labels: BTreeMap<String, String> =
        serde_json::from_value(inspect["Labels"].clone()).unwrap();
    assert_eq!(labels, annotations(&dir));
    assert_eq!(inspect["Layers"].as_array().unwrap().len(), 1);
    let raw = skopeo_inspect(&tag, "--raw");
    assert_eq!(raw["mediaType"], media::OCI_MANIFEST);
    assert_eq!(raw["config"]["mediaType"], media::OCI_CONFIG);
    assert_eq!(raw["layers"][0]["mediaType"], media::OCI_LAYER_GZIP);

    // skopeo copy to a directory: the layer holds exactly the bundle's files.
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("img");
    let o = skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{tag}"),
        &format!("dir:{}", p(&target)),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let layer_digest = raw["layers"][0]["digest"].as_str().unwrap();
    let blob = std::fs::read(target.join(layer_digest.trim_start_matches("sha256:"))).unwrap();
    let names: BTreeSet<String> = tar_names(&blob)
        .into_iter()
        .filter(|n| !n.ends_with('/'))
        .collect();
    let want: BTreeSet<String> = files_below(&dir, &["manifests", "metadata", "tests/scorecard"])
        .into_keys()
        .collect();
    assert_eq!(names, want);
    assert!(want.len() >= 5, "{want:?}");
}

#[test]
fn unpack_round_trips_and_a_second_push_uploads_nothing() {
    let dir = fixture_bundle();
    let reg = TestRegistry::start();
    let tag = reg.image("kg/bundle:1");
    let first = ok(&olmctl(&[
        "bundle",
        "build",
        p(&dir),
        "--tag",
        &tag,
        "--push",
        "-o",
        "json",
    ]));
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["push"]["uploaded"].as_array().unwrap().len(), 2);
    let again: Value = serde_json::from_str(&ok(&olmctl(&[
        "bundle",
        "build",
        p(&dir),
        "--tag",
        &tag,
        "--push",
        "-o",
        "json",
    ])))
    .unwrap();
    assert_eq!(
        again["push"]["uploaded"].as_array().unwrap().len(),
        0,
        "{again}"
    );
    assert_eq!(again["push"]["existing"].as_array().unwrap().len(), 2);
    assert_eq!(again["digest"], first["digest"]);

    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("unpacked");
    let o = olmctl(&["bundle", "unpack", &tag, p(&target)]);
    ok(&o);
    let got = files_below(&target, &["manifests", "metadata", "tests"]);
    let want = files_below(&dir, &["manifests", "metadata", "tests/scorecard"]);
    assert_eq!(got, want, "byte for byte");
    // The unpacked directory renders like the original.
    let a = ok(&olmctl(&["catalog", "render", p(&target), "--image", &tag]));
    let b = ok(&olmctl(&["catalog", "render", p(&dir), "--image", &tag]));
    assert_eq!(a, b);
    // And rendering the image itself gives the same blob, with the image as its reference.
    let c = ok(&olmctl(&["catalog", "render", &tag]));
    assert_eq!(c, b);
    // A non-empty target is refused.
    let o = olmctl(&["bundle", "unpack", &tag, p(&target)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
}

#[test]
fn catalog_push_then_pull_validates_and_formats_identically() {
    let reg = TestRegistry::start();
    let tag = reg.image("catalog:v4.18");
    let pushed = ok(&olmctl(&[
        "catalog",
        "push",
        p(&fixture_catalog()),
        "--tag",
        &tag,
    ]));
    let inspect = skopeo_json(&["inspect", "--tls-verify=false", &format!("docker://{tag}")]);
    assert_eq!(
        inspect["Labels"]["operators.operatorframework.io.index.configs.v1"],
        "/configs"
    );
    assert_eq!(inspect["Digest"].as_str().unwrap(), digest_of(&pushed));

    let out = tempfile::tempdir().unwrap();
    let pulled = out.path().join("catalog");
    ok(&olmctl(&["catalog", "pull", &tag, p(&pulled)]));
    let findings = validate_dir(&pulled);
    assert!(findings.is_empty(), "{findings:?}");
    ok(&olmctl(&["catalog", "fmt", p(&pulled), "--check"]));
    // The fixture is opm's own output, so the pulled files equal it byte for byte.
    let fixture = files_below(&fixture_catalog(), &["."]);
    let got = files_below(&pulled, &["."]);
    assert_eq!(got.len(), fixture.len());
    assert!(got == fixture, "pulled catalog differs from the fixture");
    // Rendering the catalog image gives every blob of the catalog.
    let rendered = ok(&olmctl(&["catalog", "render", &tag, "-o", "json"]));
    let blobs = serde_json::Deserializer::from_str(&rendered)
        .into_iter::<Value>()
        .count();
    let local = ok(&olmctl(&[
        "catalog",
        "ls",
        p(&fixture_catalog()),
        "-o",
        "json",
    ]));
    assert!(!local.is_empty());
    assert_eq!(
        blobs,
        35 + 78 + 727 + count_deprecations(&fixture_catalog())
    );
    // A catalog image is not a bundle.
    let o = olmctl(&[
        "bundle",
        "unpack",
        &tag,
        p(&out.path().join("not-a-bundle")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a catalog image"), "{}", stderr(&o));
    // Pushing it again gives the same digest: reproducible.
    assert_eq!(
        digest_of(&ok(&olmctl(&[
            "catalog",
            "push",
            p(&fixture_catalog()),
            "--tag",
            &tag
        ]))),
        digest_of(&pushed)
    );
}

fn count_deprecations(dir: &Path) -> usize {
    files_below(dir, &["."])
        .values()
        .map(|b| {
            String::from_utf8_lossy(b)
                .matches("schema: olm.deprecations")
                .count()
        })
        .sum()
}

#[test]
fn catalog_push_refuses_an_invalid_catalog_unless_forced() {
    let reg = TestRegistry::start();
    let tag = reg.image("bad:1");
    // A default channel the package does not have is an opm error.
    let dir = write_tree(&[(
        "foo/catalog.yaml",
        "---\nschema: olm.package\nname: foo\ndefaultChannel: fast\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/foo/bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n",
    )]);
    let errs = validate_dir(dir.path());
    assert!(
        !errors(&errs).is_empty(),
        "the test catalog must be invalid"
    );
    let o = olmctl(&["catalog", "push", p(dir.path()), "--tag", &tag]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"));
    let pull = olmctl(&["catalog", "pull", &tag, p(&dir.path().join("out"))]);
    assert_eq!(pull.status.code(), Some(2), "nothing was pushed");
    ok(&olmctl(&[
        "catalog",
        "push",
        p(dir.path()),
        "--tag",
        &tag,
        "--force",
    ]));
    ok(&olmctl(&[
        "catalog",
        "pull",
        &tag,
        p(&dir.path().join("out2")),
    ]));
}

/// A two-platform base image with a stand-in `/bin/opm`, pushed by the test itself.
fn push_base(reg: &TestRegistry, repo: &str) -> (String, Vec<(Platform, Vec<String>)>) {
    let mut entries = Vec::new();
    let mut diff_ids = Vec::new();
    for arch in ["amd64", "arm64"] {
        let platform = Platform {
            os: "linux".into(),
            architecture: arch.into(),
            variant: None,
        };
        let mut l1 = LayerBuilder::new(0);
        l1.file(
            "bin/opm",
            format!("#!/bin/sh\necho opm {arch}\n").into_bytes(),
            true,
        );
        let mut l2 = LayerBuilder::new(0);
        l2.file("etc/os-release", b"ID=test\n".to_vec(), false);
        let (l1, l2) = (l1.build(), l2.build());
        let labels: BTreeMap<String, String> = [(
            "org.opencontainers.image.title".to_string(),
            "test-opm".to_string(),
        )]
        .into();
        let cfg = new_config(
            &platform,
            &labels,
            &[(&l1, "ADD opm"), (&l2, "ADD os-release")],
            None,
        );
        diff_ids.push((
            platform.clone(),
            vec![l1.diff_id.clone(), l2.diff_id.clone()],
        ));
        let m = Manifest::new(
            media::OCI_MANIFEST,
            Blob::bytes(media::OCI_CONFIG, cfg),
            vec![
                Blob::bytes(l1.media_type, l1.blob),
                Blob::bytes(l2.media_type, l2.blob),
            ],
        );
        entries.push((m, platform));
    }
    let art = Artifact::index(media::OCI_INDEX, entries);
    let tag = reg.image(repo);
    let c = client(reg);
    rt().block_on(c.push(&parse_ref(&tag).unwrap(), &art))
        .unwrap();
    (tag, diff_ids)
}

#[test]
fn base_image_index_gets_the_layer_label_and_serve_command_per_platform() {
    let reg = TestRegistry::start();
    let (base, base_diffs) = push_base(&reg, "opm:test");
    let tag = reg.image("catalog-on-opm:v1");
    let out = ok(&olmctl(&[
        "catalog",
        "push",
        p(&fixture_catalog()),
        "--tag",
        &tag,
        "--base-image",
        &base,
        "-o",
        "json",
    ]));
    let out: Value = serde_json::from_str(&out).unwrap();
    let layer = out["layer"].as_str().unwrap().to_string();
    assert_eq!(
        out["push"]["mounted"].as_array().unwrap().len(),
        3,
        "base layers mounted, not re-uploaded: {out}"
    );

    let raw = skopeo_inspect(&tag, "--raw");
    assert_eq!(raw["mediaType"], media::OCI_INDEX);
    let platforms: Vec<String> = raw["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["platform"]["architecture"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(platforms, ["amd64", "arm64"]);
    for (platform, base_ids) in &base_diffs {
        let arch = &platform.architecture;
        let cfg = skopeo_json(&[
            "inspect",
            "--config",
            "--tls-verify=false",
            "--override-arch",
            arch,
            &format!("docker://{tag}"),
        ]);
        assert_eq!(cfg["architecture"], arch.as_str());
        assert_eq!(
            cfg["config"]["Labels"]["operators.operatorframework.io.index.configs.v1"],
            "/configs"
        );
        assert_eq!(
            cfg["config"]["Labels"]["org.opencontainers.image.title"], "test-opm",
            "base labels kept"
        );
        assert_eq!(cfg["config"]["Entrypoint"], serde_json::json!(["/bin/opm"]));
        assert_eq!(cfg["config"]["Cmd"][0], "serve");
        assert_eq!(cfg["config"]["Cmd"][1], "/configs");
        let ids: Vec<String> = serde_json::from_value(cfg["rootfs"]["diff_ids"].clone()).unwrap();
        assert_eq!(ids.len(), 3);
        assert_eq!(&ids[..2], base_ids.as_slice(), "base diff_ids first");
        assert_eq!(cfg["history"].as_array().unwrap().len(), 3);
        let m = skopeo_json(&[
            "inspect",
            "--raw",
            "--tls-verify=false",
            "--override-arch",
            arch,
            &format!("docker://{tag}"),
        ]);
        let m = if m.get("manifests").is_some() {
            let d = m["manifests"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["platform"]["architecture"] == arch.as_str())
                .unwrap()["digest"]
                .as_str()
                .unwrap()
                .to_string();
            skopeo_json(&[
                "inspect",
                "--raw",
                "--tls-verify=false",
                &format!("docker://{}@{d}", reg.image("catalog-on-opm")),
            ])
        } else {
            m
        };
        assert_eq!(m["layers"].as_array().unwrap().len(), 3);
        assert_eq!(m["layers"][2]["digest"], layer.as_str());
        // The third diff_id is the uncompressed configs layer: pull it and check.
        let d = tempfile::tempdir().unwrap();
        let o = skopeo(&[
            "copy",
            "--src-tls-verify=false",
            "--override-arch",
            arch,
            &format!("docker://{tag}"),
            &format!("dir:{}", p(d.path())),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let gz = std::fs::read(d.path().join(layer.trim_start_matches("sha256:"))).unwrap();
        let mut tar = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz.as_slice()), &mut tar)
            .unwrap();
        assert_eq!(ids[2], olmctl::oci::digest::sha256(&tar));
    }
    // Pulling the catalog from either platform gives only the FBC.
    let d = tempfile::tempdir().unwrap();
    for arch in ["amd64", "arm64"] {
        let dest = d.path().join(arch);
        ok(&olmctl(&[
            "catalog",
            "pull",
            &tag,
            p(&dest),
            "--platform",
            &format!("linux/{arch}"),
        ]));
        assert!(!dest.join("bin").exists());
        assert_eq!(
            files_below(&dest, &["."]),
            files_below(&fixture_catalog(), &["."])
        );
    }
}

#[test]
fn oci_layouts_are_readable_by_skopeo() {
    let d = tempfile::tempdir().unwrap();
    let layout = d.path().join("layout");
    let bundle = ok(&olmctl(&[
        "bundle",
        "build",
        p(&fixture_bundle()),
        "--tag",
        "quay.io/example/kube-green-bundle:v0.7.1",
        "--oci-layout",
        p(&layout),
    ]));
    let cat = ok(&olmctl(&[
        "catalog",
        "push",
        p(&fixture_catalog()),
        "--tag",
        "quay.io/example/catalog:v4.18",
        "--oci-layout",
        p(&layout),
    ]));
    let b = skopeo_json(&["inspect", &format!("oci:{}:v0.7.1", p(&layout))]);
    assert_eq!(b["Digest"].as_str().unwrap(), digest_of(&bundle));
    assert_eq!(
        b["Labels"]["operators.operatorframework.io.bundle.package.v1"],
        "kube-green"
    );
    let c = skopeo_json(&["inspect", &format!("oci:{}:v4.18", p(&layout))]);
    assert_eq!(c["Digest"].as_str().unwrap(), digest_of(&cat));
    // skopeo copies the layout into a registry, and olmctl reads it back.
    let reg = TestRegistry::start();
    let tag = reg.image("from-layout:v0.7.1");
    let o = skopeo(&[
        "copy",
        "--dest-tls-verify=false",
        &format!("oci:{}:v0.7.1", p(&layout)),
        &format!("docker://{tag}"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let un = d.path().join("unpacked");
    ok(&olmctl(&["bundle", "unpack", &tag, p(&un)]));
    assert_eq!(
        files_below(&un, &["manifests"]),
        files_below(&fixture_bundle(), &["manifests"])
    );
}

/// Pushes a one-layer "bundle" image whose layer is `tar` (raw bytes, gzipped).
fn push_raw_layer(reg: &TestRegistry, repo: &str, tar: Vec<u8>) -> String {
    let gz = olmctl::oci::layer::gzip(&tar);
    let diff_id = olmctl::oci::digest::sha256(&tar);
    let cfg = serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "config": {"Labels": {"operators.operatorframework.io.bundle.package.v1": "evil"}},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    });
    let m = Manifest::new(
        media::OCI_MANIFEST,
        Blob::bytes(media::OCI_CONFIG, serde_json::to_vec(&cfg).unwrap()),
        vec![Blob::bytes(media::OCI_LAYER_GZIP, gz)],
    );
    let tag = reg.image(repo);
    rt().block_on(client(reg).push(&parse_ref(&tag).unwrap(), &Artifact::Image(m)))
        .unwrap();
    tag
}

#[test]
fn malicious_layers_are_refused() {
    let reg = TestRegistry::start();
    let base = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "dotdot",
            hostile_tar(&[(
                "manifests/../../escaped",
                tar::EntryType::Regular,
                "",
                b"pwned",
            )]),
            "`..`",
        ),
        (
            "absolute",
            hostile_tar(&[("/tmp/olmctl-escaped", tar::EntryType::Regular, "", b"pwned")]),
            "absolute",
        ),
        (
            "symlink",
            hostile_tar(&[
                ("manifests/link", tar::EntryType::Symlink, "../../..", b""),
                (
                    "manifests/link/escaped",
                    tar::EntryType::Regular,
                    "",
                    b"pwned",
                ),
            ]),
            "escapes",
        ),
        (
            "symlink-abs",
            hostile_tar(&[("metadata", tar::EntryType::Symlink, "/etc", b"")]),
            "escapes",
        ),
        (
            "device",
            hostile_tar(&[("manifests/null", tar::EntryType::Char, "", b"")]),
            "device",
        ),
    ];
    for (name, tar, want) in cases {
        let tag = push_raw_layer(&reg, &format!("evil/{name}:1"), tar);
        let dest = base.path().join(name).join("out");
        let o = olmctl(&["bundle", "unpack", &tag, p(&dest)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{name}: {}", stderr(&o));
        assert!(
            !dest.exists(),
            "{name}: the half-extracted directory is removed"
        );
        assert!(!base.path().join(name).join("escaped").exists());
        assert!(!base.path().join("escaped").exists());
    }
    assert!(!Path::new("/tmp/olmctl-escaped").exists());
}

#[test]
fn corrupted_blobs_are_detected() {
    let reg = TestRegistry::start();
    let tag = reg.image("kg/bundle:corrupt");
    let out: Value = serde_json::from_str(&ok(&olmctl(&[
        "bundle",
        "build",
        p(&fixture_bundle()),
        "--tag",
        &tag,
        "--push",
        "-o",
        "json",
    ])))
    .unwrap();
    // Flip bytes of the layer blob in the registry's storage.
    let raw = skopeo_inspect(&tag, "--raw");
    let hex = raw["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:")
        .to_string();
    let data_dir = reg_storage(&reg);
    let blob = data_dir.join(format!(
        "docker/registry/v2/blobs/sha256/{}/{hex}/data",
        &hex[..2]
    ));
    let mut bytes = std::fs::read(&blob).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let o = olmctl(&["bundle", "unpack", &tag, p(&dest.path().join("x"))]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).to_lowercase().contains("digest"),
        "{}",
        stderr(&o)
    );
    assert!(out["digest"].is_string());
}

fn reg_storage(reg: &TestRegistry) -> PathBuf {
    reg.storage()
}

#[test]
fn credentials_from_flags_and_auth_files_and_never_printed() {
    let reg = TestRegistry::start_with_auth();
    let tag = reg.image("private/bundle:1");
    let dir = fixture_bundle();
    let o = olmctl(&["bundle", "build", p(&dir), "--tag", &tag, "--push"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not authorized"), "{}", stderr(&o));
    let o = push_with_password(&dir, &tag, PASSWORD);
    ok(&o);
    assert!(!stderr(&o).contains(PASSWORD));
    let wrong = push_with_password(&dir, &tag, "wrong-password");
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        !stderr(&wrong).contains("wrong-password"),
        "{}",
        stderr(&wrong)
    );
    // An auth file as docker/podman login write it.
    let d = tempfile::tempdir().unwrap();
    let auth = d.path().join("auth.json");
    let token = olmctl::encoding::base64(format!("{USER}:{PASSWORD}").as_bytes());
    std::fs::write(
        &auth,
        format!(r#"{{"auths":{{"{}":{{"auth":"{token}"}}}}}}"#, reg.addr),
    )
    .unwrap();
    let o = olmctl_env(
        &["bundle", "unpack", &tag, p(&d.path().join("out"))],
        &[("REGISTRY_AUTH_FILE", p(&auth))],
        None,
    );
    ok(&o);
    assert!(!stderr(&o).contains(PASSWORD) && !stderr(&o).contains(&token));
    // The same file as ~/.docker/config.json via DOCKER_CONFIG.
    let o = olmctl_env(
        &["bundle", "unpack", &tag, p(&d.path().join("out2"))],
        &[("DOCKER_CONFIG", p(d.path()))],
        None,
    );
    let _ = std::fs::copy(&auth, d.path().join("config.json"));
    let o2 = olmctl_env(
        &["bundle", "unpack", &tag, p(&d.path().join("out3"))],
        &[("DOCKER_CONFIG", p(d.path()))],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "no config.json yet");
    ok(&o2);
}

/// `bundle build --push` with `--username` and the password on stdin.
fn push_with_password(dir: &Path, tag: &str, password: &str) -> Output {
    let args = [
        "bundle",
        "build",
        p(dir),
        "--tag",
        tag,
        "--push",
        "--username",
        USER,
        "--password-stdin",
    ];
    olmctl_env(&args, &[], Some(&format!("{password}\n")))
}

#[test]
fn credential_helpers_from_the_docker_config_are_used() {
    let reg = TestRegistry::start_with_auth();
    let tag = reg.image("helper/bundle:1");
    let d = tempfile::tempdir().unwrap();
    // A credential helper as docker-credential-* helpers behave: server name on stdin, JSON out.
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let helper = bin.join("docker-credential-olmctltest");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\nread server\nif [ \"$1\" = get ] && [ \"$server\" = \"{}\" ]; then\n  printf '{{\"ServerURL\":\"%s\",\"Username\":\"{USER}\",\"Secret\":\"{PASSWORD}\"}}' \"$server\"\nelse\n  echo 'credentials not found in native keychain'; exit 1\nfi\n",
            reg.addr
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cfg = d.path().join("docker");
    std::fs::create_dir(&cfg).unwrap();
    for (name, json) in [
        ("credsStore", r#"{"credsStore":"olmctltest"}"#.to_string()),
        (
            "credHelpers",
            format!(r#"{{"credHelpers":{{"{}":"olmctltest"}}}}"#, reg.addr),
        ),
    ] {
        std::fs::write(cfg.join("config.json"), json).unwrap();
        let env = [("DOCKER_CONFIG", p(&cfg)), ("PATH", path.as_str())];
        let o = olmctl_env(
            &[
                "bundle",
                "build",
                p(&fixture_bundle()),
                "--tag",
                &tag,
                "--push",
            ],
            &env,
            None,
        );
        ok(&o);
        assert!(!stderr(&o).contains(PASSWORD), "{name}: {}", stderr(&o));
    }
}

#[test]
fn transient_failures_are_retried() {
    let reg = TestRegistry::start();
    // Connections dropped mid-request, then 503 answers: each push must still land.
    for (name, drops, errors, want) in [
        ("dropped", 2, 0, "connection closed"),
        ("unavailable", 0, 3, "503"),
    ] {
        let proxy = FlakyProxy::start(&reg.addr, drops, errors);
        let tag = format!("{}/kg/bundle:{name}", proxy.addr);
        let o = olmctl(&[
            "bundle",
            "build",
            p(&fixture_bundle()),
            "--tag",
            &tag,
            "--push",
            "-o",
            "json",
        ]);
        let out: Value = serde_json::from_str(&ok(&o)).unwrap();
        assert!(
            out["push"]["retries"].as_u64().unwrap() >= 1,
            "{out}\n{}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("retry 1/4") && stderr(&o).contains(want),
            "{}",
            stderr(&o)
        );
        assert!(proxy.connections.load(std::sync::atomic::Ordering::SeqCst) > drops + errors);
        // The image arrived intact.
        let inspect = skopeo_json(&[
            "inspect",
            "--tls-verify=false",
            &format!("docker://{}", reg.image(&format!("kg/bundle:{name}"))),
        ]);
        assert_eq!(inspect["Digest"], out["digest"]);
    }
    // With retries off, a failure is final.
    let proxy = FlakyProxy::start(&reg.addr, 0, 5);
    let o = olmctl(&[
        "bundle",
        "build",
        p(&fixture_bundle()),
        "--tag",
        &format!("{}/kg/bundle:noretry", proxy.addr),
        "--push",
        "--retries",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("503"), "{}", stderr(&o));
}

#[test]
fn docker_schema2_base_in_another_registry_is_copied_and_keeps_its_media_types() {
    let base_reg = TestRegistry::start();
    let target_reg = TestRegistry::start();
    let platform = Platform {
        os: "linux".into(),
        architecture: "amd64".into(),
        variant: None,
    };
    let mut l = LayerBuilder::new(0);
    l.file("bin/opm", b"#!/bin/sh\n".to_vec(), true);
    let l = l.build();
    let cfg = new_config(&platform, &BTreeMap::new(), &[(&l, "ADD opm")], None);
    let m = Manifest::new(
        media::DOCKER_MANIFEST,
        Blob::bytes(media::DOCKER_CONFIG, cfg),
        vec![Blob::bytes(media::DOCKER_LAYER_GZIP, l.blob.clone())],
    );
    let base = base_reg.image("opm:docker");
    rt().block_on(client(&base_reg).push(&parse_ref(&base).unwrap(), &Artifact::Image(m)))
        .unwrap();
    let tag = target_reg.image("catalog:docker");
    let dir = write_tree(&[(
        "foo/catalog.yaml",
        "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/foo/bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n",
    )]);
    let out = ok(&olmctl(&[
        "catalog",
        "push",
        p(dir.path()),
        "--tag",
        &tag,
        "--base-image",
        &base,
        "--label",
        "team=olm",
        "-o",
        "json",
    ]));
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        out["push"]["copied"],
        serde_json::json!([l.digest]),
        "{out}"
    );
    let raw = skopeo_inspect(&tag, "--raw");
    assert_eq!(raw["mediaType"], media::DOCKER_MANIFEST);
    assert_eq!(raw["config"]["mediaType"], media::DOCKER_CONFIG);
    assert_eq!(raw["layers"][1]["mediaType"], media::DOCKER_LAYER_GZIP);
    let cfg = skopeo_inspect(&tag, "--config");
    assert_eq!(cfg["config"]["Labels"]["team"], "olm");
    assert_eq!(cfg["rootfs"]["diff_ids"][0], l.diff_id.as_str());
    let pulled = dir.path().join("pulled");
    ok(&olmctl(&["catalog", "pull", &tag, p(&pulled)]));
    assert_eq!(files_below(&pulled, &["."]).len(), 1);
}

/// Runs an `olmctl check` command with `-o json`, expects exit 1 (findings), and returns the
/// (code, message) pairs.
fn check_findings(args: &[&str]) -> std::collections::BTreeSet<(String, String)> {
    let mut all = args.to_vec();
    all.extend_from_slice(&["-o", "json"]);
    let o = olmctl(&all);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `check upgrade` takes bundle images: percona 1.14.0 -> 1.15.0 pushed to the registry gives
/// the same findings (codes and messages) as the directories (crdify schema changes; the
/// CRV001 data loss of this release needs the path from 1.11.0, see tests/safety_fixtures.rs),
/// and mixing a directory with an image works.
#[test]
fn check_upgrade_reads_bundle_images() {
    let reg = TestRegistry::start();
    let pkg = fixture_operators().join("percona-xtradb-cluster-operator");
    let (old, new) = (pkg.join("1.14.0"), pkg.join("1.15.0"));
    let (old_tag, new_tag) = (
        reg.image("pxc/bundle:1.14.0"),
        reg.image("pxc/bundle:1.15.0"),
    );
    for (dir, tag) in [(&old, &old_tag), (&new, &new_tag)] {
        ok(&olmctl(&[
            "bundle",
            "build",
            p(dir),
            "--tag",
            tag,
            "--push",
            "--force",
        ]));
    }
    let findings = |a: &str, b: &str| check_findings(&["check", "upgrade", a, b]);
    let from_dirs = findings(p(&old), p(&new));
    assert!(
        from_dirs
            .iter()
            .any(|(c, m)| c == "SCH002" && m.contains("default added")),
        "{from_dirs:#?}"
    );
    assert_eq!(findings(&old_tag, &new_tag), from_dirs);
    assert_eq!(findings(p(&old), &new_tag), from_dirs);
}

/// `check catalog` without `--bundles` pulls the bundle images the catalog names: a two-entry
/// channel over percona 1.14.0 and 1.15.0 pushed to the test registry is checked from the
/// registry alone, and a map file may mix a directory and an image.
#[test]
fn check_catalog_pulls_bundle_images() {
    let reg = TestRegistry::start();
    let pkg = fixture_operators().join("percona-xtradb-cluster-operator");
    let mut digests = Vec::new();
    for v in ["1.14.0", "1.15.0"] {
        let tag = reg.image(&format!("pxc/bundle:{v}"));
        let out = ok(&olmctl(&[
            "bundle",
            "build",
            p(&pkg.join(v)),
            "--tag",
            &tag,
            "--push",
            "--force",
        ]));
        digests.push(out.trim().to_string());
    }
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("catalog");
    std::fs::create_dir_all(&cat).unwrap();
    let mut text = String::from(
        "---\nschema: olm.package\nname: percona-xtradb-cluster-operator\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: percona-xtradb-cluster-operator\nname: stable\nentries:\n- name: percona-xtradb-cluster-operator.v1.14.0\n- name: percona-xtradb-cluster-operator.v1.15.0\n  replaces: percona-xtradb-cluster-operator.v1.14.0\n",
    );
    for (v, image) in ["1.14.0", "1.15.0"].iter().zip(&digests) {
        text.push_str(&format!("---\nschema: olm.bundle\npackage: percona-xtradb-cluster-operator\nname: percona-xtradb-cluster-operator.v{v}\nimage: {image}\nproperties:\n- {{type: olm.package, value: {{packageName: percona-xtradb-cluster-operator, version: {v}}}}}\n"));
    }
    std::fs::write(cat.join("catalog.yaml"), text).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "catalog", p(&cat)];
        args.extend_from_slice(extra);
        check_findings(&args)
    };
    let pulled = run(&[]);
    assert!(pulled.iter().any(|(c, _)| c == "SCH002"), "{pulled:#?}");
    assert!(pulled.iter().all(|(c, _)| c != "EDGE001"), "{pulled:#?}");
    let map = dir.path().join("bundles.yaml");
    std::fs::write(
        &map,
        format!(
            "percona-xtradb-cluster-operator.v1.14.0: {}\npercona-xtradb-cluster-operator.v1.15.0: {}\n",
            p(&pkg.join("1.14.0")),
            digests[1]
        ),
    )
    .unwrap();
    assert_eq!(run(&["--bundles", p(&map)]), pulled);
}

#[test]
fn image_build_appends_an_executable_binary_reproducibly() {
    use std::os::unix::fs::PermissionsExt;
    let reg = TestRegistry::start();
    let (base, base_diffs) = push_base(&reg, "static:test");
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("olmctl-operator");
    std::fs::write(&bin, "#!/bin/sh\necho gate \"$@\"\n").unwrap();
    let build = |tag: &str, extra: &[&str]| {
        let mut args = vec![
            "image",
            "build",
            "--base-image",
            &base,
            "--binary",
            "",
            "--tag",
            tag,
            "--platform",
            "linux/arm64",
            "-o",
            "json",
        ];
        let b = format!("{}:/ko-app/olmctl-operator", p(&bin));
        args[5] = &b;
        args.extend_from_slice(extra);
        let o = olmctl(&args);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr(&o),
        )
    };
    let (t1, t2) = (reg.image("operator:v1"), reg.image("operator:v2"));
    let (c1, o1, e1) = build(&t1, &[]);
    assert_eq!(c1, Some(0), "{e1}");
    let (c2, o2, _) = build(&t2, &[]);
    assert_eq!(c2, Some(0));
    let (v1, v2): (Value, Value) = (
        serde_json::from_str(&o1).unwrap(),
        serde_json::from_str(&o2).unwrap(),
    );
    assert_eq!(
        v1["digest"], v2["digest"],
        "same binary and base, same digest"
    );
    assert_eq!(
        v1["push"]["mounted"].as_array().unwrap().len(),
        2,
        "base layers mounted: {v1}"
    );
    // One image (the arm64 one), not an index; skopeo reads it.
    let raw = skopeo_inspect(&t1, "--raw");
    assert_eq!(raw["mediaType"], media::OCI_MANIFEST);
    assert_eq!(raw["layers"].as_array().unwrap().len(), 3);
    let cfg = skopeo_inspect(&t1, "--config");
    assert_eq!(cfg["architecture"], "arm64");
    assert_eq!(
        cfg["config"]["Entrypoint"],
        serde_json::json!(["/ko-app/olmctl-operator"])
    );
    assert!(cfg["config"].get("Cmd").is_none(), "{cfg}");
    assert_eq!(
        cfg["config"]["Labels"]["org.opencontainers.image.title"],
        "test-opm"
    );
    let ids: Vec<String> = serde_json::from_value(cfg["rootfs"]["diff_ids"].clone()).unwrap();
    let arm = base_diffs
        .iter()
        .find(|(pl, _)| pl.architecture == "arm64")
        .unwrap();
    assert_eq!(&ids[..2], arm.1.as_slice(), "the base's arm64 layers first");
    // The binary is in the last layer at the entrypoint, mode 0755, and it runs.
    let copy = d.path().join("copy");
    let o = skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{t1}"),
        &format!("dir:{}", p(&copy)),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let layer = raw["layers"][2]["digest"].as_str().unwrap();
    let gz = std::fs::read(copy.join(layer.trim_start_matches("sha256:"))).unwrap();
    let root = d.path().join("root");
    tar::Archive::new(flate2::read::GzDecoder::new(gz.as_slice()))
        .unpack(&root)
        .unwrap();
    let f = root.join("ko-app/olmctl-operator");
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let run = Command::new(&f).arg("run").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "gate run\n");
    // Into an OCI layout, the same digest; skopeo reads it there too.
    let layout = d.path().join("layout");
    let (c3, o3, e3) = build(&t1, &["--oci-layout", p(&layout)]);
    assert_eq!(c3, Some(0), "{e3}");
    let v3: Value = serde_json::from_str(&o3).unwrap();
    assert_eq!(v3["digest"], v1["digest"]);
    let o = skopeo(&["inspect", "--config", &format!("oci:{}:v1", p(&layout))]);
    assert!(o.status.success(), "{}", stderr(&o));
    // No base (`scratch`): the binary alone, reproducible, without any registry.
    let scratch = |dir: &str| {
        let out = ok(&olmctl(&[
            "image",
            "build",
            "--base-image",
            "scratch",
            "--binary",
            p(&bin),
            "--tag",
            "localhost/operator:dev",
            "--oci-layout",
            p(&d.path().join(dir)),
        ]));
        digest_of(&out)
    };
    assert_eq!(scratch("s1"), scratch("s2"));
    let o = skopeo(&[
        "inspect",
        "--config",
        &format!("oci:{}:dev", p(&d.path().join("s1"))),
    ]);
    let cfg: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        cfg["config"]["Entrypoint"],
        serde_json::json!(["/usr/local/bin/olmctl-operator"])
    );
    assert_eq!(cfg["rootfs"]["diff_ids"].as_array().unwrap().len(), 1);
    // A platform the base does not have, and a missing binary, are refused.
    let o = olmctl(&[
        "image",
        "build",
        "--base-image",
        &base,
        "--binary",
        p(&bin),
        "--tag",
        &t1,
        "--platform",
        "linux/s390x",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("no linux/s390x image"),
        "{}",
        stderr(&o)
    );
    let o = olmctl(&[
        "image",
        "build",
        "--base-image",
        &base,
        "--binary",
        "/nonexistent/op",
        "--tag",
        &t1,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/op"), "{}", stderr(&o));
}

#[test]
fn image_build_puts_layer_trees_between_the_base_and_the_binary() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let reg = TestRegistry::start();
    let (base, base_diffs) = push_base(&reg, "static:layers");
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("op");
    std::fs::write(&bin, "#!/bin/sh\necho op\n").unwrap();
    // A runtime root as dpkg-deb unpacks one: an absolute symlink, a private directory.
    let runtime = d.path().join("runtime");
    std::fs::create_dir_all(runtime.join("lib/x86_64-linux-gnu")).unwrap();
    std::fs::create_dir_all(runtime.join("lib64")).unwrap();
    std::fs::write(runtime.join("lib/x86_64-linux-gnu/ld.so"), b"ld").unwrap();
    symlink(
        "/lib/x86_64-linux-gnu/ld.so",
        runtime.join("lib64/ld-linux-x86-64.so.2"),
    )
    .unwrap();
    std::fs::create_dir_all(runtime.join("etc/private")).unwrap();
    std::fs::set_permissions(
        runtime.join("etc/private"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    let certs = d.path().join("certs");
    std::fs::create_dir_all(certs.join("etc/ssl/certs")).unwrap();
    std::fs::write(certs.join("etc/ssl/certs/ca-certificates.crt"), b"pem").unwrap();
    let t = reg.image("operator:layers");
    let build = |layers: &[&Path], extra: &[&str]| {
        let mut args = vec![
            "image",
            "build",
            "--base-image",
            &base,
            "--binary",
            p(&bin),
            "--tag",
            &t,
            "--platform",
            "linux/amd64",
            "-o",
            "json",
        ];
        for l in layers {
            args.extend(["--layer", p(l)]);
        }
        args.extend_from_slice(extra);
        olmctl(&args)
    };
    let user = ["--user", "65532"];
    let o = build(&[&runtime, &certs], &user);
    let v: Value = serde_json::from_str(&ok(&o)).unwrap();
    let o2 = build(&[&runtime, &certs], &user);
    let v2: Value = serde_json::from_str(&ok(&o2)).unwrap();
    assert_eq!(
        v["digest"], v2["digest"],
        "same trees, binary and base, same digest"
    );
    assert_eq!(v["layers"].as_array().unwrap().len(), 3, "{v}");
    let cfg = skopeo_inspect(&t, "--config");
    assert_eq!(cfg["config"]["User"], "65532");
    let ids: Vec<String> = serde_json::from_value(cfg["rootfs"]["diff_ids"].clone()).unwrap();
    let amd = base_diffs
        .iter()
        .find(|(pl, _)| pl.architecture == "amd64")
        .unwrap();
    assert_eq!(ids.len(), 5, "base, runtime, certs, binary");
    assert_eq!(&ids[..2], amd.1.as_slice(), "the base's layers first");
    let history: Vec<&str> = cfg["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["created_by"].as_str().unwrap())
        .collect();
    assert_eq!(
        history[2..],
        [
            "ADD runtime/ / (olmctl image build --layer)",
            "ADD certs/ / (olmctl image build --layer)",
            "ADD op /usr/local/bin/op (olmctl image build)"
        ]
    );
    // The layers in order, as skopeo copies them: the symlink stays a symlink, inside the root.
    let raw = skopeo_inspect(&t, "--raw");
    let digests: Vec<&str> = raw["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["digest"].as_str().unwrap())
        .collect();
    assert_eq!(digests[2..], v["layers"].as_array().unwrap()[..]);
    let root = d.path().join("root");
    unpack_image(&t, d.path(), &root);
    assert_eq!(
        std::fs::read_link(root.join("lib64/ld-linux-x86-64.so.2")).unwrap(),
        Path::new("../lib/x86_64-linux-gnu/ld.so")
    );
    assert_eq!(
        std::fs::read(root.join("lib64/ld-linux-x86-64.so.2")).unwrap(),
        b"ld"
    );
    assert_eq!(
        std::fs::metadata(root.join("etc/private"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o700
    );
    assert!(root.join("etc/ssl/certs/ca-certificates.crt").is_file());
    // A hard link, a symlink out of the tree, a non-numeric user: refused, named, nothing built.
    std::fs::hard_link(
        runtime.join("lib/x86_64-linux-gnu/ld.so"),
        runtime.join("lib/x86_64-linux-gnu/ld-copy.so"),
    )
    .unwrap();
    let o = build(&[&runtime], &user);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--layer") && stderr(&o).contains("hard link"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(runtime.join("lib/x86_64-linux-gnu/ld-copy.so")).unwrap();
    symlink(
        "../../../../etc/shadow",
        runtime.join("lib/x86_64-linux-gnu/up"),
    )
    .unwrap();
    let o = build(&[&runtime], &user);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("leaves the tree"), "{}", stderr(&o));
    std::fs::remove_file(runtime.join("lib/x86_64-linux-gnu/up")).unwrap();
    let o = build(&[&runtime], &["--user", "nonroot"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("numeric"), "{}", stderr(&o));
}

/// Unpacks the layers of `image` (a single-platform image in the registry), in order, into
/// `root`.
fn unpack_image(image: &str, work: &Path, root: &Path) {
    let copy = work.join("copy");
    let o = skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{image}"),
        &format!("dir:{}", p(&copy)),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let raw = skopeo_inspect(image, "--raw");
    for l in raw["layers"].as_array().unwrap() {
        let gz =
            std::fs::read(copy.join(l["digest"].as_str().unwrap().trim_start_matches("sha256:")))
                .unwrap();
        tar::Archive::new(flate2::read::GzDecoder::new(gz.as_slice()))
            .unpack(root)
            .unwrap();
    }
}

/// The package names a `catalog serve` on `port` lists (waiting up to 60 s for it to listen).
fn served_packages(port: u16) -> Vec<String> {
    use olmctl::serve::api;
    rt().block_on(async {
        let url = format!("http://127.0.0.1:{port}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let channel = loop {
            if let Ok(ch) = tonic::transport::Endpoint::from_shared(url.clone())
                .unwrap()
                .connect()
                .await
            {
                break ch;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the server never listened"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        let mut c = api::registry_client::RegistryClient::new(channel);
        let mut s = c
            .list_packages(api::ListPackageRequest {})
            .await
            .unwrap()
            .into_inner();
        let mut names = Vec::new();
        while let Some(p) = s.message().await.unwrap() {
            names.push(p.name);
        }
        names
    })
}

/// `catalog push --serve-with olmctl` on a base made by `olmctl image build` from the olmctl
/// binary: the image runs `olmctl catalog serve /configs`, and what it holds serves the catalog
/// (the unpacked entrypoint, run with the image's command, answers over gRPC). A base whose
/// entrypoint is not olmctl is refused with the way to build one.
#[test]
fn catalog_image_served_by_olmctl() {
    let reg = TestRegistry::start();
    let (runtime, _) = push_base(&reg, "runtime:test");
    let olmctl_base = reg.image("olmctl:test");
    let binary = format!("{}:/usr/local/bin/olmctl", common::olmctl_bin().display());
    ok(&olmctl(&[
        "image",
        "build",
        "--base-image",
        &runtime,
        "--binary",
        &binary,
        "--platform",
        "linux/amd64",
        "--tag",
        &olmctl_base,
    ]));
    let tag = reg.image("catalog-on-olmctl:v1");
    ok(&olmctl(&[
        "catalog",
        "push",
        p(&fixture_catalog()),
        "--base-image",
        &olmctl_base,
        "--serve-with",
        "olmctl",
        "--tag",
        &tag,
    ]));
    let cfg = skopeo_inspect(&tag, "--config");
    assert_eq!(
        cfg["config"]["Entrypoint"],
        serde_json::json!(["/usr/local/bin/olmctl"])
    );
    assert_eq!(
        cfg["config"]["Cmd"],
        serde_json::json!(["catalog", "serve", "/configs"])
    );
    assert_eq!(
        cfg["config"]["Labels"]["operators.operatorframework.io.index.configs.v1"],
        "/configs"
    );
    // Run what the image holds: its entrypoint and command, /configs taken from the unpacked
    // root (no container runtime here).
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    unpack_image(&tag, d.path(), &root);
    let entry = cfg["config"]["Entrypoint"][0].as_str().unwrap();
    let args: Vec<String> = cfg["config"]["Cmd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let a = a.as_str().unwrap();
            if a == "/configs" {
                p(&root.join("configs")).to_string()
            } else {
                a.to_string()
            }
        })
        .collect();
    let mut cmd = Command::new(root.join(entry.trim_start_matches('/')));
    cmd.args(&args).args(["--port", "0"]);
    let server = common::served::run(cmd, true, false);
    let names = served_packages(server.port);
    drop(server);
    let want: Vec<String> = std::fs::read_dir(fixture_catalog())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(names, want);
    // `catalog diff DIR IMAGE`: the pushed catalog is the fixture (exit 0, the same).
    let o = olmctl(&["catalog", "diff", p(&fixture_catalog()), &tag]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "the catalogs are the same\n"
    );
    // `catalog serve IMAGE` pulls the catalog and serves it; SIGTERM stops it (exit 0).
    let mut cmd = Command::new(common::olmctl_bin());
    cmd.args(["catalog", "serve", &tag, "--port", "0"]);
    let mut server = common::served::run(cmd, true, false);
    assert_eq!(served_packages(server.port), want);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    assert_eq!(server.child.wait().unwrap().code(), Some(0));
    // A base that does not run olmctl.
    let o = olmctl(&[
        "catalog",
        "push",
        p(&fixture_catalog()),
        "--base-image",
        &runtime,
        "--serve-with",
        "olmctl",
        "--tag",
        &reg.image("catalog-on-olmctl:bad"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not olmctl: build the base with `olmctl image build"),
        "{}",
        stderr(&o)
    );
}
