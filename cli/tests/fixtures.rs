//! The real v4.18 community catalog (35 packages, 727 bundles, read in place): it validates,
//! `ls` reports opm's heads, and `fmt` output re-validates, is stable and loses nothing.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::*;
use olmctl::fbc::decl::DeclarativeConfig;
use olmctl::fbc::load::load;

fn package_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture_catalog())
        .expect("fixture catalog exists at ../shared/fixtures/catalogs/v4.18")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn whole_catalog_validates_without_errors() {
    let f = validate_dir(&fixture_catalog());
    assert!(errors(&f).is_empty(), "{:#?}", errors(&f));
    let loaded = load(&[fixture_catalog()]).expect("load");
    assert_eq!(loaded.cfg.packages.len(), 35);
    assert_eq!(loaded.cfg.channels.len(), 78);
    assert_eq!(loaded.cfg.bundles.len(), 727);
    let o = std::process::Command::new(crate::common::olmctl_bin())
        .args(["catalog", "validate"])
        .arg(fixture_catalog())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn every_package_validates_on_its_own() {
    let dirs = package_dirs();
    assert_eq!(dirs.len(), 35);
    for d in dirs {
        let f = validate_dir(&d);
        assert!(errors(&f).is_empty(), "{}: {:#?}", d.display(), errors(&f));
    }
}

/// opm's head rule, written independently of `olmctl::model::chain`.
fn expected_heads(cfg: &DeclarativeConfig) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for c in &cfg.channels {
        let referenced: BTreeSet<&str> = c
            .entries
            .iter()
            .flat_map(|e| {
                std::iter::once(e.replaces.as_str()).chain(e.skips.iter().map(String::as_str))
            })
            .collect();
        let heads: Vec<&str> = c
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| !referenced.contains(n))
            .collect();
        assert_eq!(heads.len(), 1, "{}/{} heads {heads:?}", c.package, c.name);
        out.insert((c.package.clone(), c.name.clone()), heads[0].to_string());
    }
    out
}

#[test]
fn ls_json_reports_opm_heads_for_every_channel() {
    let loaded = load(&[fixture_catalog()]).expect("load");
    let want = expected_heads(&loaded.cfg);
    let o = std::process::Command::new(crate::common::olmctl_bin())
        .args(["catalog", "ls", "--output", "json"])
        .arg(fixture_catalog())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let mut got = BTreeMap::new();
    for p in v["packages"].as_array().expect("packages") {
        for c in p["channels"].as_array().expect("channels") {
            got.insert(
                (
                    p["name"].as_str().expect("name").to_string(),
                    c["name"].as_str().expect("name").to_string(),
                ),
                c["head"].as_str().expect("head").to_string(),
            );
        }
    }
    assert_eq!(got.len(), 78);
    assert_eq!(got, want);
}

/// Everything opm keeps, as comparable data.
fn summary(cfg: &DeclarativeConfig) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for p in &cfg.packages {
        m.insert(
            format!("pkg/{}", p.name),
            format!(
                "{} {} {:?} {}",
                p.default_channel,
                p.description,
                p.icon
                    .as_ref()
                    .map(|i| (i.base64data.to_string(), i.mediatype.clone())),
                p.properties.len()
            ),
        );
    }
    for c in &cfg.channels {
        let entries: Vec<String> = c
            .entries
            .iter()
            .map(|e| format!("{}<{}|{:?}|{}", e.name, e.replaces, e.skips, e.skip_range))
            .collect();
        m.insert(format!("ch/{}/{}", c.package, c.name), entries.join(";"));
    }
    for b in &cfg.bundles {
        let props: Vec<String> = b
            .properties
            .iter()
            .map(|p| format!("{}={}", p.type_, p.value.to_json()))
            .collect();
        let rel: Vec<String> = b
            .related_images
            .iter()
            .map(|r| format!("{}={}", r.name, r.image))
            .collect();
        m.insert(
            format!("b/{}/{}", b.package, b.name),
            format!("{} {} {}", b.image, props.join(","), rel.join(",")),
        );
    }
    m
}

fn fmt_to(src: &Path, out: &Path, format: &str) {
    let o = std::process::Command::new(crate::common::olmctl_bin())
        .args(["catalog", "fmt", "--format", format, "--out"])
        .arg(out)
        .arg(src)
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn fmt_round_trips_every_package() {
    for format in ["yaml", "json"] {
        let once = tempfile::tempdir().expect("tmp");
        let twice = tempfile::tempdir().expect("tmp");
        fmt_to(&fixture_catalog(), once.path(), format);
        fmt_to(once.path(), twice.path(), format);
        let orig = load(&[fixture_catalog()]).expect("load");
        let back = load(&[once.path().to_path_buf()]).expect("load");
        assert!(errors(&olmctl::checks::fbc::validate(&back)).is_empty());
        assert_eq!(
            summary(&orig.cfg),
            summary(&back.cfg),
            "fmt --format {format} changed content"
        );
        for d in package_dirs() {
            let name = d.file_name().expect("name").to_owned();
            let file = format!("catalog.{format}");
            let a = std::fs::read(once.path().join(&name).join(&file)).expect("formatted package");
            let b = std::fs::read(twice.path().join(&name).join(&file)).expect("formatted package");
            assert!(
                a == b,
                "{}: formatting twice differs ({format})",
                name.to_string_lossy()
            );
            if format == "yaml" {
                // The fixture is opm's own output: fmt must reproduce it byte for byte.
                let orig = std::fs::read(d.join("catalog.yaml")).expect("fixture");
                assert!(
                    a == orig,
                    "{}: fmt differs from opm's output",
                    name.to_string_lossy()
                );
            }
        }
    }
}
