//! `catalog template` against the real community catalog: every fixture package whose ci.yaml
//! maps a template to the v4.18 catalog is rendered offline (bundle images taken from the
//! fixture bundle directories through a `--bundles` map) with the migration the community
//! pipeline applies from v4.17 on, and must give the committed catalog byte for byte.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use olmctl::bundle::load::str_at;
use olmctl::bundle::render::{ObjectMode, render_dir};
use olmctl::fbc::node::{Node, Value};

fn operators() -> PathBuf {
    common::root().join("../shared/fixtures/operators")
}

/// The template ci.yaml maps to `catalog`, with its type.
fn mapped_template(ci: &Path, catalog: &str) -> Option<(String, String)> {
    let text = std::fs::read_to_string(ci).ok()?;
    let mut doc = None;
    olmctl::fbc::yaml::parse_documents(&text, |n| doc = doc.take().or(Some(n))).ok()?;
    let doc: Node = doc?;
    let mapping = olmctl::bundle::load::list_at(&doc, &["fbc", "catalog_mapping"]);
    mapping.iter().find_map(|m| {
        let names = olmctl::bundle::load::list_at(m, &["catalog_names"]);
        names
            .iter()
            .any(|n| n.value == Value::Str(catalog.into()))
            .then(|| {
                (
                    str_at(m, &["template_name"])
                        .unwrap_or_default()
                        .to_string(),
                    str_at(m, &["type"]).unwrap_or_default().to_string(),
                )
            })
    })
}

/// Bundle name → image, from the committed catalog.
fn catalog_images(file: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(file).expect("catalog");
    let mut out = HashMap::new();
    olmctl::fbc::yaml::parse_documents(&text, |n| {
        if str_at(&n, &["schema"]) == Some("olm.bundle") {
            out.insert(
                str_at(&n, &["name"]).unwrap_or_default().to_string(),
                str_at(&n, &["image"]).unwrap_or_default().to_string(),
            );
        }
    })
    .expect("yaml");
    out
}

#[test]
fn templates_render_the_committed_catalogs() {
    // Bundle directories by package, keyed by CSV name.
    let mut by_pkg: BTreeMap<String, HashMap<String, PathBuf>> = BTreeMap::new();
    for (pkg, dir) in common::fixture_bundle_dirs() {
        if let Ok(r) = render_dir(&dir, "", ObjectMode::BundleObjects) {
            by_pkg.entry(pkg).or_default().insert(r.name, dir);
        }
    }
    let mut results: BTreeMap<String, String> = BTreeMap::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(operators()).expect("operators") {
        let pkg_dir = entry.expect("entry").path();
        let pkg = pkg_dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let Some((template, kind)) = mapped_template(&pkg_dir.join("ci.yaml"), "v4.18") else {
            continue;
        };
        let committed = common::fixture_catalog().join(&pkg).join("catalog.yaml");
        if !committed.exists() {
            continue;
        }
        checked += 1;
        let images = catalog_images(&committed);
        let dirs = by_pkg.get(&pkg).cloned().unwrap_or_default();
        let tmp = tempfile::tempdir().expect("tmp");
        let map: String = images
            .iter()
            .filter_map(|(name, image)| {
                dirs.get(name)
                    .map(|d| format!("{:?}: {:?}\n", image, d.display().to_string()))
            })
            .collect();
        let map_file = tmp.path().join("bundles.yaml");
        std::fs::write(&map_file, map).expect("map");
        let file = pkg_dir.join("catalog-templates").join(&template);
        let o = std::process::Command::new(crate::common::olmctl_bin())
            .args(["catalog", "template"])
            .arg(&file)
            .arg("--bundles")
            .arg(&map_file)
            .args([
                "--migrate-level",
                "bundle-object-to-csv-metadata",
                "-o",
                "yaml",
            ])
            .output()
            .expect("run");
        let want = std::fs::read(&committed).expect("committed");
        let verdict = if o.status.code() != Some(0) {
            format!(
                "{kind}: exit {:?}: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            )
        } else if o.stdout == want {
            "equal".to_string()
        } else {
            match without_dangling_entries(&o.stdout) {
                Some((text, names)) if text.as_bytes() == want => format!(
                    "equal once the channel entries naming bundles the template does not list are dropped ({}): the committed catalog predates those entries",
                    names.join(", ")
                ),
                _ => format!("{kind}: differs"),
            }
        };
        results.insert(pkg, verdict);
    }
    let equal = results.values().filter(|v| *v == "equal").count();
    println!("templates: {equal} of {checked} render the committed v4.18 catalog byte for byte");
    for (p, v) in &results {
        println!("  {p}: {v}");
    }
    assert!(checked >= 10, "fixture coverage: {checked}");
    // Every template must match, or differ only by channel entries the template names without
    // listing their bundles.
    let failures: Vec<(&String, &String)> = results
        .iter()
        .filter(|(_, v)| !v.starts_with("equal"))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The rendered catalog without channel entries that name no bundle of it, in canonical YAML,
/// and the names dropped; `None` when there are none.
fn without_dangling_entries(rendered: &[u8]) -> Option<(String, Vec<String>)> {
    let text = std::str::from_utf8(rendered).ok()?;
    let mut cfg = olmctl::fbc::decl::DeclarativeConfig::default();
    let file: std::sync::Arc<Path> = std::sync::Arc::from(Path::new("rendered.yaml"));
    let problems = olmctl::fbc::load::parse_text(text, &file, &mut cfg);
    assert!(problems.is_empty(), "{problems:?}");
    let bundles: std::collections::HashSet<String> =
        cfg.bundles.iter().map(|b| b.name.clone()).collect();
    let mut dropped = Vec::new();
    for c in &mut cfg.channels {
        c.entries.retain(|e| {
            let keep = bundles.contains(&e.name);
            if !keep {
                dropped.push(e.name.clone());
            }
            keep
        });
    }
    if dropped.is_empty() {
        return None;
    }
    let out = olmctl::fbc::write::canonical_text(&cfg, olmctl::fbc::write::Format::Yaml);
    Some((out, dropped))
}

/// A `--bundles` map of `pkg`'s bundle directories under the images the v4.18 catalog names.
fn fixture_map(pkg: &str, into: &Path) -> PathBuf {
    let images = catalog_images(&common::fixture_catalog().join(pkg).join("catalog.yaml"));
    let map: String = common::fixture_bundle_dirs()
        .into_iter()
        .filter(|(p, _)| p == pkg)
        .filter_map(|(_, d)| {
            let r = render_dir(&d, "", ObjectMode::BundleObjects).ok()?;
            let image = images.get(&r.name)?;
            Some(format!("{:?}: {:?}\n", image, d.display().to_string()))
        })
        .collect();
    let f = into.join("bundles.yaml");
    std::fs::write(&f, map).expect("map");
    f
}

/// `catalog build`: every catalog of kube-green's ci.yaml (v4.15 to v4.21), the v4.18 one equal to
/// the committed catalog, olm.bundle.object before v4.17 and olm.csv.metadata from it on;
/// `--check` passes on what was written and fails once a catalog is edited.
#[test]
fn build_writes_every_mapped_catalog_and_checks_them() {
    let tmp = tempfile::tempdir().expect("tmp");
    let map = fixture_map("kube-green", tmp.path());
    let cats = tmp.path().join("catalogs");
    let run = |extra: &[&str]| {
        std::process::Command::new(crate::common::olmctl_bin())
            .args(["catalog", "build"])
            .arg(operators().join("kube-green"))
            .arg("--catalogs-dir")
            .arg(&cats)
            .arg("--bundles")
            .arg(&map)
            .args(extra)
            .output()
            .expect("run")
    };
    let o = run(&[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut written: Vec<String> = std::fs::read_dir(&cats)
        .expect("catalogs")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "v4.21"
        ]
    );
    let read = |v: &str| {
        std::fs::read_to_string(cats.join(v).join("kube-green/catalog.yaml")).expect("catalog")
    };
    assert_eq!(
        read("v4.18"),
        std::fs::read_to_string(common::fixture_catalog().join("kube-green/catalog.yaml"))
            .expect("fixture")
    );
    assert!(
        read("v4.16").contains("olm.bundle.object") && !read("v4.16").contains("olm.csv.metadata")
    );
    assert!(
        read("v4.17").contains("olm.csv.metadata") && !read("v4.17").contains("olm.bundle.object")
    );
    assert_eq!(run(&["--check"]).status.code(), Some(0));
    let f = cats.join("v4.20/kube-green/catalog.yaml");
    std::fs::write(
        &f,
        read("v4.20").replace("kube-green.v0.7.0", "kube-green.v0.7.0x"),
    )
    .expect("edit");
    let o = run(&["--check"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("v4.20/kube-green/catalog.yaml differs"));
}

/// `catalog template convert`: the committed kube-green and shipwright-operator templates are
/// what `opm alpha convert-template basic` wrote, and converting their v4.18 catalogs gives
/// them back byte for byte; the converted template renders the catalog again.
#[test]
fn convert_gives_back_the_committed_templates() {
    let olmctl = |args: &[&str]| {
        std::process::Command::new(crate::common::olmctl_bin())
            .args(args)
            .output()
            .expect("run")
    };
    for (pkg, template) in [
        ("kube-green", "basic-template.yaml"),
        ("shipwright-operator", "basic.yaml"),
    ] {
        let cat = common::fixture_catalog().join(pkg);
        let o = olmctl(&["catalog", "template", "convert", &cat.display().to_string()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let want = std::fs::read(
            operators()
                .join(pkg)
                .join("catalog-templates")
                .join(template),
        )
        .expect("template");
        assert!(
            o.stdout == want,
            "{pkg}: convert differs from the committed template"
        );
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let map = fixture_map("kube-green", tmp.path());
    let cat = common::fixture_catalog().join("kube-green");
    let o = olmctl(&[
        "catalog",
        "template",
        "convert",
        &cat.display().to_string(),
        "-o",
        "json",
    ]);
    let t = tmp.path().join("t.json");
    std::fs::write(&t, &o.stdout).expect("write");
    let o = olmctl(&[
        "catalog",
        "template",
        &t.display().to_string(),
        "--bundles",
        &map.display().to_string(),
        "--migrate-level",
        "bundle-object-to-csv-metadata",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stdout == std::fs::read(cat.join("catalog.yaml")).expect("catalog"),
        "round trip"
    );
}

/// `--bundles` may map an image to an OCI image layout directory (as `bundle build
/// --oci-layout` writes it): kube-green's template with its images renamed to tags renders the
/// same from one layout per bundle as from the bundle directories, the layouts land in the
/// bundle cache, and a digest reference that the layout does not hold is refused.
#[test]
fn bundles_from_oci_layouts() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir_map = fixture_map("kube-green", tmp.path());
    let text = std::fs::read_to_string(&dir_map).expect("map");
    let mut template = std::fs::read_to_string(
        operators().join("kube-green/catalog-templates/basic-template.yaml"),
    )
    .expect("template");
    let (mut layouts, mut dirs) = (String::new(), String::new());
    for (i, line) in text.lines().enumerate() {
        let (image, dir) = line.split_once(": ").expect("map line");
        let image: String = serde_json::from_str(image).expect("quoted image");
        let dir: String = serde_json::from_str(dir).expect("quoted dir");
        let tag = format!("example.com/kube-green:b{i}");
        template = template.replace(&image, &tag);
        let layout = tmp.path().join(format!("layout-{i}"));
        let o = std::process::Command::new(crate::common::olmctl_bin())
            .args([
                "bundle",
                "build",
                &dir,
                "--tag",
                &tag,
                "--force",
                "--oci-layout",
            ])
            .arg(&layout)
            .output()
            .expect("run");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        layouts.push_str(&format!("{tag}: {:?}\n", layout.display().to_string()));
        dirs.push_str(&format!("{tag}: {dir:?}\n"));
    }
    let t = tmp.path().join("t.yaml");
    std::fs::write(&t, &template).expect("template");
    let cache = tmp.path().join("cache");
    let render = |map: &str| {
        let f = tmp.path().join("m.yaml");
        std::fs::write(&f, map).expect("map");
        std::process::Command::new(crate::common::olmctl_bin())
            .args(["catalog", "template"])
            .arg(&t)
            .arg("--bundles")
            .arg(&f)
            .arg("--cache-dir")
            .arg(&cache)
            .output()
            .expect("run")
    };
    let from_dirs = render(&dirs);
    let from_layouts = render(&layouts);
    assert_eq!(
        from_layouts.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&from_layouts.stderr)
    );
    assert!(
        from_layouts.stdout == from_dirs.stdout,
        "layouts render as directories"
    );
    assert_eq!(
        std::fs::read_dir(cache.join("sha256"))
            .expect("cache")
            .count(),
        10
    );
    // A digest the layout does not hold.
    let wrong = format!(
        "example.com/kube-green@{}",
        olmctl::oci::digest::sha256(b"other")
    );
    std::fs::write(&t, template.replace("example.com/kube-green:b0", &wrong)).expect("template");
    let o = render(&layouts.replace("example.com/kube-green:b0", &wrong));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no image with digest"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
