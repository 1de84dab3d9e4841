//! Files read beside the catalog and bundle loaders (issue 28 item 7): the committed catalogs
//! `catalog build --check` and `catalog fmt --check` compare, links leaving the directory a
//! command reads, auth files, OCI layouts and layer trees. Each goes through the input layer:
//! a FIFO, a device, a link leaving the tree or a file over the size limit is an error naming
//! the file (exit 2, or BND001 inside a bundle), never a hang, a 2 GB read or a silent verdict.
//! Every run is a child under an address-space limit and a watchdog (cli/tests/common/bounded.rs).

#![cfg(unix)]

mod common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::bounded::{Run, assert_mentions, run, run_env};
use common::cli::p;
use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use common::{mkfifo, write_tree};

const RSS: u64 = 200 << 20;

const TEMPLATE: &str = "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: demo\n  defaultChannel: stable\n- schema: olm.channel\n  package: demo\n  name: stable\n  entries:\n  - name: demo.v1.2.0\n- schema: olm.bundle\n  image: quay.io/demo/bundle:1\n";

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: demo-operator}\nspec:\n  selector: {matchLabels: {app: demo}}\n  template:\n    metadata: {labels: {app: demo}}\n    spec:\n      containers:\n      - {name: manager, image: 'quay.io/demo/op:1.2.0'}\n";

const CI: &str = "fbc:\n  enabled: true\n  catalog_mapping:\n  - template_name: basic.yaml\n    type: olm.template.basic\n    catalog_names: [v4.18]\n";

/// A community-operators checkout: `operators/demo` (ci.yaml, the template), the demo bundle
/// in `b/` with a map naming it, `catalogs/` as `catalog build` writes it, and `outside/`
/// (beside every tree) holding a copy of each input.
struct Repo {
    tmp: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let tmp = write_tree(&[
            ("operators/demo/ci.yaml", CI),
            ("operators/demo/catalog-templates/basic.yaml", TEMPLATE),
            ("b/manifests/demo.clusterserviceversion.yaml", CSV),
            ("b/manifests/widgets.crd.yaml", CRD),
            ("b/metadata/annotations.yaml", ANNOTATIONS),
            ("map.yaml", "quay.io/demo/bundle:1: b\n"),
            ("outside/ci.yaml", CI),
            ("outside/basic.yaml", TEMPLATE),
            ("outside/widgets.crd.yaml", CRD),
        ]);
        let r = Repo { tmp };
        let o = r.build(&[]);
        assert_eq!(o.bounded(RSS), 0, "{o:?}");
        std::fs::copy(r.catalog(), r.path("outside/catalog.yaml")).expect("copy");
        r
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// The committed catalog `catalog build` writes.
    fn catalog(&self) -> PathBuf {
        self.path("catalogs/v4.18/demo/catalog.yaml")
    }

    fn build(&self, extra: &[&str]) -> Run {
        let (pkg, map) = (self.path("operators/demo"), self.path("map.yaml"));
        let mut args = vec!["catalog", "build", p(&pkg), "--bundles", p(&map)];
        args.extend_from_slice(extra);
        run(&args)
    }
}

/// The cases that did not end as expected, reported all at once.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    /// Expects `o` to exit with `code` by itself, printing every needle.
    fn expect(&mut self, what: &str, o: Run, code: i32, needles: &[&str]) {
        let all = format!("{}{}", o.stdout, o.stderr);
        if o.hung || o.code != Some(code) || !needles.iter().all(|n| all.contains(n)) {
            self.0.push(format!("{what}: {o:?}"));
        } else {
            o.bounded(RSS);
        }
    }

    #[track_caller]
    fn assert_none(self) {
        assert!(
            self.0.is_empty(),
            "{} failed:\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

/// Replaces `f` (a file) with what `make` puts there.
fn replace(f: &Path, make: &dyn Fn(&Path)) {
    if f.is_dir() {
        std::fs::remove_dir_all(f).expect("rm");
    } else {
        let _ = std::fs::remove_file(f);
    }
    make(f);
}

fn link_to(target: &Path) -> impl Fn(&Path) + '_ {
    move |f| symlink(target, f).expect("link")
}

/// Puts something at a path.
type Make<'a> = Box<dyn Fn(&Path) + 'a>;

/// What the committed file may be instead of a regular file, with what the error names.
fn hostile(outside: &Path) -> Vec<(&'static str, Make<'_>, &'static str)> {
    vec![
        (
            "link to /dev/zero",
            Box::new(link_to(Path::new("/dev/zero"))),
            "symbolic link",
        ),
        ("FIFO", Box::new(mkfifo), "FIFO"),
        (
            "link out of the tree to the right content",
            Box::new(link_to(outside)),
            "symbolic link",
        ),
        (
            "directory",
            Box::new(|f: &Path| std::fs::create_dir(f).expect("mkdir")),
            "directory",
        ),
        (
            "3 GB sparse file",
            Box::new(|f: &Path| {
                let file = std::fs::File::create(f).expect("create");
                file.set_len(3 << 30).expect("sparse");
            }),
            "--max-file-size",
        ),
    ]
}

/// `catalog build --check` and `catalog fmt --check` read the committed catalog as every input
/// is read (and, as the writer, through no link): each hostile file is exit 2 naming it and
/// what to do. Before, the check read it with `std::fs::read`: /dev/zero until memory ran out,
/// a FIFO forever, any error as "differs" (exit 1), a link as its target.
#[test]
fn check_modes_read_the_committed_catalog_through_the_input_layer() {
    let r = Repo::new();
    // The controls: equal passes, missing is said so.
    let o = r.build(&["--check"]);
    assert_eq!(o.bounded(RSS), 0, "{o:?}");
    std::fs::remove_file(r.catalog()).expect("rm");
    let o = r.build(&["--check"]);
    assert_eq!(o.bounded(RSS), 1, "{o:?}");
    assert_mentions(&o, &["catalog.yaml is missing"]);
    let outside = r.path("outside/catalog.yaml");
    let mut failed = Failures::default();
    for (what, make, needle) in hostile(&outside) {
        replace(&r.catalog(), &*make);
        let needles = ["v4.18/demo/catalog.yaml", needle, "olmctl catalog build"];
        failed.expect(
            &format!("build --check, {what}"),
            r.build(&["--check"]),
            2,
            &needles,
        );
    }
    // A link inside the tree is refused too: `catalog build` would not write through it.
    replace(&r.path("catalogs/v4.18/demo"), &|d: &Path| {
        std::fs::create_dir(d).expect("mkdir");
        std::fs::copy(&outside, d.join("copy.yaml")).expect("copy");
        symlink("copy.yaml", d.join("catalog.yaml")).expect("link");
    });
    let o = r.build(&["--check"]);
    failed.expect(
        "build --check, link inside the tree",
        o,
        2,
        &["symbolic link"],
    );

    // catalog fmt --check: the catalog's content is in other.yaml, the canonical file is
    // hostile (the loader skips FIFOs and links to devices, as opm does).
    let cat = write_tree(&[]);
    let text = std::fs::read_to_string(&outside).expect("catalog");
    std::fs::create_dir(cat.path().join("demo")).expect("mkdir");
    std::fs::write(cat.path().join("demo/other.yaml"), &text).expect("write");
    let canonical = cat.path().join("demo/catalog.yaml");
    for (what, make, needle) in hostile(&outside) {
        if what.contains("sparse") || what.contains("out of the tree") {
            continue; // the loader refuses both before fmt compares
        }
        replace(&canonical, &*make);
        let o = run(&["catalog", "fmt", "--check", p(cat.path())]);
        let needles = ["demo/catalog.yaml", needle, "olmctl catalog fmt"];
        failed.expect(&format!("fmt --check, {what}"), o, 2, &needles);
    }
    failed.assert_none();
}

/// A file found in a directory a command reads (a catalog, a bundle, a package with its
/// ci.yaml and templates, a manifests directory, gate's objects) is read only when it resolves inside that
/// directory: a link committed to a repository may point anywhere (and an image built from the
/// directory keeps the link, not the file). Before, every reader followed it.
#[test]
fn links_leaving_the_tree_are_refused_by_every_reader() {
    let r = Repo::new();
    let out = |f: &str| r.path("outside").join(f);
    let mut failed = Failures::default();
    // A catalog directory.
    let cat = write_tree(&[]);
    std::fs::create_dir(cat.path().join("demo")).expect("mkdir");
    symlink(out("catalog.yaml"), cat.path().join("demo/catalog.yaml")).expect("link");
    let o = run(&["catalog", "validate", p(cat.path())]);
    failed.expect("catalog validate", o, 2, &["demo/catalog.yaml", "outside"]);
    // A bundle directory: BND001, and nothing of the linked file is rendered.
    let crd = r.path("b/manifests/widgets.crd.yaml");
    replace(&crd, &link_to(&out("widgets.crd.yaml")));
    let o = run(&["bundle", "validate", p(&r.path("b"))]);
    failed.expect(
        "bundle validate",
        o,
        1,
        &["BND001", "widgets.crd.yaml", "outside"],
    );
    let o = run(&["catalog", "render", p(&r.path("b"))]);
    failed.expect("catalog render", o, 2, &["widgets.crd.yaml", "outside"]);
    replace(&crd, &|f: &Path| std::fs::write(f, CRD).expect("write"));
    // catalog build: ci.yaml, then a template.
    for (rel, target) in [
        ("operators/demo/ci.yaml", "ci.yaml"),
        ("operators/demo/catalog-templates/basic.yaml", "basic.yaml"),
    ] {
        let f = r.path(rel);
        replace(&f, &link_to(&out(target)));
        failed.expect(
            &format!("catalog build, {rel}"),
            r.build(&["--check"]),
            2,
            &[rel, "outside"],
        );
        replace(&f, &|f: &Path| {
            std::fs::copy(out(target), f).map(|_| ()).expect("copy")
        });
    }
    // bundle generate --manifests DIR.
    let m = write_tree(&[("csv.yaml", CSV), ("deploy.yaml", DEPLOYMENT)]);
    symlink(out("widgets.crd.yaml"), m.path().join("crd.yaml")).expect("link");
    let dest = m.path().join("out");
    let o = run(&[
        "bundle",
        "generate",
        "--manifests",
        p(m.path()),
        "--package",
        "demo",
        "--version",
        "1.2.0",
        "--channels",
        "stable",
        "-O",
        p(&dest),
    ]);
    failed.expect(
        "bundle generate --manifests",
        o,
        2,
        &["crd.yaml", "outside"],
    );
    // check history: the package's ci.yaml.
    let pkg = write_tree(&[
        ("1.2.0/manifests/demo.clusterserviceversion.yaml", CSV),
        ("1.2.0/manifests/widgets.crd.yaml", CRD),
        ("1.2.0/metadata/annotations.yaml", ANNOTATIONS),
    ]);
    symlink(out("ci.yaml"), pkg.path().join("ci.yaml")).expect("link");
    let o = run(&["check", "history", p(pkg.path())]);
    failed.expect("check history", o, 2, &["ci.yaml", "outside"]);
    // gate evaluate -f DIR.
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ns}\n";
    let policy = "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {name: p, namespace: ns}\nspec:\n  selector: {matchLabels: {}}\n";
    let g = write_tree(&[
        ("policy.yaml", policy),
        ("objects/a.yaml", cm),
        ("cm.yaml", cm),
    ]);
    symlink(g.path().join("cm.yaml"), g.path().join("objects/b.yaml")).expect("link");
    let (pol, objects) = (g.path().join("policy.yaml"), g.path().join("objects"));
    let o = run(&["gate", "evaluate", "--policy", p(&pol), "-f", p(&objects)]);
    failed.expect("gate evaluate -f", o, 2, &["objects/b.yaml", "outside"]);
    failed.assert_none();
}

/// Auth files, an OCI layout's index.json, the trees of a bundle image and of `image build
/// --layer`, and the files a bundle's size is computed from: each read through the input
/// layer. Before, an auth file that is a FIFO hung the pull before any connection, index.json
/// likewise, and the other files were read whole whatever their size.
#[test]
fn auth_layout_layer_and_size_files_are_read_through_the_input_layer() {
    let r = Repo::new();
    let mut failed = Failures::default();
    // Auth files: read before the registry (nothing listens on port 9) is reached.
    let env = write_tree(&[]);
    let fifo = env.path().join("auth.json");
    mkfifo(&fifo);
    std::fs::create_dir(env.path().join("docker")).expect("mkdir");
    symlink("/dev/zero", env.path().join("docker/config.json")).expect("link");
    let unpack = ["bundle", "unpack", "127.0.0.1:9/demo:1", "--retries", "0"];
    let home = p(env.path());
    for (var, value, needle) in [
        ("REGISTRY_AUTH_FILE", p(&fifo), "FIFO"),
        (
            "DOCKER_CONFIG",
            p(&env.path().join("docker")),
            "character device",
        ),
    ] {
        let dest = env.path().join("out");
        let mut args = unpack.to_vec();
        args.push(p(&dest));
        let o = run_env(&args, &[("HOME", home), (var, value)]);
        failed.expect(var, o, 2, &[needle, "auth file"]);
    }
    // An OCI layout whose index.json is a FIFO.
    let layout = write_tree(&[("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}")]);
    mkfifo(&layout.path().join("index.json"));
    let bundle = r.path("b");
    let b = p(&bundle);
    let bundle_build = |layout: &Path, extra: &[&str]| {
        let mut args = vec![
            "bundle",
            "build",
            b,
            "-t",
            "demo:1",
            "--oci-layout",
            p(layout),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = bundle_build(layout.path(), &[]);
    failed.expect("bundle build --oci-layout", o, 2, &["index.json", "FIFO"]);
    // A file over the size limit in a bundle's manifests/ subdirectory (copied into the image,
    // not loaded; BND002, hence --force) and in an `image build --layer` tree.
    let big = "x".repeat(100 << 10);
    std::fs::create_dir(r.path("b/manifests/extra")).expect("mkdir");
    std::fs::write(r.path("b/manifests/extra/big.txt"), &big).expect("write");
    let dest = write_tree(&[]);
    let o = bundle_build(dest.path(), &["--force", "--max-file-size", "64K"]);
    failed.expect(
        "bundle build, large file",
        o,
        2,
        &["big.txt", "64 KiB", "--max-file-size"],
    );
    let root = write_tree(&[("etc/big.txt", &big), ("bin/op", "#!/bin/sh\n")]);
    let o = run(&[
        "image",
        "build",
        "--base-image",
        "scratch",
        "--binary",
        p(&root.path().join("bin/op")),
        "--layer",
        p(&root.path().join("etc")),
        "--tag",
        "op:1",
        "--oci-layout",
        p(&dest.path().join("img")),
        "--max-file-size",
        "64K",
    ]);
    failed.expect(
        "image build --layer, large file",
        o,
        2,
        &["big.txt", "64 KiB", "--max-file-size"],
    );
    // The bundle size check reads every file below the bundle: one over the limit is BND001.
    let noise: Vec<u8> = (0..2u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(r.path("b/manifests/extra/big.txt"), &noise).expect("write");
    let o = run(&["bundle", "validate", b, "--max-file-size", "1M"]);
    failed.expect(
        "bundle validate, size",
        o,
        1,
        &["BND001", "big.txt", "1 MiB", "--max-file-size"],
    );
    failed.assert_none();
}
