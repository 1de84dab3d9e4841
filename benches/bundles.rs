//! Bundle benchmark: load + validate every fixture bundle directory (307 bundles), and render
//! each one; prints bundles per second. Baseline in the same run: reading the same files and
//! tokenizing them with the raw YAML event parser (the floor for any YAML-based validator).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn bundle_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/operators");
    olmctl::bundle::load::bundle_dirs_below(&root).expect("fixtures")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut n = 0;
    let t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            n = f();
            s.elapsed()
        })
        .collect();
    (median(t), n)
}

fn main() {
    let dirs = bundle_dirs();
    let files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| {
            let r = olmctl::bundle::load::bundle_root(d).expect("root");
            ["manifests", "metadata"].into_iter().flat_map(move |s| {
                std::fs::read_dir(r.join(s))
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_file())
            })
        })
        .collect();
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
        .sum();
    let (base, events) = time(5, || {
        let mut n = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            n += saphyr_parser::Parser::new_from_str(&text)
                .take_while(|e| e.is_ok())
                .count();
        }
        n
    });
    let (val, findings) = time(5, || {
        dirs.iter()
            .map(|d| {
                let b = olmctl::bundle::load::load_bundle(d).expect("load");
                olmctl::checks::bundle::validate(&b).len()
            })
            .sum()
    });
    let (ren, _) = time(5, || {
        dirs.iter()
            .filter(|d| {
                olmctl::bundle::render::render_dir(
                    d,
                    "quay.io/x/y:1",
                    olmctl::bundle::render::ObjectMode::CsvMetadata,
                )
                .is_ok()
            })
            .count()
    });
    let n = dirs.len() as f64;
    println!(
        "fixture bundles: {} dirs, {} files, {:.1} MB",
        dirs.len(),
        files.len(),
        bytes as f64 / 1e6
    );
    println!(
        "raw read + YAML tokenize: {:.0} ms ({events} events)",
        base.as_secs_f64() * 1e3
    );
    println!(
        "load + validate: {:.0} ms, {:.0} bundles/s, {findings} findings, ratio to raw scan {:.2}",
        val.as_secs_f64() * 1e3,
        n / val.as_secs_f64(),
        val.as_secs_f64() / base.as_secs_f64()
    );
    println!(
        "load + render: {:.0} ms, {:.0} bundles/s",
        ren.as_secs_f64() * 1e3,
        n / ren.as_secs_f64()
    );
}
