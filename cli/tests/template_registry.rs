//! `catalog template` against a real registry (Debian's docker-registry on 127.0.0.1): bundles
//! pushed there render as they do from their directories, the second render pulls nothing
//! (counted in the registry's request log), and missing, unauthorized and wrong-kind images are
//! clear errors with the template line.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::registry::TestRegistry;

fn olmctl(args: &[&str]) -> Output {
    let home = tempfile::tempdir().expect("home");
    Command::new(crate::common::olmctl_bin())
        .args(args)
        .env("HOME", home.path())
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .expect("run")
}

fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

fn bundle(version: &str) -> PathBuf {
    common::fixture_operators().join("kube-green").join(version)
}

/// Pushes a fixture bundle; returns `<repo>@<digest>`.
fn push(reg: &TestRegistry, version: &str) -> String {
    let tag = reg.image(&format!("kube-green/bundle:{version}"));
    ok(&olmctl(&[
        "bundle",
        "build",
        p(&bundle(version)),
        "--tag",
        &tag,
        "--push",
        "--force",
    ]))
    .trim()
    .to_string()
}

fn template(images: &[&str]) -> String {
    let mut s = String::from(
        "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: kube-green\n  defaultChannel: alpha\n- schema: olm.channel\n  package: kube-green\n  name: alpha\n  entries:\n  - name: kube-green.v0.7.0\n  - name: kube-green.v0.7.1\n    replaces: kube-green.v0.7.0\n",
    );
    for i in images {
        s.push_str(&format!("- schema: olm.bundle\n  image: {i}\n"));
    }
    s
}

#[test]
fn registry_bundles_render_like_directories_and_are_cached() {
    let reg = TestRegistry::start_logged();
    let by_digest = push(&reg, "0.7.0");
    push(&reg, "0.7.1");
    let by_tag = reg.image("kube-green/bundle:0.7.1");
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path().join("t.yaml");
    std::fs::write(&t, template(&[&by_digest, &by_tag])).expect("template");
    let map = tmp.path().join("map.yaml");
    std::fs::write(
        &map,
        format!(
            "{by_digest:?}: {:?}\n{by_tag:?}: {:?}\n",
            p(&bundle("0.7.0")),
            p(&bundle("0.7.1"))
        ),
    )
    .expect("map");
    let cache = tmp.path().join("cache");
    let offline = ok(&olmctl(&[
        "catalog",
        "template",
        p(&t),
        "--bundles",
        p(&map),
        "--cache-dir",
        p(&cache),
    ]));
    let before = reg.requests().len();
    let pulled = ok(&olmctl(&[
        "catalog",
        "template",
        p(&t),
        "--cache-dir",
        p(&cache),
    ]));
    assert_eq!(
        pulled, offline,
        "pulled bundles render as their directories do"
    );
    let first: Vec<String> = reg.requests().split_off(before);
    assert!(first.iter().any(|r| r.contains("/blobs/")), "{first:#?}");
    // Second run: the digest-pinned image needs no request at all, the tag one only its manifest.
    let before = reg.requests().len();
    let again = ok(&olmctl(&[
        "catalog",
        "template",
        p(&t),
        "--cache-dir",
        p(&cache),
    ]));
    assert_eq!(again, offline);
    let second: Vec<String> = reg.requests().split_off(before);
    assert!(
        second.iter().all(|r| !r.contains("/blobs/")),
        "no layer pulled again: {second:#?}"
    );
    assert!(
        second
            .iter()
            .all(|r| r.contains("kube-green/bundle/manifests/0.7.1") || r == "GET /v2/"),
        "{second:#?}"
    );
    std::fs::write(&t, template(&[&by_digest])).expect("template");
    let before = reg.requests().len();
    ok(&olmctl(&[
        "catalog",
        "template",
        p(&t),
        "--cache-dir",
        p(&cache),
    ]));
    assert_eq!(
        reg.requests().len(),
        before,
        "a cached digest asks no registry"
    );

    // A missing image: exit 2 with the template line and the image.
    let missing = reg.image("kube-green/bundle:9.9.9");
    std::fs::write(&t, template(&[&by_digest, &missing])).expect("template");
    let o = olmctl(&[
        "catalog",
        "template",
        p(&t),
        "--cache-dir",
        p(&cache),
        "--retries",
        "0",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty());
    assert!(
        err.contains("t.yaml:16:10:") && err.contains(&missing),
        "{err}"
    );

    // A catalog image where a bundle is expected.
    let cat = common::write_tree(&[(
        "kube-green/catalog.yaml",
        &std::fs::read_to_string(common::fixture_catalog().join("kube-green/catalog.yaml"))
            .expect("catalog"),
    )]);
    let cat_ref = reg.image("kube-green/catalog:1");
    ok(&olmctl(&[
        "catalog",
        "push",
        p(cat.path()),
        "--tag",
        &cat_ref,
    ]));
    std::fs::write(&t, template(&[&cat_ref])).expect("template");
    let o = olmctl(&["catalog", "template", p(&t), "--cache-dir", p(&cache)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("t.yaml:14:10:") && err.contains("is a catalog image, not a bundle"),
        "{err}"
    );
}

#[test]
fn unauthorized_registry_is_a_clear_error() {
    let reg = TestRegistry::start_with_auth();
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path().join("t.yaml");
    let image = reg.image("kube-green/bundle:0.7.1");
    std::fs::write(&t, template(&[&image])).expect("template");
    let o = olmctl(&[
        "catalog",
        "template",
        p(&t),
        "--cache-dir",
        p(&tmp.path().join("c")),
        "--retries",
        "0",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty());
    assert!(
        err.contains("t.yaml:14:10:") && err.contains(&image),
        "{err}"
    );
    assert!(
        err.contains("not authorized") && err.contains("--password-stdin"),
        "{err}"
    );
}
