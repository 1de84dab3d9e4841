//! Upgrade-safety benchmark: every upgrade edge of the largest fixture package
//! (opendatahub-operator, 75 bundles, edges from the v4.18 catalog), checked with the full set
//! (skew, CRD versions along paths, crdify schema comparison, API removals); prints edges per
//! second. Baseline in the same run: reading and parsing the package's bundles (the floor any
//! check starts from).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use olmctl::checks::safety::walk::{catalog_edges, check_package, load_package};
use olmctl::checks::safety::{Facts, Options};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut last = None;
    let t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            last = Some(f());
            s.elapsed()
        })
        .collect();
    (median(t), last.expect("runs > 0"))
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    let pkg = root.join("operators/opendatahub-operator");
    let cat = olmctl::fbc::load::load(&[root.join("catalogs/v4.18/opendatahub-operator")])
        .expect("catalog");
    let edges = catalog_edges(&cat.cfg)
        .remove("opendatahub-operator")
        .expect("package in catalog");
    let (load, (dirs, _)) = time(5, || load_package(&pkg).expect("package loads"));
    let opts = Options::default();
    let (check, walked) = time(5, || {
        let by_name: BTreeMap<String, Facts<'_>> = dirs
            .iter()
            .map(Facts::of)
            .map(|f| (f.name.clone(), f))
            .collect();
        check_package("opendatahub-operator", &by_name, &edges, &opts)
    });
    let secs = check.as_secs_f64();
    println!(
        "opendatahub-operator: {} bundles, {} edges ({} checked), {} findings",
        dirs.len(),
        edges.len(),
        walked.checked,
        walked.findings.len()
    );
    println!(
        "load (read + parse, baseline): {:>8.1} ms",
        load.as_secs_f64() * 1e3
    );
    println!(
        "check every edge + bundle:     {:>8.1} ms  {:>8.0} edges/s  ratio to load {:.2}",
        secs * 1e3,
        walked.checked as f64 / secs,
        secs / load.as_secs_f64()
    );
}
