//! Upgrade-graph growth benchmark (`cargo bench --bench graphs`, `harness = false`): how
//! `catalog lint`, `catalog path` and `catalog graph` grow on the shapes that used to blow up
//! (issue 14): a long replaces chain, many channels, and the universal `skipRange: '>=0.0.0'`
//! on every entry. Each shape runs at N, 2N and 4N.
//!
//! Every measurement is the release CLI in a fresh child process, its output discarded: the
//! median wall time of 3 runs and the peak RSS (`wait4`). The baseline is `catalog validate`
//! of the same catalog in the same way (loading the files and every opm rule): the ratio says
//! what the graph work adds to reading the catalog. The growth columns divide each time by the
//! time at the previous size: about 2 means linear, 4 quadratic, 8 cubic.
//!
//! Nothing asserts on time. It asserts correctness: every run exits as expected.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 3;

/// One child run: wall time, peak RSS in bytes, exit code.
// The child is reaped by `wait4` (which also gives its own peak RSS), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_once(args: &[&str]) -> (Duration, u64, i32) {
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_olmctl"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn olmctl");
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter; the pid is our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let elapsed = started.elapsed();
    assert!(libc::WIFEXITED(status), "{args:?} was killed");
    (
        elapsed,
        usage.ru_maxrss as u64 * 1024,
        libc::WEXITSTATUS(status),
    )
}

/// Median time and the largest peak RSS of [`RUNS`] runs; the exit code must be `want`.
fn measure(args: &[&str], want: i32) -> (f64, u64) {
    let mut times = Vec::new();
    let mut rss = 0;
    for _ in 0..RUNS {
        let (t, m, code) = run_once(args);
        assert_eq!(code, want, "{args:?}");
        times.push(t.as_secs_f64());
        rss = rss.max(m);
    }
    times.sort_by(f64::total_cmp);
    (times[RUNS / 2], rss)
}

/// Writes package `p` with `n` bundles and `channels` channels holding all of them in a
/// replaces chain, each entry but the first with `skip_range` when given.
fn write_catalog(dir: &Path, n: usize, channels: usize, skip_range: Option<&str>) {
    let mut s =
        String::from("{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"c0\"}\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "{{\"schema\":\"olm.bundle\",\"name\":\"p.v0.{i}.0\",\"package\":\"p\",\"image\":\"quay.io/p/b:v0.{i}.0\",\"properties\":[{{\"type\":\"olm.package\",\"value\":{{\"packageName\":\"p\",\"version\":\"0.{i}.0\"}}}}]}}"
        );
    }
    let mut entries = String::new();
    for i in 0..n {
        if i > 0 {
            entries.push(',');
        }
        let _ = write!(entries, "{{\"name\":\"p.v0.{i}.0\"");
        if i > 0 {
            let _ = write!(entries, ",\"replaces\":\"p.v0.{}.0\"", i - 1);
            if let Some(r) = skip_range {
                let _ = write!(entries, ",\"skipRange\":\"{r}\"");
            }
        }
        entries.push('}');
    }
    for c in 0..channels {
        let _ = writeln!(
            s,
            "{{\"schema\":\"olm.channel\",\"name\":\"c{c}\",\"package\":\"p\",\"entries\":[{entries}]}}"
        );
    }
    std::fs::create_dir_all(dir.join("p")).expect("mkdir");
    std::fs::write(dir.join("p/catalog.json"), s).expect("write");
}

struct Shape {
    name: &'static str,
    /// (entries per channel, channels) at N, 2N and 4N.
    sizes: [(usize, usize); 3],
    skip_range: Option<&'static str>,
    /// Exit code of lint (1 when every range admits its own bundle: GRAPH006).
    lint_exit: i32,
    /// Exit code of the v0 path from the oldest entry (1: universal ranges loop under v0).
    path_v0_exit: i32,
}

fn main() {
    let shapes = [
        Shape {
            name: "replaces chain",
            sizes: [(2_000, 1), (4_000, 1), (8_000, 1)],
            skip_range: None,
            lint_exit: 0,
            path_v0_exit: 0,
        },
        Shape {
            name: "channels x 50 entries",
            sizes: [(50, 500), (50, 1_000), (50, 2_000)],
            skip_range: None,
            lint_exit: 0,
            path_v0_exit: 0,
        },
        Shape {
            name: "universal skipRange",
            sizes: [(1_000, 1), (2_000, 1), (4_000, 1)],
            skip_range: Some(">=0.0.0"),
            lint_exit: 1,
            path_v0_exit: 1,
        },
    ];
    println!(
        "| shape | size | validate (baseline) | lint | ratio | lint growth | lint RSS | path v0 + v1 | path growth | graph json | json growth | graph RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for shape in &shapes {
        let mut prev: Option<(f64, f64, f64)> = None;
        for &(n, channels) in &shape.sizes {
            let tmp = tempfile::tempdir().expect("tmp");
            write_catalog(tmp.path(), n, channels, shape.skip_range);
            let dir = tmp.path().to_str().expect("utf-8 path");
            let (validate, _) = measure(&["catalog", "validate", dir], 0);
            let (lint, lint_rss) = measure(&["catalog", "lint", dir], shape.lint_exit);
            let path = |sem: &str, want: i32| {
                measure(
                    &[
                        "catalog",
                        "path",
                        dir,
                        "-p",
                        "p",
                        "--from",
                        "p.v0.0.0",
                        "--semantics",
                        sem,
                    ],
                    want,
                )
                .0
            };
            let path = path("v0", shape.path_v0_exit) + path("v1", 0);
            let (json, json_rss) = measure(&["catalog", "graph", dir, "--format", "json"], 0);
            let growth = |now: f64, before: Option<f64>| {
                before.map_or("-".to_string(), |b| format!("x{:.1}", now / b))
            };
            let size = if channels > 1 {
                format!("{channels} channels")
            } else {
                format!("{n} entries")
            };
            println!(
                "| {} | {size} | {:.0} ms | {:.0} ms | {:.2} | {} | {} MB | {:.0} ms | {} | {:.0} ms | {} | {} MB |",
                shape.name,
                validate * 1e3,
                lint * 1e3,
                lint / validate,
                growth(lint, prev.map(|p| p.0)),
                lint_rss >> 20,
                path * 1e3,
                growth(path, prev.map(|p| p.1)),
                json * 1e3,
                growth(json, prev.map(|p| p.2)),
                json_rss >> 20,
            );
            prev = Some((lint, path, json));
        }
    }
}
