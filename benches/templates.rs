//! Template rendering benchmark (`cargo bench --bench templates`, `harness = false`): the
//! largest fixture template with a v4.18 catalog (rabbitmq-messaging-topology-operator,
//! 12 bundles) rendered offline from a `--bundles` map and from a warm bundle cache (every
//! digest-pinned image found in the cache by digest, the others from the map), in process.
//! The baseline is reading the same bundle directories alone (`load_bundle`): the ratio says
//! what rendering adds to reading. Medians of 20 runs. Nothing asserts on time; the renders
//! must equal the committed catalog.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use olmctl::bundle::load::{bundle_dirs_below, load_bundle, str_at};
use olmctl::bundle::render::{ObjectMode, render_dir};
use olmctl::fbc::write::{Format, canonical_text};
use olmctl::template::{self, MigrateLevel};

const RUNS: usize = 20;
const PKG: &str = "rabbitmq-messaging-topology-operator";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut last = None;
    let t: Vec<f64> = (0..RUNS)
        .map(|_| {
            let s = Instant::now();
            last = Some(f());
            s.elapsed().as_secs_f64()
        })
        .collect();
    (median(t), last.expect("runs"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let t = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).expect("copy");
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    let committed =
        std::fs::read_to_string(root.join("catalogs/v4.18").join(PKG).join("catalog.yaml"))
            .expect("catalog");
    let mut name_to_image = HashMap::new();
    olmctl::fbc::yaml::parse_documents(&committed, |n| {
        if str_at(&n, &["schema"]) == Some("olm.bundle") {
            name_to_image.insert(
                str_at(&n, &["name"]).unwrap_or_default().to_string(),
                str_at(&n, &["image"]).unwrap_or_default().to_string(),
            );
        }
    })
    .expect("yaml");
    let mut dirs: HashMap<String, PathBuf> = HashMap::new();
    let pkg_dir = root.join("operators").join(PKG);
    for d in bundle_dirs_below(&root.join("operators"))
        .expect("bundles")
        .into_iter()
        .filter(|d| d.starts_with(&pkg_dir))
    {
        let r = render_dir(&d, "", ObjectMode::BundleObjects).expect("render");
        if let Some(img) = name_to_image.get(&r.name) {
            dirs.insert(img.clone(), d);
        }
    }
    let file = root
        .join("operators")
        .join(PKG)
        .join("catalog-templates/v4.18.yaml");
    let text = std::fs::read_to_string(&file).expect("template");
    let doc = template::first_document(&file, &text).expect("doc");
    let render = |dirs: &HashMap<String, PathBuf>| {
        let cfg = template::render(&file, &doc, dirs, MigrateLevel::CsvMetadata).expect("renders");
        canonical_text(&cfg, Format::Yaml)
    };
    let (read, _) = time(|| {
        dirs.values()
            .map(|d| load_bundle(d).expect("load").manifests.len())
            .sum::<usize>()
    });
    let (offline, out) = time(|| render(&dirs));
    assert_eq!(
        out, committed,
        "offline render equals the committed catalog"
    );
    // A warm cache: digest-pinned images as cache entries.
    let cache = tempfile::tempdir().expect("cache");
    let mut pinned = 0;
    for (img, d) in &dirs {
        if let Some((_, digest)) = img.split_once('@') {
            let (alg, hex) = digest.split_once(':').expect("digest");
            copy_dir(d, &cache.path().join(alg).join(hex));
            pinned += 1;
        }
    }
    let platform = olmctl::oci::image::Platform::host();
    let (warm, out) = time(|| {
        let resolved: HashMap<String, PathBuf> = dirs
            .iter()
            .map(|(img, d)| {
                let hit = img.split_once('@').and_then(|(_, dg)| {
                    olmctl::oci::bundle_cache::lookup(cache.path(), dg, &platform)
                });
                (img.clone(), hit.unwrap_or_else(|| d.clone()))
            })
            .collect();
        render(&resolved)
    });
    assert_eq!(
        out, committed,
        "warm-cache render equals the committed catalog"
    );
    println!(
        "template {PKG} v4.18: {} bundles ({pinned} digest-pinned, from the cache when warm)",
        dirs.len()
    );
    println!("| run | median | templates/s | ratio to reading the bundle dirs |");
    println!("|---|---|---|---|");
    println!(
        "| read bundle dirs (baseline) | {:.1} ms | - | 1.00 |",
        read * 1e3
    );
    println!(
        "| render offline (--bundles) | {:.1} ms | {:.1} | {:.2} |",
        offline * 1e3,
        1.0 / offline,
        offline / read
    );
    println!(
        "| render from a warm cache | {:.1} ms | {:.1} | {:.2} |",
        warm * 1e3,
        1.0 / warm,
        warm / read
    );
}
