//! The catalog commands on the certified-operators cases of `shared/fixtures/first-day`
//! (issue 40): a package published under a directory not named after it (isovalent-networking
//! holds package `clife`), and what opm users reach for.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{code, olmctl, p};
use common::{copy_tree, shared_fixtures};
use olmctl::bundle::load::str_at;
use olmctl::bundle::render::{ObjectMode, render_dir};

fn first_day() -> PathBuf {
    shared_fixtures().join("first-day")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The committed isovalent-networking catalog (package `clife`).
fn isovalent_catalog() -> PathBuf {
    first_day().join("catalogs/v4.21/isovalent-networking/catalog.yaml")
}

/// A `--bundles` map from every bundle image of the committed catalog to its fixture bundle
/// directory (matched by the CSV name the directory renders).
fn isovalent_map(at: &Path) -> PathBuf {
    let text = std::fs::read_to_string(isovalent_catalog()).expect("catalog");
    let mut images = HashMap::new();
    olmctl::fbc::yaml::parse_documents(&text, |n| {
        if str_at(&n, &["schema"]) == Some("olm.bundle") {
            images.insert(
                str_at(&n, &["name"]).unwrap_or_default().to_string(),
                str_at(&n, &["image"]).unwrap_or_default().to_string(),
            );
        }
    })
    .expect("yaml");
    let mut map = String::new();
    let ops = first_day().join("operators/isovalent-networking");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&ops)
        .expect("operators")
        .map(|e| e.expect("entry").path())
        .filter(|d| d.join("manifests").is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        let r = render_dir(&d, "", ObjectMode::BundleObjects).expect("bundle renders");
        if let Some(img) = images.remove(&r.name) {
            map.push_str(&format!("{img}: {}\n", d.display()));
        }
    }
    assert!(images.is_empty(), "bundles without a directory: {images:?}");
    let file = at.join("map.yaml");
    std::fs::write(&file, map).expect("map");
    file
}

/// `operators/isovalent-networking` (its template) with ci.yaml mapping it to v4.21 only.
fn isovalent_operator(root: &Path) -> PathBuf {
    isovalent_operator_for(root, "[v4.21]")
}

/// `operators/isovalent-networking` with ci.yaml mapping its template to `catalogs`.
fn isovalent_operator_for(root: &Path, catalogs: &str) -> PathBuf {
    let op = root.join("operators/isovalent-networking");
    copy_tree(
        &first_day().join("operators/isovalent-networking/catalog-templates"),
        &op.join("catalog-templates"),
    );
    std::fs::write(
        op.join("ci.yaml"),
        format!(
            "fbc:\n  enabled: true\n  catalog_mapping:\n  - template_name: template.yaml\n    \
         catalog_names: {catalogs}\n    type: olm.template.basic\n"
        ),
    )
    .expect("ci.yaml");
    op
}

#[test]
fn build_writes_a_package_under_its_operator_directory_whatever_its_name() {
    let t = tempfile::tempdir().expect("tmp");
    let op = isovalent_operator(t.path());
    let map = isovalent_map(t.path());
    // The committed catalog is current: --check passes.
    let committed = first_day().join("catalogs");
    let o = olmctl(&[
        "catalog",
        "build",
        p(&op),
        "--check",
        "--catalogs-dir",
        p(&committed),
        "--bundles",
        p(&map),
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Written: under isovalent-networking/, as the pipeline writes it, byte for byte.
    let cats = t.path().join("catalogs");
    let o = olmctl(&[
        "catalog",
        "build",
        p(&op),
        "--catalogs-dir",
        p(&cats),
        "--bundles",
        p(&map),
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let written = cats.join("v4.21/isovalent-networking/catalog.yaml");
    assert_eq!(
        std::fs::read(&written).expect("written"),
        std::fs::read(isovalent_catalog()).expect("committed")
    );
    assert!(!cats.join("v4.21/clife").exists(), "no directory renamed");
}

#[test]
fn fmt_keeps_a_package_in_a_directory_not_named_after_it() {
    let t = tempfile::tempdir().expect("tmp");
    let cat = t.path().join("v4.21");
    copy_tree(
        &first_day().join("catalogs/v4.21/isovalent-networking"),
        &cat.join("isovalent-networking"),
    );
    // Already canonical where it is.
    let o = olmctl(&["catalog", "fmt", "--check", p(&cat)]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(err(&o), "");
    // Rewritten in place: the same file in the same directory, nothing renamed.
    let o = olmctl(&["catalog", "fmt", p(&cat)]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let files = olmctl::fbc::load::list_files(&cat).expect("list");
    assert_eq!(files, [cat.join("isovalent-networking/catalog.yaml")]);
    assert_eq!(
        std::fs::read(&files[0]).expect("read"),
        std::fs::read(isovalent_catalog()).expect("committed")
    );
    // A file in the directory that is not canonical: --check names files that exist (the
    // one to remove) and the one it would create there.
    let committed = std::fs::read_to_string(isovalent_catalog()).expect("committed");
    std::fs::rename(&files[0], cat.join("isovalent-networking/clife.yaml")).expect("mv");
    let o = olmctl(&["catalog", "fmt", "--check", p(&cat)]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    let want = format!(
        "would create: {}\nwould remove: {} (not a canonical file)\n",
        cat.join("isovalent-networking/catalog.yaml").display(),
        cat.join("isovalent-networking/clife.yaml").display()
    );
    assert_eq!(err(&o), want);
    let o = olmctl(&["catalog", "fmt", p(&cat)]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(cat.join("isovalent-networking/catalog.yaml")).expect("read"),
        committed
    );
    assert!(!cat.join("clife").exists());
    let _ = stdout(&o);
}

#[test]
fn fmt_says_when_a_package_leaves_a_shared_directory() {
    let committed = std::fs::read_to_string(isovalent_catalog()).expect("committed");
    // A second package in the same directory: one directory per package, the move is said.
    let other = "---\nschema: olm.package\nname: zeta\n";
    let t = common::write_tree(&[
        ("isovalent-networking/catalog.yaml", &committed),
        ("isovalent-networking/zeta.yaml", other),
    ]);
    let o = olmctl(&["catalog", "fmt", "--check", p(t.path())]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    assert!(
        err(&o).starts_with(
            "note: package zeta moves from isovalent-networking/ to zeta/ (one directory per \
             package; isovalent-networking/ holds package clife)\n"
        ),
        "{}",
        err(&o)
    );
    let o = olmctl(&["catalog", "fmt", p(t.path())]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("note: package zeta moves"), "{}", err(&o));
    assert!(t.path().join("zeta/catalog.yaml").is_file());
    assert_eq!(
        std::fs::read_to_string(t.path().join("isovalent-networking/catalog.yaml")).expect("read"),
        committed
    );
}

#[test]
fn graph_takes_its_format_as_o_and_output_as_every_command_does() {
    let cat = first_day().join("catalogs/v4.21/hulft");
    let by_format = olmctl(&["catalog", "graph", p(&cat), "--format", "mermaid"]);
    assert_eq!(code(&by_format), 0, "{}", err(&by_format));
    assert!(
        stdout(&by_format).contains("graph LR"),
        "{}",
        stdout(&by_format)
    );
    for flag in ["-o", "--output"] {
        let o = olmctl(&["catalog", "graph", p(&cat), flag, "mermaid"]);
        assert_eq!(code(&o), 0, "{flag}: {}", err(&o));
        assert_eq!(o.stdout, by_format.stdout, "{flag}");
    }
}

#[test]
fn bundle_render_needs_no_olmv1_flag_and_the_two_renders_name_each_other() {
    let b = first_day().join("operators/isovalent-networking/v1.18.6-cee.2");
    let with = olmctl(&[
        "bundle",
        "render",
        p(&b),
        "--olmv1",
        "--install-namespace",
        "ns",
    ]);
    assert_eq!(code(&with), 0, "{}", err(&with));
    let without = olmctl(&["bundle", "render", p(&b), "--install-namespace", "ns"]);
    assert_eq!(code(&without), 0, "{}", err(&without));
    assert_eq!(without.stdout, with.stdout);
    assert!(stdout(&without).contains("kind: Deployment"));
    let help = stdout(&olmctl(&["bundle", "render", "--help"]));
    assert!(help.contains("see `catalog render`"), "{help}");
    let help = stdout(&olmctl(&["catalog", "render", "--help"]));
    assert!(help.contains("see `bundle render`"), "{help}");
    let help = stdout(&olmctl(&["bundle", "--help"]));
    assert!(help.contains("Kubernetes objects"), "{help}");
}

#[test]
fn build_check_says_missing_and_shows_the_difference_as_a_unified_diff() {
    let t = tempfile::tempdir().expect("tmp");
    let op = isovalent_operator_for(t.path(), "[v4.20, v4.21]");
    let map = isovalent_map(t.path());
    // v4.20 has no catalog; v4.21's has one line edited by hand.
    let cats = t.path().join("catalogs");
    let committed = std::fs::read_to_string(isovalent_catalog()).expect("committed");
    let edited = committed.replacen(
        "  skipRange: '>=1.16.17-cee.1 <1.16.19-cee.1'\n",
        "  skipRange: '>=1.16.0 <1.16.19-cee.1'\n",
        1,
    );
    assert_ne!(edited, committed);
    let v421 = cats.join("v4.21/isovalent-networking/catalog.yaml");
    std::fs::create_dir_all(v421.parent().expect("dir")).expect("mkdir");
    std::fs::write(&v421, &edited).expect("write");
    let o = olmctl(&[
        "catalog",
        "build",
        p(&op),
        "--check",
        "--catalogs-dir",
        p(&cats),
        "--bundles",
        p(&map),
    ]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    let template = op.join("catalog-templates/template.yaml");
    let v420 = cats.join("v4.20/isovalent-networking/catalog.yaml");
    let e = err(&o);
    assert!(
        e.contains(&format!(
            "error: {} is missing: {} renders it\n",
            v420.display(),
            template.display()
        )),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "error: {} differs from what {} renders\n",
            v421.display(),
            template.display()
        )),
        "{e}"
    );
    assert!(e.contains("2 catalogs are out of date"), "{e}");
    // The difference: the edited line of the committed file (line 46) back to the template's,
    // with three lines of context, both sides named by the catalog's path.
    let v = v421.display();
    let want = [
        format!("--- {v}"),
        format!("+++ {v}"),
        "@@ -43,7 +43,7 @@".into(),
        " - name: clife.v1.16.17-cee.1".into(),
        " - name: clife.v1.16.19-cee.1".into(),
        "   replaces: clife.v1.16.17-cee.1".into(),
        "-  skipRange: '>=1.16.0 <1.16.19-cee.1'".into(),
        "+  skipRange: '>=1.16.17-cee.1 <1.16.19-cee.1'".into(),
        " - name: clife.v1.16.20-cee.1".into(),
        "   replaces: clife.v1.16.19-cee.1".into(),
        "   skipRange: '>=1.16.17-cee.1 <1.16.20-cee.1'".into(),
    ];
    assert_eq!(stdout(&o), format!("{}\n", want.join("\n")));
}

#[test]
fn images_are_read_from_the_oci_layouts_olmctl_writes_by_reference() {
    let t = tempfile::tempdir().expect("tmp");
    let bundle = first_day().join("operators/isovalent-networking/v1.18.6-cee.2");
    let catalog = first_day().join("catalogs/v4.21/hulft");
    let bl = t.path().join("bundles");
    let cl = t.path().join("catalogs");
    let o = olmctl(&[
        "bundle",
        "build",
        p(&bundle),
        "--tag",
        "quay.io/x/clife-bundle:1.18.6",
        "--oci-layout",
        p(&bl),
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let o = olmctl(&[
        "catalog",
        "push",
        p(&catalog),
        "--tag",
        "quay.io/x/cat:1.30.0",
        "--oci-layout",
        p(&cl),
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let by_tag = |layout: &Path, tag: &str| format!("oci:{}:{tag}", layout.display());
    // A bundle: the same blob as its directory renders (neither has a registry name).
    let dir = olmctl(&["catalog", "render", p(&bundle)]);
    assert_eq!(code(&dir), 0, "{}", err(&dir));
    for r in [
        by_tag(&bl, "1.18.6"),
        format!("oci:{}", bl.display()),
        by_tag(&bl, "@0"),
    ] {
        let o = olmctl(&["catalog", "render", &r]);
        assert_eq!(code(&o), 0, "{r}: {}", err(&o));
        assert_eq!(stdout(&o), stdout(&dir), "{r}");
    }
    // bundle validate reads the image as its directory: the same findings, by code and message.
    let findings = |o: &std::process::Output| -> Vec<(String, String)> {
        let v: serde_json::Value = serde_json::from_str(&stdout(o)).expect("JSON");
        v["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                (
                    f["code"].as_str().unwrap_or_default().to_string(),
                    f["message"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    let dir = olmctl(&["bundle", "validate", p(&bundle), "-o", "json"]);
    let image = olmctl(&["bundle", "validate", &by_tag(&bl, "1.18.6"), "-o", "json"]);
    assert_eq!(code(&image), code(&dir), "{}", err(&image));
    assert!(!findings(&dir).is_empty());
    assert_eq!(findings(&image), findings(&dir));
    let v: serde_json::Value = serde_json::from_str(&stdout(&image)).expect("JSON");
    let file = v["findings"][0]["file"].as_str().unwrap_or_default();
    assert!(
        file.starts_with(&format!("{}/", by_tag(&bl, "1.18.6"))),
        "an image's files are named by its reference, not a scratch directory: {file}"
    );
    // A catalog: its FBC, as the directory renders through fmt's canonical form.
    let o = olmctl(&["catalog", "render", &by_tag(&cl, "1.30.0"), "-o", "yaml"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(catalog.join("catalog.yaml")).expect("committed")
    );
    // catalog pull and bundle unpack read them too.
    let pulled = t.path().join("pulled");
    let o = olmctl(&["catalog", "pull", &by_tag(&cl, "1.30.0"), p(&pulled)]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read(pulled.join("hulft/catalog.yaml")).expect("pulled"),
        std::fs::read(catalog.join("catalog.yaml")).expect("committed")
    );
    let unpacked = t.path().join("unpacked");
    let o = olmctl(&["bundle", "unpack", &by_tag(&bl, "1.18.6"), p(&unpacked)]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        unpacked
            .join("manifests/clife.clusterserviceversion.yaml")
            .is_file()
    );
    // A bundle is not a catalog; a name the layout does not hold, a directory that is no layout.
    let o = olmctl(&[
        "catalog",
        "pull",
        &by_tag(&bl, "1.18.6"),
        p(&t.path().join("x")),
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        err(&o).contains("is a bundle image, not a catalog"),
        "{}",
        err(&o)
    );
    let o = olmctl(&["catalog", "render", &by_tag(&cl, "nope")]);
    assert_eq!(code(&o), 2);
    assert!(
        err(&o).contains("no single image named \"nope\""),
        "{}",
        err(&o)
    );
    let o = olmctl(&["catalog", "render", &by_tag(&catalog, "1")]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("not an OCI image layout"), "{}", err(&o));
}

#[test]
fn help_names_what_the_readme_documents() {
    let help = |args: &[&str]| stdout(&olmctl(args));
    let template = help(&["catalog", "template", "--help"]);
    for schema in [
        "olm.template.basic",
        "olm.semver",
        "olm.template.substitutes",
    ] {
        assert!(template.contains(schema), "{schema}: {template}");
    }
    for args in [
        &["catalog", "template", "--help"][..],
        &["catalog", "build", "--help"][..],
        &["check", "catalog", "--help"][..],
    ] {
        let h = help(args);
        let bundles = &h[h.find("--bundles <").expect("--bundles")..];
        let bundles = &bundles[..bundles.find("\n\n").unwrap_or(bundles.len())];
        assert!(bundles.contains("OCI image layout"), "{args:?}: {bundles}");
    }
    // Every key of the HTML report's URL fragment (what report.js reads from location.hash) is
    // in its --help and in the README.
    let js = std::fs::read_to_string(common::root().join("src/graph/report.js")).expect("js");
    let keys: Vec<&str> = js
        .split("h.get('")
        .skip(1)
        .filter_map(|s| s.split_once('\'').map(|(k, _)| k))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(keys, ["channel", "click", "lane", "package", "q"]);
    let readme = std::fs::read_to_string(common::root().join("README.md")).expect("README");
    let graph = help(&["catalog", "graph", "--help"]);
    for k in keys {
        let link = format!("{k}=");
        assert!(
            readme.contains(&format!("#{link}")) || readme.contains(&format!("&{link}")),
            "{k}"
        );
        assert!(graph.contains(&link), "{k}: {graph}");
    }
}

/// Package foo (one channel, a replaces, a skip and a skipRange) and bar (a channel with two
/// heads: an error for validate and lint).
fn two_packages() -> tempfile::TempDir {
    let bundle = |pkg: &str, name: &str| {
        format!(
            "---\nschema: olm.bundle\npackage: {pkg}\nname: {name}\nimage: quay.io/x/{name}:1\n\
             properties:\n- type: olm.package\n  value:\n    packageName: {pkg}\n    version: {}\n",
            name.rsplit(".v").next().expect("version")
        )
    };
    let foo_text = format!(
        "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\n\
         package: foo\nname: stable\nentries:\n- name: foo.v1.1.0\n  replaces: foo.v1.0.0\n  \
         skips: [foo.v0.9.0, foo.v0.9.1]\n  skipRange: '>=0.9.0 <1.1.0'\n- name: foo.v1.0.0\n{}{}",
        bundle("foo", "foo.v1.0.0"),
        bundle("foo", "foo.v1.1.0")
    );
    let bar_text = format!(
        "---\nschema: olm.package\nname: bar\ndefaultChannel: beta\n---\nschema: olm.channel\n\
         package: bar\nname: beta\nentries:\n- name: bar.v2.0.0\n- name: bar.v1.0.0\n{}{}",
        bundle("bar", "bar.v1.0.0"),
        bundle("bar", "bar.v2.0.0")
    );
    common::write_tree(&[
        ("foo/catalog.yaml", &foo_text),
        ("bar/catalog.yaml", &bar_text),
    ])
}

#[test]
fn ls_lists_channels_and_bundles_as_opm_alpha_list_and_p_narrows_ls_lint_validate() {
    let t = two_packages();
    let d = p(t.path());
    let o = olmctl(&["catalog", "ls", d, "--channels"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        stdout(&o),
        "PACKAGE  CHANNEL  HEAD\n\
         bar      beta     ERROR: multiple channel heads found in graph: bar.v1.0.0, bar.v2.0.0\n\
         foo      stable   foo.v1.1.0\n"
    );
    let o = olmctl(&["catalog", "ls", d, "--bundles", "-p", "foo"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Go's tabwriter (padding 2): each column but the last as wide as its widest cell + 2.
    let row = |c: [&str; 7]| {
        format!(
            "{:<9}{:<9}{:<12}{:<12}{:<23}{:<16}{}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6]
        )
    };
    let want = [
        row([
            "PACKAGE",
            "CHANNEL",
            "BUNDLE",
            "REPLACES",
            "SKIPS",
            "SKIP RANGE",
            "IMAGE",
        ]),
        row([
            "foo",
            "stable",
            "foo.v1.0.0",
            "",
            "",
            "",
            "quay.io/x/foo.v1.0.0:1",
        ]),
        row([
            "foo",
            "stable",
            "foo.v1.1.0",
            "foo.v1.0.0",
            "foo.v0.9.0,foo.v0.9.1",
            ">=0.9.0 <1.1.0",
            "quay.io/x/foo.v1.1.0:1",
        ]),
    ];
    assert_eq!(stdout(&o), want.concat());
    let o = olmctl(&[
        "catalog",
        "ls",
        d,
        "--bundles",
        "--package",
        "foo",
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["bundles"][1]["skipRange"], ">=0.9.0 <1.1.0");
    assert_eq!(v["bundles"][1]["skips"], "foo.v0.9.0,foo.v0.9.1");
    let o = olmctl(&["catalog", "ls", d, "-p", "foo"]);
    assert!(stdout(&o).starts_with("foo  "), "{}", stdout(&o));
    assert!(!stdout(&o).contains("bar"), "{}", stdout(&o));
    // bar's two heads are errors; narrowed to foo there are none.
    for cmd in ["lint", "validate"] {
        assert_eq!(code(&olmctl(&["catalog", cmd, d])), 1, "{cmd}");
        let o = olmctl(&["catalog", cmd, d, "-p", "foo"]);
        assert_eq!(code(&o), 0, "{cmd}: {}", stdout(&o));
        let o = olmctl(&["catalog", cmd, d, "-p", "nope"]);
        assert_eq!(code(&o), 2, "{cmd}");
        assert!(
            err(&o).contains("package \"nope\" not found (packages: bar, foo)"),
            "{}",
            err(&o)
        );
    }
}

#[test]
fn render_passes_a_catalog_directory_through_as_opm_render_writes_it() {
    // The certified catalogs were written by opm (render-template in the pipeline): opm's
    // output for each directory is the committed file itself.
    let v421 = first_day().join("catalogs/v4.21");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&v421)
        .expect("v4.21")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 5);
    for d in &dirs {
        let o = olmctl(&["catalog", "render", p(d), "-o", "yaml"]);
        assert_eq!(code(&o), 0, "{}: {}", d.display(), err(&o));
        assert_eq!(
            o.stdout,
            std::fs::read(d.join("catalog.yaml")).expect("committed"),
            "{}",
            d.display()
        );
    }
    // JSON by default, as opm render: a stream of objects, the same blobs.
    let o = olmctl(&["catalog", "render", p(&dirs[0])]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let objects: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&o.stdout)
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("a JSON stream");
    let yaml = std::fs::read_to_string(dirs[0].join("catalog.yaml")).expect("committed");
    assert_eq!(objects.len(), yaml.matches("\n---\n").count() + 1);
    assert_eq!(objects[0]["schema"], "olm.package");
    assert!(
        stdout(&o).starts_with("{\n    \"schema\": \"olm.package\",\n"),
        "4-space indent"
    );
}

#[test]
fn generate_dockerfile_writes_opms_dockerfile_beside_the_catalog() {
    let t = tempfile::tempdir().expect("tmp");
    copy_tree(&first_day().join("catalogs/v4.21"), &t.path().join("v4.21"));
    let dir = t.path().join("v4.21");
    // opm's template (alpha/action/generate_dockerfile.go) for base and builder `foo` and the
    // directory `v4.21`, with two labels (in key order; the last value of a key wins).
    let want = "# The builder image is expected to contain\n\
                # /bin/opm (with serve subcommand)\n\
                FROM foo as builder\n\
                \n\
                # Copy FBC root into image at /configs and pre-populate serve cache\n\
                ADD v4.21 /configs\n\
                RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\
                \n\
                FROM foo\n\
                # The base image is expected to contain\n\
                # /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\
                \n\
                # Configure the entrypoint and command\n\
                ENTRYPOINT [\"/bin/opm\"]\n\
                CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n\
                \n\
                COPY --from=builder /configs /configs\n\
                COPY --from=builder /tmp/cache /tmp/cache\n\
                \n\
                # Set FBC-specific label for the location of the FBC root directory\n\
                # in the image\n\
                LABEL operators.operatorframework.io.index.configs.v1=/configs\n\
                \n\
                # Set other custom labels\n\
                LABEL \"key1\"=\"value1\"\n\
                LABEL \"key2\"=\"value2\"\n";
    let d = format!("{}/", dir.display());
    let o = olmctl(&[
        "catalog",
        "generate",
        "dockerfile",
        &d,
        "--binary-image",
        "foo",
        "-l",
        "key2=value2,key1=x",
        "--extra-labels",
        "key1=value1",
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let file = t.path().join("v4.21.Dockerfile");
    assert_eq!(std::fs::read_to_string(&file).expect("written"), want);
    // Never over an existing file; the directory must exist.
    let o = olmctl(&["catalog", "generate", "dockerfile", &d]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("file exists"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), want);
    let missing = t.path().join("nope");
    let o = olmctl(&["catalog", "generate", "dockerfile", p(&missing)]);
    assert_eq!(code(&o), 2);
    assert!(!t.path().join("nope.Dockerfile").exists());
    // The default image, -i for the base.
    let o = olmctl(&[
        "catalog",
        "generate",
        "dockerfile",
        p(&dir.join("hulft")),
        "-i",
        "scratch",
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let text = std::fs::read_to_string(dir.join("hulft.Dockerfile")).expect("written");
    assert!(
        text.contains("FROM quay.io/operator-framework/opm:latest as builder\n"),
        "{text}"
    );
    assert!(
        text.contains("FROM scratch\n# OLMv0 CatalogSources"),
        "{text}"
    );
}

/// hulft's z-stream pattern (each minor's last release skipping the one before, as the
/// certified index publishes it) strands nobody: `catalog lint` of the real package is clean.
#[test]
fn hulfts_real_channel_lints_clean() {
    let o = olmctl(&[
        "catalog",
        "lint",
        p(&first_day().join("catalogs/v4.21/hulft")),
        "-o",
        "json",
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["findings"], serde_json::json!([]));
}
