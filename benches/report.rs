//! `catalog diff` and the HTML report on the whole v4.18 fixture and on the 10x catalog
//! (`support/tenfold.rs`): time to load both sides, to diff them, to run check-upgrades, to
//! build both sides' channel graphs (shared by the diff, check-upgrades and the diff page), to
//! write the Markdown comment, and to write the graph page (and the diff page), with each step's
//! ratio to loading one catalog in the same run. NEW is OLD with every channel's newest entry
//! taken out (its edges go, heads move back): a diff that touches every package.
//! `OLMCTL_BENCH_RUNS` sets the runs (default 5); the median is printed.

#[path = "support/tenfold.rs"]
mod tenfold;

use std::path::{Path, PathBuf};
use std::time::Instant;

use olmctl::fbc::decl::DeclarativeConfig;

fn load(dir: &Path) -> DeclarativeConfig {
    olmctl::fbc::load::load(&[dir.to_path_buf()])
        .expect("load")
        .cfg
}

/// `cfg` with the newest entry (the head) of every channel removed.
fn trimmed(mut cfg: DeclarativeConfig) -> DeclarativeConfig {
    for c in &mut cfg.channels {
        if let olmctl::model::chain::Head::One(h) = olmctl::model::chain::heads(&c.entries) {
            let h = h.to_string();
            c.entries.retain(|e| e.name != h);
        }
    }
    cfg
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut ms = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        last = Some(f());
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    (median(ms), last.expect("one run"))
}

fn measure(name: &str, dir: &Path, runs: usize) {
    let (load_ms, old) = time(runs, || load(dir));
    let new = trimmed(load(dir));
    let (graphs_ms, (og, ng)) = time(runs, || {
        (
            olmctl::graph::CatalogGraphs::build(&old, None),
            olmctl::graph::CatalogGraphs::build(&new, None),
        )
    });
    let (diff_ms, d) = time(runs, || olmctl::diff::diff(&old, &new, &og, &ng));
    let (check_ms, findings) = time(runs, || olmctl::checks::upgrades::check_graphs(&og, &ng));
    let (md_ms, md) = time(runs, || olmctl::diff::render::markdown(&d, &findings));
    let (html_ms, html) = time(runs, || {
        let graphs = olmctl::graph::CatalogGraphs::build(&new, None);
        let mut out = Vec::new();
        olmctl::graph::html::html(&new, &graphs, "bench", &mut out).expect("html");
        out
    });
    let lines = olmctl::diff::render::package_lines(&d);
    let (diff_html_ms, diff_html) = time(runs, || {
        let mut out = Vec::new();
        olmctl::graph::html::diff_html((&old, &og), (&new, &ng), &lines, "bench", &mut out)
            .expect("html");
        out
    });
    let ratio = |ms: f64| ms / load_ms;
    println!(
        "{name:<6} {:>4} packages, {:>5} bundles: load {load_ms:>7.1} ms | graphs (both) {graphs_ms:>6.1} ms | diff {diff_ms:>6.1} ms ({:.2}x load) | check-upgrades {check_ms:>6.1} ms ({:.2}x) | markdown {md_ms:>5.1} ms ({:.2}x, {} KB) | graph html {html_ms:>6.1} ms ({:.2}x, {} KB) | diff html {diff_html_ms:>6.1} ms ({:.2}x, {} KB)",
        old.packages.len(),
        old.bundles.len(),
        ratio(diff_ms),
        ratio(check_ms),
        ratio(md_ms),
        md.len() / 1024,
        ratio(html_ms),
        html.len() / 1024,
        ratio(diff_html_ms),
        diff_html.len() / 1024,
    );
    assert!(!d.is_empty());
}

fn main() {
    let runs: usize = std::env::var("OLMCTL_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let tmp = tempfile::tempdir().expect("temp dir");
    tenfold::tenfold(tmp.path());
    println!("catalog diff and HTML report, median of {runs} runs (release build)");
    let dirs: [(&str, PathBuf); 2] = [
        ("v4.18", tenfold::fixture()),
        ("10x", tmp.path().to_path_buf()),
    ];
    for (name, dir) in &dirs {
        measure(name, dir, runs);
    }
}
