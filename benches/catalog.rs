//! Load + validate benchmark (`cargo bench --bench catalog`, `harness = false`).
//!
//! Catalogs measured:
//! - `fixture-v4.18`: the real OperatorHub fixture (`../shared/fixtures/catalogs/v4.18`, ~13 MB;
//!   `OLMCTL_BENCH_FIXTURE=<dir>` points elsewhere).
//! - `synthetic-small`: 300 packages, 450 channels, 3,000 bundles, generated like
//!   operator-registry's `BenchmarkLoadFS`: every package has a base64 PNG or SVG icon of a few
//!   KB; every bundle has an `olm.package` property, several `olm.gvk` properties, an
//!   `olm.csv.metadata` property (markdown description, `alm-examples` JSON, `crdDescriptions`
//!   with spec/status descriptors) and `relatedImages`; channels have replaces chains, skips and
//!   `skipRange`s. One `catalog.yaml` per package, written in opm's YAML style (`---` before
//!   every blob, keys sorted, long plain scalars folded at 80 columns, literal blocks for
//!   multi-line text).
//! - `synthetic-large`: the same at 10x (3,000 packages, 4,500 channels, 30,000 bundles).
//!
//! The generator is deterministic (xorshift64*, fixed seed). To keep `synthetic-large` at
//! ~160 MB on disk, `olm.csv.metadata` averages ~3.8 KB per bundle: 2-4 KB for most packages,
//! 10-15 KB (the real fixture's typical size) for the "big" operators that hold ~7% of the
//! bundles. `OLMCTL_BENCH_RICH=1` makes every package big (~13.5 KB per bundle, ~3x the bytes:
//! `synthetic-large` is then ~470 MB). `OLMCTL_BENCH_ONLY=fixture,small,large` picks catalogs;
//! `OLMCTL_BENCH_OUT=<dir>` keeps the generated catalogs there instead of a temporary directory.
//!
//! Every measurement runs in a fresh child process (this executable again, with
//! `OLMCTL_BENCH_CHILD=<dir>`), so that its peak RSS (`VmHWM`) covers load + validate only, not
//! the generator. The same child then times two floors on the same files and the same number
//! of threads as the loader: reading + scanning with `saphyr_parser::Parser` events only (the raw
//! YAML tokenizer: the baseline of the ratio), and reading + building positioned node trees with
//! `olmctl::fbc::yaml::parse_documents` (what the loader does before decoding blobs). Each
//! floor is the best of two passes in its child.
//!
//! Nothing asserts on time. It asserts correctness: every catalog validates without error-level
//! findings, and every generated one loads with the expected counts.

#[path = "support/proc.rs"]
mod proc;

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use olmctl::diag::Severity;
use olmctl::graph::Installed;
use olmctl::graph::path::{Semantics, Stop, resolve};

const CHILD_ENV: &str = "OLMCTL_BENCH_CHILD";
const ONLY_ENV: &str = "OLMCTL_BENCH_ONLY";
const FIXTURE_ENV: &str = "OLMCTL_BENCH_FIXTURE";
const RICH_ENV: &str = "OLMCTL_BENCH_RICH";
const OUT_ENV: &str = "OLMCTL_BENCH_OUT";
const RESULT_TAG: &str = "OLMCTL_BENCH_RESULT";

// ---------------------------------------------------------------------------------------------
// Child mode: one measurement in a fresh process.
// ---------------------------------------------------------------------------------------------

/// The 1, 5 and 15 minute load averages.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// User + system CPU time of the whole process (exited threads included), in ms.
fn cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the `(comm)`: state is field 3, utime field 14, stime field 15.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // USER_HZ is 100 on every Linux configuration in use.
    (ticks(11) + ticks(12)) * 10.0
}

/// Runs `f` over the text of every file on as many threads as the loader uses.
fn par_files(files: &[PathBuf], f: impl Fn(&str) -> u64 + Sync) -> u64 {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut n = 0;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(p) = files.get(i) else { break };
                        let text = std::fs::read_to_string(p)
                            .unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
                        n += f(&text);
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("worker")).sum()
    })
}

fn scan_events(text: &str) -> u64 {
    let mut n = 0;
    for ev in saphyr_parser::Parser::new_from_str(text) {
        let ev = ev.expect("valid YAML");
        std::hint::black_box(&ev);
        n += 1;
    }
    n
}

fn build_trees(text: &str) -> u64 {
    let mut n = 0;
    olmctl::fbc::yaml::parse_documents(text, |node| {
        std::hint::black_box(&node);
        n += 1;
    })
    .expect("valid YAML");
    n
}

fn child(dir: &Path) {
    let roots = [dir.to_path_buf()];
    let cpu0 = cpu_ms();
    let t0 = Instant::now();
    let loaded = olmctl::fbc::load::load(&roots)
        .unwrap_or_else(|e| panic!("cannot load {}: {e}", dir.display()));
    let t_load = t0.elapsed();
    let cpu_load = cpu_ms() - cpu0;
    let t1 = Instant::now();
    let findings = olmctl::checks::fbc::validate(&loaded);
    let t_validate = t1.elapsed();
    let cpu_total = cpu_ms() - cpu0;
    // The high-water mark of load + validate, taken before anything else runs.
    let hwm_kb = proc::status_kb("self", "VmHWM:");

    let errors: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .cloned()
        .collect();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    if !errors.is_empty() {
        eprintln!(
            "{} error(s) in {}; the first ones:",
            errors.len(),
            dir.display()
        );
        eprint!(
            "{}",
            olmctl::diag::render_text(&errors[..errors.len().min(10)], false)
        );
    }
    // Upgrade graphs (issue: graph benchmark): build every channel graph, then resolve every
    // entry's path to its head under OLM v0 and v1.
    let t4 = Instant::now();
    let graphs = olmctl::graph::CatalogGraphs::build(&loaded.cfg, None);
    let (mut paths, mut at_head) = (0usize, 0usize);
    for chans in graphs.packages.values() {
        for g in chans.values() {
            for n in g.graph.node_indices() {
                for sem in [Semantics::V0, Semantics::V1] {
                    let p = resolve(g, Installed::of(g, n), sem, None);
                    paths += 1;
                    at_head += usize::from(p.stop == Stop::Head);
                }
            }
        }
    }
    let t_graph = t4.elapsed();
    drop(graphs);
    let counts = (
        loaded.files,
        loaded.cfg.packages.len(),
        loaded.cfg.channels.len(),
        loaded.cfg.bundles.len(),
    );
    drop(findings);
    drop(loaded);

    // The floors are the best of two passes: they are floors, and on a shared machine a pass
    // is now and then twice as slow.
    let files = olmctl::fbc::load::list_files(dir).expect("list files");
    let (mut t_raw, mut cpu_raw, mut t_tree) = (f64::MAX, f64::MAX, f64::MAX);
    let (mut events, mut docs) = (0, 0);
    for _ in 0..2 {
        let cpu2 = cpu_ms();
        let t2 = Instant::now();
        events = par_files(&files, scan_events);
        t_raw = t_raw.min(t2.elapsed().as_secs_f64() * 1e3);
        cpu_raw = cpu_raw.min(cpu_ms() - cpu2);
        let t3 = Instant::now();
        docs = par_files(&files, build_trees);
        t_tree = t_tree.min(t3.elapsed().as_secs_f64() * 1e3);
    }

    println!(
        "{RESULT_TAG} load_ms={:.3} validate_ms={:.3} load_cpu_ms={cpu_load:.0} \
         total_cpu_ms={cpu_total:.0} hwm_kb={hwm_kb} errors={} warnings={warnings} files={} \
         packages={} channels={} bundles={} raw_ms={:.3} raw_cpu_ms={cpu_raw:.0} tree_ms={:.3} \
         events={events} docs={docs} graph_ms={:.3} paths={paths} paths_at_head={at_head}",
        t_load.as_secs_f64() * 1e3,
        t_validate.as_secs_f64() * 1e3,
        errors.len(),
        counts.0,
        counts.1,
        counts.2,
        counts.3,
        t_raw,
        t_tree,
        t_graph.as_secs_f64() * 1e3,
    );
}

// ---------------------------------------------------------------------------------------------
// Parent: running children and summarising.
// ---------------------------------------------------------------------------------------------

type Sample = BTreeMap<String, f64>;

fn run_child(dir: &Path) -> Sample {
    let exe = std::env::current_exe().expect("current exe");
    let out = Command::new(exe)
        .env(CHILD_ENV, dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("child runs");
    assert!(
        out.status.success(),
        "benchmark child failed on {} ({})",
        dir.display(),
        out.status
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with(RESULT_TAG))
        .unwrap_or_else(|| panic!("no result from child: {stdout}"));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn tree_bytes(dir: &Path) -> u64 {
    olmctl::fbc::load::list_files(dir)
        .expect("list files")
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum()
}

struct Row {
    name: String,
    mb: f64,
    files: f64,
    packages: f64,
    channels: f64,
    bundles: f64,
    load: f64,
    validate: f64,
    total: f64,
    load_cpu: f64,
    total_cpu: f64,
    rss_mb: f64,
    raw: f64,
    raw_cpu: f64,
    tree: f64,
    warnings: f64,
    graph: f64,
    paths: f64,
    paths_at_head: f64,
}

/// Expected blob counts of a generated catalog.
struct Expect {
    packages: usize,
    channels: usize,
    bundles: usize,
}

fn measure(name: &str, dir: &Path, runs: usize, expect: Option<&Expect>) -> Row {
    let mb = tree_bytes(dir) as f64 / 1e6;
    let samples: Vec<Sample> = (0..runs)
        .map(|i| {
            let s = run_child(dir);
            eprintln!(
                "  {name} run {}/{runs}: load {:.0} ms + validate {:.0} ms (CPU {:.0} ms), peak RSS {:.1} MB, raw scan {:.0} ms (CPU {:.0} ms)",
                i + 1,
                s["load_ms"],
                s["validate_ms"],
                s["total_cpu_ms"],
                s["hwm_kb"] / 1024.0,
                s["raw_ms"],
                s["raw_cpu_ms"]
            );
            s
        })
        .collect();
    let col = |k: &str| samples.iter().map(|s| s[k]).collect::<Vec<f64>>();
    let first = &samples[0];
    // A benchmark of a failing path is worthless: every catalog, the real one included, must
    // validate without errors.
    assert_eq!(
        first["errors"], 0.0,
        "{name}: the catalog must validate without errors (see above)"
    );
    if let Some(e) = expect {
        assert_eq!(first["files"] as usize, e.packages, "{name}: files");
        assert_eq!(first["packages"] as usize, e.packages, "{name}: packages");
        assert_eq!(first["channels"] as usize, e.channels, "{name}: channels");
        assert_eq!(first["bundles"] as usize, e.bundles, "{name}: bundles");
    }
    Row {
        name: name.to_string(),
        mb,
        files: first["files"],
        packages: first["packages"],
        channels: first["channels"],
        bundles: first["bundles"],
        load: median(col("load_ms")),
        validate: median(col("validate_ms")),
        total: median(
            samples
                .iter()
                .map(|s| s["load_ms"] + s["validate_ms"])
                .collect(),
        ),
        load_cpu: median(col("load_cpu_ms")),
        total_cpu: median(col("total_cpu_ms")),
        rss_mb: col("hwm_kb").into_iter().fold(0.0, f64::max) / 1024.0,
        raw: median(col("raw_ms")),
        raw_cpu: median(col("raw_cpu_ms")),
        tree: median(col("tree_ms")),
        warnings: first["warnings"],
        graph: median(col("graph_ms")),
        paths: first["paths"],
        paths_at_head: first["paths_at_head"],
    }
}

// ---------------------------------------------------------------------------------------------
// Deterministic generator.
// ---------------------------------------------------------------------------------------------

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next() % xs.len() as u64) as usize]
    }
    fn hex(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 16);
        while s.len() < n {
            let _ = write!(s, "{:016x}", self.next());
        }
        s.truncate(n);
        s
    }
}

const ADJECTIVES: &[&str] = &[
    "cloud", "smart", "open", "fast", "secure", "hyper", "micro", "edge", "auto", "data", "kube",
    "nano", "multi", "global", "quantum", "blue", "red", "green", "silver", "iron", "stellar",
    "rapid", "solid", "deep", "bright", "swift", "prime", "core", "meta", "neo",
];
const NOUNS: &[&str] = &[
    "kafka",
    "redis",
    "postgres",
    "mongo",
    "vault",
    "backup",
    "cache",
    "mesh",
    "gateway",
    "metrics",
    "logging",
    "storage",
    "cert",
    "dns",
    "ingress",
    "queue",
    "stream",
    "search",
    "graph",
    "ml",
    "etl",
    "secrets",
    "policy",
    "scanner",
    "registry",
    "builder",
    "pipeline",
    "tenant",
    "quota",
    "lake",
    "spark",
    "flink",
    "minio",
    "keycloak",
    "nginx",
    "mysql",
    "mariadb",
    "cassandra",
    "elastic",
    "grafana",
];
const SUFFIXES: &[&str] = &["operator", "controller", "manager", "operator", "operator"];
const VENDORS: &[&str] = &[
    "Acme Systems",
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Hooli",
    "Stark Industries",
    "Wayne Tech",
    "Cyberdyne",
    "Soylent",
    "Tyrell",
    "Vandelay",
    "Wonka Cloud",
    "Aperture",
    "Black Mesa",
    "Oscorp",
    "Massive Dynamic",
];
const KIND_SUFFIXES: &[&str] = &[
    "Cluster",
    "Backup",
    "Restore",
    "User",
    "Topic",
    "Connector",
    "Policy",
    "Instance",
    "Gateway",
    "Config",
    "Schedule",
    "Snapshot",
    "Replica",
    "Route",
    "Monitor",
    "Tenant",
];
const CATEGORIES: &[&str] = &[
    "Database",
    "Storage",
    "Security",
    "Monitoring",
    "Networking",
    "Developer Tools",
    "AI/Machine Learning",
    "Integration & Delivery",
];
const CAPABILITIES: &[&str] = &[
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];
const WORDS: &[&str] = &[
    "operator",
    "cluster",
    "deploys",
    "manages",
    "lifecycle",
    "Kubernetes",
    "custom",
    "resource",
    "automatically",
    "upgrades",
    "backup",
    "restore",
    "scaling",
    "monitoring",
    "configuration",
    "secure",
    "TLS",
    "certificates",
    "workloads",
    "namespace",
    "controller",
    "reconciles",
    "status",
    "replicas",
    "storage",
    "volumes",
    "network",
    "policies",
    "metrics",
    "alerts",
    "dashboards",
    "install",
    "provides",
    "supports",
    "the",
    "a",
    "of",
    "and",
    "to",
    "with",
    "for",
    "in",
    "on",
    "is",
    "by",
    "your",
    "each",
    "when",
    "using",
    "across",
    "high",
    "availability",
    "persistent",
    "rolling",
    "zero-downtime",
    "day-2",
    "operations",
    "failover",
    "the",
    "the",
    "and",
    "of",
    "to",
    "a",
    "is",
    "instances",
    "clusters",
    "OpenShift",
    "declarative",
    "API",
    "(optional)",
    "defaults",
    "value",
    "field",
    "set",
    "this",
    "that",
    "will",
    "be",
    "can",
    "must",
    "should",
    "not",
    "if",
    "only",
    "all",
    "pods",
    "services",
    "secrets",
    "users",
    "schedule",
    "retention",
    "days",
    "endpoint",
    "region",
    "bucket",
];

fn sentence(r: &mut Rng, out: &mut String, lo: usize, hi: usize) {
    let n = r.range(lo, hi);
    for i in 0..n {
        let w = *r.pick(WORDS);
        if i == 0 {
            let mut c = w.chars();
            let f = c.next().unwrap_or('A').to_ascii_uppercase();
            out.push(f);
            out.push_str(c.as_str());
        } else {
            out.push(' ');
            out.push_str(w);
        }
    }
    out.push('.');
}

fn sentences(r: &mut Rng, n: usize, lo: usize, hi: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        sentence(r, &mut s, lo, hi);
    }
    s
}

fn camel(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        s.push(A[(n >> 18) as usize & 63] as char);
        s.push(A[(n >> 12) as usize & 63] as char);
        s.push(if c.len() > 1 {
            A[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        s.push(if c.len() > 2 {
            A[n as usize & 63] as char
        } else {
            '='
        });
    }
    s
}

/// A PNG-looking (incompressible) or SVG icon of `size` raw bytes, base64-encoded.
fn icon(r: &mut Rng, size: usize) -> (String, &'static str) {
    if r.chance(50) {
        let mut b: Vec<u8> =
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x80\0\0\0\x80\x08\x06\0\0\0".to_vec();
        while b.len() < size {
            b.extend_from_slice(&r.next().to_le_bytes());
        }
        (base64(&b), "image/png")
    } else {
        let mut s = String::from(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">"#,
        );
        while s.len() < size {
            let _ = write!(s, r##"<path d="M{} {}"##, r.range(0, 256), r.range(0, 256));
            for _ in 0..r.range(4, 12) {
                let _ = write!(
                    s,
                    "C{}.{} {}.{} {} {} {}.{} {}",
                    r.range(0, 256),
                    r.range(0, 9),
                    r.range(0, 256),
                    r.range(0, 9),
                    r.range(0, 256),
                    r.range(0, 256),
                    r.range(0, 256),
                    r.range(0, 9),
                    r.range(0, 256)
                );
            }
            let _ = write!(s, r##"Z" fill="#{}"/>"##, r.hex(6));
        }
        s.push_str("</svg>\n");
        (base64(s.as_bytes()), "image/svg+xml")
    }
}

/// (path, display name, sample JSON value, x-descriptor)
const SPEC_FIELDS: &[(&str, &str, &str, &str)] = &[
    (
        "replicas",
        "Replicas",
        "3",
        "urn:alm:descriptor:com.tectonic.ui:podCount",
    ),
    (
        "version",
        "Version",
        "\"2.4.1\"",
        "urn:alm:descriptor:com.tectonic.ui:text",
    ),
    (
        "image",
        "Image",
        "\"registry.example.com/app/server:2.4.1\"",
        "urn:alm:descriptor:com.tectonic.ui:text",
    ),
    (
        "storageSize",
        "Storage Size",
        "\"10Gi\"",
        "urn:alm:descriptor:com.tectonic.ui:text",
    ),
    (
        "storageClassName",
        "Storage Class",
        "\"standard\"",
        "urn:alm:descriptor:io.kubernetes:StorageClass",
    ),
    (
        "tlsEnabled",
        "TLS Enabled",
        "true",
        "urn:alm:descriptor:com.tectonic.ui:booleanSwitch",
    ),
    (
        "logLevel",
        "Log Level",
        "\"info\"",
        "urn:alm:descriptor:com.tectonic.ui:select:debug",
    ),
    (
        "serviceType",
        "Service Type",
        "\"ClusterIP\"",
        "urn:alm:descriptor:com.tectonic.ui:select:ClusterIP",
    ),
    (
        "retentionDays",
        "Retention Days",
        "7",
        "urn:alm:descriptor:com.tectonic.ui:number",
    ),
    (
        "schedule",
        "Schedule",
        "\"0 2 * * *\"",
        "urn:alm:descriptor:com.tectonic.ui:text",
    ),
    (
        "authSecret",
        "Authentication Secret",
        "\"app-credentials\"",
        "urn:alm:descriptor:io.kubernetes:Secret",
    ),
    (
        "resources",
        "Resources",
        "{}",
        "urn:alm:descriptor:com.tectonic.ui:resourceRequirements",
    ),
    (
        "nodeSelector",
        "Node Selector",
        "{}",
        "urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Node",
    ),
    (
        "tolerations",
        "Tolerations",
        "[]",
        "urn:alm:descriptor:io.kubernetes:Tolerations",
    ),
    (
        "affinity",
        "Affinity",
        "{}",
        "urn:alm:descriptor:com.tectonic.ui:nodeAffinity",
    ),
    (
        "priorityClassName",
        "Priority Class",
        "\"\"",
        "urn:alm:descriptor:io.kubernetes:PriorityClass",
    ),
    (
        "monitoring",
        "Enable Monitoring",
        "false",
        "urn:alm:descriptor:com.tectonic.ui:booleanSwitch",
    ),
    (
        "endpoint",
        "Endpoint",
        "\"https://s3.example.com\"",
        "urn:alm:descriptor:com.tectonic.ui:text",
    ),
    (
        "bucket",
        "Bucket",
        "\"backups\"",
        "urn:alm:descriptor:com.tectonic.ui:text",
    ),
    (
        "region",
        "Region",
        "\"us-east-1\"",
        "urn:alm:descriptor:com.tectonic.ui:text",
    ),
    (
        "paused",
        "Paused",
        "false",
        "urn:alm:descriptor:com.tectonic.ui:booleanSwitch",
    ),
    (
        "maxConnections",
        "Max Connections",
        "100",
        "urn:alm:descriptor:com.tectonic.ui:number",
    ),
];
/// (path, display name, x-descriptor)
const STATUS_FIELDS: &[(&str, &str, &str)] = &[
    (
        "conditions",
        "Conditions",
        "urn:alm:descriptor:io.kubernetes.conditions",
    ),
    ("phase", "Phase", "urn:alm:descriptor:io.kubernetes.phase"),
    (
        "readyReplicas",
        "Ready Replicas",
        "urn:alm:descriptor:com.tectonic.ui:podStatuses",
    ),
    (
        "observedGeneration",
        "Observed Generation",
        "urn:alm:descriptor:text",
    ),
    ("endpoint", "Endpoint", "urn:alm:descriptor:org.w3:link"),
    ("lastBackupTime", "Last Backup", "urn:alm:descriptor:text"),
];

struct Desc {
    path: &'static str,
    display: &'static str,
    description: String,
    xdesc: &'static str,
    sample: Option<&'static str>,
}

struct Crd {
    kind: String,
    plural: String,
    group: String,
    /// Served versions, oldest first; the last one is described.
    versions: Vec<&'static str>,
    description: String,
    spec: Vec<Desc>,
    status: Vec<Desc>,
}

struct Pkg {
    name: String,
    display: String,
    vendor: &'static str,
    org: String,
    crds: Vec<Crd>,
    short_desc: String,
    markdown: String,
    keywords: Vec<&'static str>,
    categories: &'static str,
    capabilities: &'static str,
    channels: Vec<&'static str>,
    default_channel: &'static str,
    icon: (String, &'static str),
}

fn desc_list(r: &mut Rng, n: usize, status: bool, big: bool) -> Vec<Desc> {
    let mut used = HashSet::new();
    let mut out = Vec::new();
    while out.len() < n {
        let (path, display, xdesc, sample) = if status {
            let f = r.pick(STATUS_FIELDS);
            (f.0, f.1, f.2, None)
        } else {
            let f = r.pick(SPEC_FIELDS);
            (f.0, f.1, f.3, Some(f.2))
        };
        if !used.insert(path) {
            continue;
        }
        let n_sentences = r.range(1, if big { 2 } else { 1 });
        let description = sentences(r, n_sentences, 6, 14);
        out.push(Desc {
            path,
            display,
            description,
            xdesc,
            sample,
        });
    }
    out
}

fn markdown(r: &mut Rng, display: &str, crds: &[Crd], paragraphs: usize) -> String {
    let mut s = format!("## About {display}\n\n");
    for p in 0..paragraphs {
        let n_sentences = if paragraphs > 1 {
            r.range(2, 5)
        } else {
            r.range(1, 3)
        };
        s.push_str(&sentences(r, n_sentences, 8, 22));
        s.push_str("\n\n");
        if p == 0 && paragraphs > 1 {
            s.push_str("### Features\n\n");
            for _ in 0..r.range(3, 6) {
                s.push_str("* ");
                sentence(r, &mut s, 4, 10);
                s.push('\n');
            }
            s.push('\n');
        }
        if p == 1 {
            s.push_str("### Custom resources\n\n| Kind | Description |\n|------|-------------|\n");
            for c in crds {
                let _ = writeln!(s, "| `{}` | {} |", c.kind, c.description);
            }
            s.push('\n');
        }
        if p == 2 {
            let c = &crds[0];
            let _ = write!(
                s,
                "### Example\n\n```yaml\napiVersion: {}/{}\nkind: {}\nmetadata:\n  name: example\nspec:\n",
                c.group,
                c.versions[c.versions.len() - 1],
                c.kind
            );
            for d in &c.spec {
                let _ = writeln!(s, "  {}: {}", d.path, d.sample.unwrap_or("{}"));
            }
            s.push_str("```\n\n");
        }
    }
    if paragraphs > 1 {
        let _ = write!(
            s,
            "### Support\n\nSee the [documentation](https://docs.example.com/{}) and report issues on GitHub.\n",
            display.to_ascii_lowercase().replace(' ', "-")
        );
    }
    while s.ends_with("\n\n") {
        s.pop();
    }
    s
}

fn make_pkg(
    r: &mut Rng,
    name: String,
    noun: &str,
    suffix: &str,
    channels: usize,
    big: bool,
) -> Pkg {
    let vendor = *r.pick(VENDORS);
    let org: String = vendor
        .to_ascii_lowercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let display = format!("{} {}", camel(noun), camel(suffix));
    // A "big" operator has 10-15 KB of CSV metadata per bundle, the others 2-4 KB.
    let n_crds = if big {
        r.range(3, 4)
    } else {
        *r.pick(&[1, 1, 1, 2])
    };
    let group = format!("{noun}.{org}.io");
    let mut kinds = HashSet::new();
    let mut crds = Vec::new();
    while crds.len() < n_crds {
        let kind = format!("{}{}", camel(noun), r.pick(KIND_SUFFIXES));
        if !kinds.insert(kind.clone()) {
            continue;
        }
        let versions = match r.range(0, 3) {
            0 => vec!["v1alpha1"],
            1 => vec!["v1beta1"],
            2 => vec!["v1alpha1", "v1beta1"],
            _ => vec!["v1beta1", "v1"],
        };
        let (spec_n, status_n) = if big {
            (r.range(3, 7), r.range(1, 3))
        } else {
            (r.range(1, 2), 1)
        };
        crds.push(Crd {
            plural: format!("{}s", kind.to_ascii_lowercase()),
            kind,
            group: group.clone(),
            versions,
            description: sentences(r, 1, 5, 12),
            spec: desc_list(r, spec_n, false, big),
            status: desc_list(r, status_n, true, big),
        });
    }
    let paragraphs = if big { r.range(4, 6) } else { 1 };
    let markdown = markdown(r, &display, &crds, paragraphs);
    let channel_names: Vec<&'static str> = if channels == 2 {
        vec!["alpha", "stable"]
    } else {
        vec![*r.pick(&["stable", "stable", "alpha", "fast", "candidate"])]
    };
    let default_channel = channel_names[channel_names.len() - 1];
    let mut keywords = Vec::new();
    for _ in 0..r.range(2, 5) {
        let k = *r.pick(NOUNS);
        if !keywords.contains(&k) {
            keywords.push(k);
        }
    }
    let icon_size = r.range(1000, 4000);
    let categories = *r.pick(CATEGORIES);
    let capabilities = *r.pick(CAPABILITIES);
    Pkg {
        display,
        vendor,
        org,
        crds,
        short_desc: sentences(r, 1, 6, 16),
        markdown,
        keywords,
        categories,
        capabilities,
        channels: channel_names,
        default_channel,
        icon: icon(r, icon_size),
        name,
    }
}

// ---- YAML emission in opm's style ------------------------------------------------------------

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// Starts a line with `key` at column `ind` (a `- ` before it when `dash`).
fn key(out: &mut String, ind: usize, dash: bool, k: &str) {
    if dash {
        pad(out, ind - 2);
        out.push_str("- ");
    } else {
        pad(out, ind);
    }
    out.push_str(k);
    out.push(':');
}

/// `key:` opening a nested block.
fn block(out: &mut String, ind: usize, dash: bool, k: &str) {
    key(out, ind, dash, k);
    out.push('\n');
}

/// `key: value` with `value` already in YAML form.
fn kv(out: &mut String, ind: usize, dash: bool, k: &str, v: &str) {
    key(out, ind, dash, k);
    out.push(' ');
    out.push_str(v);
    out.push('\n');
}

/// `key: text` as a plain scalar folded at 80 columns, as go-yaml writes long strings.
fn kv_plain(out: &mut String, ind: usize, dash: bool, k: &str, text: &str) {
    let line_start = out.len();
    key(out, ind, dash, k);
    let mut col = out.len() - line_start;
    for (i, w) in text.split(' ').enumerate() {
        if i > 0 && col + 1 + w.len() > 80 {
            out.push('\n');
            pad(out, ind + 2);
            col = ind + 2;
        } else {
            out.push(' ');
            col += 1;
        }
        out.push_str(w);
        col += w.len();
    }
    out.push('\n');
}

/// `key: |` (or `|-`) with `text` as a literal block.
fn kv_literal(out: &mut String, ind: usize, dash: bool, k: &str, text: &str) {
    key(out, ind, dash, k);
    out.push_str(if text.ends_with('\n') {
        " |\n"
    } else {
        " |-\n"
    });
    for line in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        if !line.is_empty() {
            pad(out, ind + 2);
            out.push_str(line);
        }
        out.push('\n');
    }
}

fn alm_examples(pkg: &Pkg) -> String {
    let mut s = String::from("[\n");
    for (i, c) in pkg.crds.iter().enumerate() {
        let _ = write!(
            s,
            "  {{\n    \"apiVersion\": \"{}/{}\",\n    \"kind\": \"{}\",\n    \"metadata\": {{\n      \"name\": \"{}-sample\"\n    }},\n    \"spec\": {{\n",
            c.group,
            c.versions[c.versions.len() - 1],
            c.kind,
            c.kind.to_ascii_lowercase()
        );
        for (j, d) in c.spec.iter().enumerate() {
            let comma = if j + 1 < c.spec.len() { "," } else { "" };
            let _ = writeln!(
                s,
                "      \"{}\": {}{comma}",
                d.path,
                d.sample.unwrap_or("{}")
            );
        }
        s.push_str("    }\n  }");
        s.push_str(if i + 1 < pkg.crds.len() { ",\n" } else { "\n" });
    }
    s.push(']');
    s
}

fn write_descs(out: &mut String, k: &str, descs: &[Desc]) {
    if descs.is_empty() {
        return;
    }
    block(out, 8, false, k);
    for d in descs {
        kv_plain(out, 10, true, "description", &d.description);
        kv(out, 10, false, "displayName", d.display);
        kv(out, 10, false, "path", d.path);
        block(out, 10, false, "x-descriptors");
        pad(out, 10);
        out.push_str("- ");
        out.push_str(d.xdesc);
        out.push('\n');
    }
}

fn write_csv_metadata(out: &mut String, r: &mut Rng, pkg: &Pkg, version: &str, created: &str) {
    out.push_str("- type: olm.csv.metadata\n  value:\n    annotations:\n");
    kv_literal(out, 6, false, "alm-examples", &alm_examples(pkg));
    kv(out, 6, false, "capabilities", pkg.capabilities);
    kv(out, 6, false, "categories", pkg.categories);
    kv(
        out,
        6,
        false,
        "containerImage",
        &format!("quay.io/{}/{}:v{version}", pkg.org, pkg.name),
    );
    kv(out, 6, false, "createdAt", &format!("\"{created}\""));
    kv_plain(out, 6, false, "description", &pkg.short_desc);
    kv(
        out,
        6,
        false,
        "features.operators.openshift.io/disconnected",
        "\"false\"",
    );
    kv(
        out,
        6,
        false,
        "operators.operatorframework.io/builder",
        &format!("operator-sdk-v1.{}.{}", r.range(20, 38), r.range(0, 2)),
    );
    kv(
        out,
        6,
        false,
        "operators.operatorframework.io/project_layout",
        "go.kubebuilder.io/v4",
    );
    kv(
        out,
        6,
        false,
        "repository",
        &format!("https://github.com/{}/{}", pkg.org, pkg.name),
    );
    kv(out, 6, false, "support", pkg.vendor);
    out.push_str("    apiServiceDefinitions: {}\n    crdDescriptions:\n      owned:\n");
    for c in &pkg.crds {
        kv_plain(out, 8, true, "description", &c.description);
        kv(out, 8, false, "displayName", &c.kind);
        kv(out, 8, false, "kind", &c.kind);
        kv(out, 8, false, "name", &format!("{}.{}", c.plural, c.group));
        write_descs(out, "specDescriptors", &c.spec);
        write_descs(out, "statusDescriptors", &c.status);
        kv(out, 8, false, "version", c.versions[c.versions.len() - 1]);
    }
    kv_literal(out, 4, false, "description", &pkg.markdown);
    kv(out, 4, false, "displayName", &pkg.display);
    out.push_str(
        "    installModes:\n    - supported: true\n      type: OwnNamespace\n    - supported: true\n      type: SingleNamespace\n    - supported: false\n      type: MultiNamespace\n    - supported: true\n      type: AllNamespaces\n",
    );
    out.push_str("    keywords:\n");
    for k in &pkg.keywords {
        let _ = writeln!(out, "    - {k}");
    }
    let _ = write!(
        out,
        "    links:\n    - name: Documentation\n      url: https://docs.{org}.io/{name}\n    - name: Source Code\n      url: https://github.com/{org}/{name}\n",
        org = pkg.org,
        name = pkg.name
    );
    let _ = write!(
        out,
        "    maintainers:\n    - email: {name}-maintainers@{org}.io\n      name: {vendor} Team\n",
        org = pkg.org,
        name = pkg.name,
        vendor = pkg.vendor
    );
    kv(
        out,
        4,
        false,
        "maturity",
        if version.starts_with("0.") {
            "alpha"
        } else {
            "stable"
        },
    );
    kv(out, 4, false, "minKubeVersion", "1.25.0");
    let _ = write!(
        out,
        "    provider:\n      name: {}\n      url: https://{}.io\n",
        pkg.vendor, pkg.org
    );
}

/// One channel's entries over `bundles` (ascending versions): a replaces chain, where some
/// entries are z-stream side entries that the next chain entry skips, plus `skipRange`s.
/// `dangling` is the bundle the first entry replaces although it is not in the channel.
fn write_channel(
    out: &mut String,
    r: &mut Rng,
    pkg: &str,
    name: &str,
    bundles: &[(String, String)],
    dangling: Option<&str>,
) {
    out.push_str("---\nentries:\n");
    let n = bundles.len();
    let mut prev_main: Option<usize> = None;
    let mut pending: Vec<usize> = Vec::new();
    for (i, (b, ver)) in bundles.iter().enumerate() {
        let side = i > 0 && i + 1 < n && r.chance(12);
        kv(out, 2, true, "name", b);
        let replaces = match prev_main {
            Some(p) => Some(bundles[p].0.as_str()),
            None => dangling,
        };
        if let Some(rep) = replaces {
            kv(out, 2, false, "replaces", rep);
        }
        if side {
            pending.push(i);
            continue;
        }
        if i > 0 && r.chance(25) {
            kv(
                out,
                2,
                false,
                "skipRange",
                &format!("'>={} <{ver}'", bundles[0].1),
            );
        }
        if !pending.is_empty() {
            out.push_str("  skips:\n");
            for s in pending.drain(..) {
                let _ = writeln!(out, "  - {}", bundles[s].0);
            }
        }
        prev_main = Some(i);
    }
    let _ = write!(out, "name: {name}\npackage: {pkg}\nschema: olm.channel\n");
}

/// Writes one package's `catalog.yaml`; returns the bytes of its `olm.csv.metadata` values.
fn write_package(
    out: &mut String,
    r: &mut Rng,
    pkg: &Pkg,
    n_bundles: usize,
    others: &[String],
) -> usize {
    // Package blob.
    let _ = write!(
        out,
        "---\ndefaultChannel: {}\nicon:\n  base64data: {}\n  mediatype: {}\nname: {}\nschema: olm.package\n",
        pkg.default_channel, pkg.icon.0, pkg.icon.1, pkg.name
    );
    // Versions, ascending.
    let (mut major, mut minor, mut patch) = (r.range(0, 2), r.range(0, 9), 0usize);
    let mut bundles: Vec<(String, String)> = Vec::with_capacity(n_bundles);
    for _ in 0..n_bundles {
        let v = format!("{major}.{minor}.{patch}");
        bundles.push((format!("{}.v{v}", pkg.name), v));
        match r.range(0, 99) {
            0..=64 => patch += 1,
            65..=92 => {
                minor += 1;
                patch = 0;
            }
            _ => {
                major += 1;
                minor = 0;
                patch = 0;
            }
        }
    }
    // Channels: the first holds every bundle; a second one (stable) the newer half.
    for (ci, ch) in pkg.channels.iter().enumerate() {
        if ci == 0 {
            write_channel(out, r, &pkg.name, ch, &bundles, None);
        } else {
            let start = n_bundles / 2;
            let dangling = (start > 0 && r.chance(50)).then(|| bundles[start - 1].0.as_str());
            write_channel(out, r, &pkg.name, ch, &bundles[start..], dangling);
        }
    }
    // Bundles.
    let mut csv_bytes = 0;
    let year = r.range(2019, 2024);
    for (i, (b, v)) in bundles.iter().enumerate() {
        let digest = r.hex(64);
        let _ = write!(
            out,
            "---\nimage: quay.io/{org}/{name}-bundle@sha256:{digest}\nname: {b}\npackage: {name}\nproperties:\n",
            org = pkg.org,
            name = pkg.name
        );
        for c in &pkg.crds {
            for ver in &c.versions {
                let _ = write!(
                    out,
                    "- type: olm.gvk\n  value:\n    group: {}\n    kind: {}\n    version: {ver}\n",
                    c.group, c.kind
                );
            }
        }
        if r.chance(8) {
            out.push_str("- type: olm.gvk.required\n  value:\n    group: monitoring.coreos.com\n    kind: ServiceMonitor\n    version: v1\n");
        }
        let _ = write!(
            out,
            "- type: olm.package\n  value:\n    packageName: {}\n    version: {v}\n",
            pkg.name
        );
        if r.chance(3) && !others.is_empty() {
            let _ = write!(
                out,
                "- type: olm.package.required\n  value:\n    packageName: {}\n    versionRange: '>=0.1.0 <{}.0.0'\n",
                r.pick(others),
                r.range(2, 5)
            );
        }
        if r.chance(20) {
            let _ = write!(
                out,
                "- type: olm.maxOpenShiftVersion\n  value: \"4.{}\"\n",
                r.range(14, 20)
            );
        }
        let created = format!(
            "{}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            year + i / 12,
            i % 12 + 1,
            r.range(1, 28),
            r.range(0, 23),
            r.range(0, 59),
            r.range(0, 59)
        );
        let before = out.len();
        write_csv_metadata(out, r, pkg, v, &created);
        csv_bytes += out.len() - before;
        let _ = write!(
            out,
            "relatedImages:\n- image: gcr.io/kubebuilder/kube-rbac-proxy:v0.{}.0\n  name: kube-rbac-proxy\n- image: quay.io/{org}/{name}-bundle@sha256:{digest}\n  name: \"\"\n- image: quay.io/{org}/{name}@sha256:{}\n  name: manager\n",
            r.range(8, 16),
            r.hex(64),
            org = pkg.org,
            name = pkg.name
        );
        if r.chance(30) {
            let _ = write!(
                out,
                "- image: registry.example.com/{}/{}-{}:v{v}\n  name: operand\n",
                pkg.org,
                pkg.name,
                r.pick(NOUNS)
            );
        }
        out.push_str("schema: olm.bundle\n");
    }
    // One package in twenty deprecates its oldest bundle.
    if n_bundles >= 3 && r.chance(5) {
        let _ = write!(
            out,
            "---\nentries:\n- message: |\n    {b} is deprecated. Uninstall it and install {n} for support.\n  reference:\n    name: {b}\n    schema: olm.bundle\npackage: {p}\nschema: olm.deprecations\n",
            b = bundles[0].0,
            n = bundles[n_bundles - 1].0,
            p = pkg.name
        );
    }
    csv_bytes
}

struct GenStats {
    bytes: usize,
    csv_bytes: usize,
}

/// Writes a synthetic catalog with exactly `packages` packages, `channels` channels and
/// `bundles` bundles under `dir`, one `<package>/catalog.yaml` each.
fn generate(dir: &Path, packages: usize, channels: usize, bundles: usize, rich: bool) -> GenStats {
    assert!(channels >= packages && channels <= 2 * packages && bundles >= 2 * packages);
    let mut r = Rng::new(0x005E_ED0F_0CA7_A106);
    // Names.
    let mut seen = HashSet::new();
    let mut names = Vec::with_capacity(packages);
    for i in 0..packages {
        let noun = *r.pick(NOUNS);
        let suffix = *r.pick(SUFFIXES);
        let mut name = format!("{}-{noun}-{suffix}", r.pick(ADJECTIVES));
        if !seen.insert(name.clone()) {
            name = format!("{name}-{i}");
            seen.insert(name.clone());
        }
        names.push((name, noun, suffix));
    }
    // Bundles per package: at least 2, the rest skewed (a few packages have many bundles).
    let mut counts = vec![2usize; packages];
    for _ in 0..bundles - 2 * packages {
        let k = (r.unit().powf(1.5) * packages as f64) as usize % packages;
        counts[k * 7919 % packages] += 1;
    }
    // Channels: `channels - packages` packages, evenly spread, have two.
    let extra = channels - packages;
    let two = |i: usize| (i + 1) * extra / packages != i * extra / packages;
    let all_names: Vec<String> = names.iter().map(|(n, _, _)| n.clone()).collect();
    let mut stats = GenStats {
        bytes: 0,
        csv_bytes: 0,
    };
    let mut out = String::new();
    let (mut seen_bundles, mut big_bundles) = (0, 0);
    for (i, (name, noun, suffix)) in names.into_iter().enumerate() {
        // Big operators hold ~7% of the bundles (all of them with OLMCTL_BENCH_RICH=1).
        let big = rich || (big_bundles + counts[i]) * 100 <= (seen_bundles + counts[i]) * 7;
        seen_bundles += counts[i];
        if big {
            big_bundles += counts[i];
        }
        let pkg = make_pkg(&mut r, name, noun, suffix, if two(i) { 2 } else { 1 }, big);
        out.clear();
        let lo = i.saturating_sub(40);
        stats.csv_bytes += write_package(&mut out, &mut r, &pkg, counts[i], &all_names[lo..i]);
        stats.bytes += out.len();
        let d = dir.join(&pkg.name);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("catalog.yaml"), &out).expect("write catalog");
    }
    stats
}

// ---------------------------------------------------------------------------------------------

fn main() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&dir));
        return;
    }
    let only = std::env::var(ONLY_ENV).unwrap_or_default();
    let wanted = |n: &str| only.is_empty() || only.split(',').any(|w| w.trim() == n);
    let rich = std::env::var(RICH_ENV).is_ok_and(|v| v == "1");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let loadavg_before = loadavg();
    eprintln!("olmctl catalog benchmark: {threads} thread(s); every run is a fresh process");

    let mut rows = Vec::new();
    if wanted("fixture") {
        let fixture = std::env::var_os(FIXTURE_ENV).map_or_else(
            || {
                PathBuf::from(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../shared/fixtures/catalogs/v4.18"
                ))
            },
            PathBuf::from,
        );
        if fixture.is_dir() {
            // Warm the page cache so that run 1 is comparable with the others.
            let _ = par_files(
                &olmctl::fbc::load::list_files(&fixture).expect("list"),
                |t| t.len() as u64,
            );
            rows.push(measure("fixture-v4.18", &fixture, 5, None));
        } else {
            eprintln!(
                "fixture {} not found; skipping it (set {FIXTURE_ENV})",
                fixture.display()
            );
        }
    }
    for (name, key, packages, channels, bundles, runs) in [
        ("synthetic-small", "small", 300, 450, 3_000, 5),
        ("synthetic-large", "large", 3_000, 4_500, 30_000, 3),
    ] {
        if !wanted(key) {
            continue;
        }
        let tmp = tempfile::Builder::new()
            .prefix("olmctl-bench-")
            .tempdir()
            .expect("temp dir");
        // With OLMCTL_BENCH_OUT the catalog is kept there for inspection.
        let dir = std::env::var_os(OUT_ENV)
            .map_or_else(|| tmp.path().to_path_buf(), |d| PathBuf::from(d).join(name));
        let t = Instant::now();
        let st = generate(&dir, packages, channels, bundles, rich);
        eprintln!(
            "generated {name} in {:.1} s: {:.1} MB, olm.csv.metadata {:.1} KB/bundle on average",
            t.elapsed().as_secs_f64(),
            st.bytes as f64 / 1e6,
            st.csv_bytes as f64 / bundles as f64 / 1024.0
        );
        let expect = Expect {
            packages,
            channels,
            bundles,
        };
        rows.push(measure(name, &dir, runs, Some(&expect)));
        // `tmp` is removed here.
    }

    println!();
    println!(
        "{:<16} {:>8} {:>6} {:>8} {:>13} {:>7} {:>12} {:>11} {:>6}",
        "catalog",
        "size MB",
        "files",
        "bundles",
        "load+val ms",
        "MB/s",
        "peak RSS MB",
        "baseline ms",
        "ratio"
    );
    for r in &rows {
        println!(
            "{:<16} {:>8.1} {:>6} {:>8} {:>13.1} {:>7.1} {:>12.1} {:>11.1} {:>6.2}",
            r.name,
            r.mb,
            r.files,
            r.bundles,
            r.total,
            r.mb / (r.total / 1e3),
            r.rss_mb,
            r.raw,
            r.total / r.raw
        );
    }
    println!();
    println!(
        "{:<16} {:>8} {:>11} {:>9} {:>6} {:>12} {:>9} {:>9} {:>9} {:>10} {:>6} {:>6} {:>9}",
        "catalog",
        "load ms",
        "validate ms",
        "l+v CPU",
        "cores",
        "baseline CPU",
        "CPU ratio",
        "yaml tree",
        "tree/raw",
        "load/tree",
        "pkgs",
        "chans",
        "warnings"
    );
    for r in &rows {
        println!(
            "{:<16} {:>8.1} {:>11.1} {:>9.0} {:>6.2} {:>12.0} {:>9.2} {:>9.1} {:>9.2} {:>10.2} {:>6} {:>6} {:>9}",
            r.name,
            r.load,
            r.validate,
            r.total_cpu,
            r.load_cpu / r.load,
            r.raw_cpu,
            r.total_cpu / r.raw_cpu,
            r.tree,
            r.tree / r.raw,
            r.load / r.tree,
            r.packages,
            r.channels,
            r.warnings
        );
    }
    println!();
    println!(
        "Medians of 5 runs (3 for synthetic-large), each in a fresh process; times in ms; peak RSS \
         is the largest VmHWM after load+validate. baseline = read + saphyr-parser event scan of the \
         same files on the same {threads} thread(s), best of 2 passes per run; ratio = load+validate / baseline (wall time), \
         CPU ratio = the same in CPU time (user+sys, 10 ms ticks; robust to other load on the \
         machine). cores = load CPU / load wall. yaml tree = read + \
         olmctl::fbc::yaml::parse_documents (positioned nodes, no blob decoding); load/tree is what \
         blob decoding and merging add."
    );
    let busy: Vec<&str> = rows
        .iter()
        .filter(|r| threads > 1 && r.raw_cpu / r.raw < 0.7 * threads as f64)
        .map(|r| r.name.as_str())
        .collect();
    if !busy.is_empty() {
        println!(
            "NOTE: the embarrassingly parallel baseline used fewer than {:.1} of {threads} cores on {}: \
             the machine was busy; trust the CPU columns over wall times there.",
            0.7 * threads as f64,
            busy.join(", ")
        );
    }
    println!(
        "load average: before {}, after {}",
        loadavg_before,
        loadavg()
    );
    let find = |n: &str| rows.iter().find(|r| r.name == n);
    println!(
        "{:<16} {:>16} {:>8} {:>13} {:>12}",
        "catalog", "graphs+paths ms", "paths", "paths at head", "paths/s"
    );
    for r in &rows {
        println!(
            "{:<16} {:>16.1} {:>8} {:>13} {:>12.0}",
            r.name,
            r.graph,
            r.paths,
            r.paths_at_head,
            r.paths / (r.graph / 1e3)
        );
    }
    println!(
        "graphs+paths: build every channel graph, then resolve every entry's path to its head under \
         OLM v0 and under OLM v1 (one path per entry and semantics), in the same child after load."
    );
    println!();
    println!("Targets (reported, never asserted):");
    if let Some(r) = find("fixture-v4.18") {
        let ok = |b: bool| if b { "met" } else { "MISSED" };
        println!(
            "  fixture-v4.18 load+validate < 250 ms: {:.1} ms ({}); peak RSS < 60 MB: {:.1} MB ({})",
            r.total,
            ok(r.total < 250.0),
            r.rss_mb,
            ok(r.rss_mb < 60.0),
        );
    }
    if let Some(r) = find("synthetic-large") {
        println!(
            "  synthetic-large load+validate < 5 s: {:.2} s ({})",
            r.total / 1e3,
            if r.total < 5000.0 { "met" } else { "MISSED" }
        );
        println!(
            "  synthetic-large graphs + every path to the head < 2 s: {:.2} s ({})",
            r.graph / 1e3,
            if r.graph < 2000.0 { "met" } else { "MISSED" }
        );
    }
}
