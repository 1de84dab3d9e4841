//! Load + validate benchmark (`cargo bench --bench catalog`).
//!
//! Catalogs: the real v4.18 fixture (~13 MB), a synthetic OperatorHub-scale catalog (300
//! packages, 450 channels, 3,000 bundles, each package with an icon and each bundle with
//! `olm.csv.metadata`, like operator-registry's `BenchmarkLoadFS`), and the same at 10x.
//! Each measurement runs in a fresh child process (this executable again, with
//! `OLMCTL_BENCH_CHILD` set) so that its peak RSS (`VmHWM`) covers load + validate only. The
//! baseline is the floor of reading the same files and scanning them with the raw YAML event
//! parser (saphyr-parser), run in the same way; the ratio compares the two.
//! Nothing here asserts on time; it asserts that every catalog validates without errors.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use olmctl::diag::Severity;
use olmctl::fbc::node::Node;

const CHILD_ENV: &str = "OLMCTL_BENCH_CHILD";

fn vm_hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Child mode: one measurement, printed as `key=value` pairs.
fn child(mode: &str, dir: &Path) {
    let t0 = Instant::now();
    match mode {
        "olmctl" => {
            let loaded = olmctl::fbc::load::load(&[dir.to_path_buf()]).expect("load");
            let t_load = t0.elapsed();
            let findings = olmctl::checks::fbc::validate(&loaded);
            let total = t0.elapsed();
            let errors = findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .count();
            if errors > 0 {
                for f in findings.iter().take(5) {
                    eprintln!("{f:?}");
                }
            }
            println!(
                "load_ms={:.2} validate_ms={:.2} total_ms={:.2} hwm_kb={} errors={} files={} bundles={}",
                t_load.as_secs_f64() * 1e3,
                (total - t_load).as_secs_f64() * 1e3,
                total.as_secs_f64() * 1e3,
                vm_hwm_kb(),
                errors,
                loaded.files,
                loaded.cfg.bundles.len()
            );
        }
        _ => {
            // Same parallelism as the loader: one worker per core pulling files.
            let files = olmctl::fbc::load::list_files(dir).expect("list");
            let next = std::sync::atomic::AtomicUsize::new(0);
            let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
            let events: usize = std::thread::scope(|s| {
                let hs: Vec<_> = (0..workers)
                    .map(|_| {
                        s.spawn(|| {
                            let mut events = 0usize;
                            loop {
                                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                let Some(f) = files.get(i) else { break };
                                let text = std::fs::read_to_string(f).expect("read");
                                for ev in saphyr_parser::Parser::new_from_str(&text) {
                                    ev.expect("valid yaml");
                                    events += 1;
                                }
                            }
                            events
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().expect("worker")).sum()
            });
            println!(
                "total_ms={:.2} hwm_kb={} events={events}",
                t0.elapsed().as_secs_f64() * 1e3,
                vm_hwm_kb()
            );
        }
    }
}

fn run_child(mode: &str, dir: &Path) -> Vec<(String, f64)> {
    let out = Command::new(std::env::current_exe().expect("exe"))
        .env(CHILD_ENV, format!("{mode}:{}", dir.display()))
        .output()
        .expect("child runs");
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
        .collect()
}

fn get(m: &[(String, f64)], k: &str) -> f64 {
    m.iter().find(|(key, _)| key == k).map_or(0.0, |(_, v)| *v)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn dir_size(dir: &Path) -> u64 {
    olmctl::fbc::load::list_files(dir)
        .expect("list")
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum()
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn word(&mut self) -> &'static str {
        const WORDS: &[&str] = &[
            "operator",
            "cluster",
            "install",
            "upgrade",
            "manages",
            "the",
            "of",
            "database",
            "backup",
            "restore",
            "custom",
            "resource",
            "controller",
            "namespace",
            "scales",
            "replicas",
            "storage",
            "metrics",
            "secure",
            "automated",
            "lifecycle",
            "Kubernetes",
        ];
        WORDS[(self.next() % WORDS.len() as u64) as usize]
    }
    fn sentence(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| self.word())
            .collect::<Vec<_>>()
            .join(" ")
    }
    fn base64(&mut self, bytes: usize) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..bytes.div_ceil(3) * 4)
            .map(|_| A[(self.next() % 64) as usize] as char)
            .collect()
    }
}

fn to_node(v: &serde_json::Value) -> Node {
    let mut nodes = Vec::new();
    olmctl::fbc::json::parse_stream(&v.to_string(), |n| nodes.push(n)).expect("valid json");
    nodes.remove(0)
}

fn csv_metadata(rng: &mut Rng, pkg: &str, version: &str) -> serde_json::Value {
    let description = (0..12)
        .map(|i| format!("## Section {i}\n\n{}.\n", rng.sentence(40)))
        .collect::<String>();
    let example = serde_json::json!([{
        "apiVersion": format!("{pkg}.example.com/v1"),
        "kind": "Widget",
        "metadata": {"name": "example"},
        "spec": {"replicas": 3, "storage": {"size": "10Gi", "class": "standard"}, "notes": rng.sentence(30)}
    }]);
    let descriptors: Vec<serde_json::Value> = (0..12)
        .map(|i| {
            serde_json::json!({
                "description": rng.sentence(18),
                "displayName": format!("Field {i}"),
                "path": format!("spec.field{i}"),
            })
        })
        .collect();
    serde_json::json!({
        "annotations": {
            "alm-examples": serde_json::to_string_pretty(&example).expect("json"),
            "capabilities": "Seamless Upgrades",
            "categories": "Database",
            "containerImage": format!("quay.io/example/{pkg}:{version}"),
            "createdAt": "2026-01-01T00:00:00Z",
            "description": rng.sentence(14),
            "repository": format!("https://github.com/example/{pkg}"),
        },
        "apiServiceDefinitions": {},
        "crdDescriptions": {"owned": [{
            "description": rng.sentence(10),
            "displayName": "Widget",
            "kind": "Widget",
            "name": format!("widgets.{pkg}.example.com"),
            "specDescriptors": descriptors,
            "statusDescriptors": [{"description": rng.sentence(8), "displayName": "Phase", "path": "phase"}],
            "version": "v1",
        }]},
        "description": description,
        "displayName": format!("{pkg} operator"),
        "installModes": [
            {"supported": true, "type": "OwnNamespace"},
            {"supported": true, "type": "SingleNamespace"},
            {"supported": false, "type": "MultiNamespace"},
            {"supported": true, "type": "AllNamespaces"},
        ],
        "keywords": ["database", "operator"],
        "links": [{"name": "Docs", "url": format!("https://example.com/{pkg}")}],
        "maintainers": [{"email": "team@example.com", "name": "Team"}],
        "maturity": "stable",
        "minKubeVersion": "1.25.0",
        "provider": {"name": "Example"},
    })
}

/// Writes a synthetic catalog: `packages` packages of 10 bundles each; every other package
/// has a second channel.
fn generate(dir: &Path, packages: usize) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for p in 0..packages {
        let pkg = format!("synthetic-operator-{p:05}");
        let mut blobs = Vec::new();
        blobs.push(serde_json::json!({
            "schema": "olm.package",
            "name": pkg,
            "defaultChannel": "stable",
            "description": rng.sentence(30),
            "icon": {"base64data": rng.base64(3000), "mediatype": "image/png"},
        }));
        let names: Vec<String> = (0..10).map(|i| format!("{pkg}.v1.{i}.0")).collect();
        let entries: Vec<serde_json::Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut e = serde_json::json!({"name": n});
                if i > 0 {
                    e["replaces"] = names[i - 1].clone().into();
                }
                if i % 3 == 2 {
                    e["skipRange"] = format!(">=1.0.0 <1.{i}.0").into();
                }
                if i == 9 {
                    e["skips"] = serde_json::json!([format!("{pkg}.v0.9.0")]);
                }
                e
            })
            .collect();
        blobs.push(serde_json::json!({"schema": "olm.channel", "package": pkg, "name": "stable", "entries": entries}));
        if p % 2 == 0 {
            let fast: Vec<serde_json::Value> = (5..10)
                .map(|i| serde_json::json!({"name": names[i], "replaces": names[i - 1]}))
                .collect();
            blobs.push(serde_json::json!({"schema": "olm.channel", "package": pkg, "name": "fast", "entries": fast}));
        }
        for (i, n) in names.iter().enumerate() {
            let version = format!("1.{i}.0");
            blobs.push(serde_json::json!({
                "schema": "olm.bundle",
                "package": pkg,
                "name": n,
                "image": format!("quay.io/example/{pkg}-bundle@sha256:{:016x}{:016x}{:016x}{:016x}", rng.next(), rng.next(), rng.next(), rng.next()),
                "properties": [
                    {"type": "olm.gvk", "value": {"group": format!("{pkg}.example.com"), "kind": "Widget", "version": "v1"}},
                    {"type": "olm.gvk", "value": {"group": format!("{pkg}.example.com"), "kind": "Gadget", "version": "v1"}},
                    {"type": "olm.gvk", "value": {"group": format!("{pkg}.example.com"), "kind": "Gizmo", "version": "v1alpha1"}},
                    {"type": "olm.package", "value": {"packageName": pkg, "version": version}},
                    {"type": "olm.csv.metadata", "value": csv_metadata(&mut rng, &pkg, &version)},
                ],
                "relatedImages": [
                    {"name": "operator", "image": format!("quay.io/example/{pkg}:{version}")},
                    {"name": "", "image": format!("quay.io/example/{pkg}-bundle:{version}")},
                ],
            }));
        }
        let nodes: Vec<Node> = blobs.iter().map(to_node).collect();
        let cfg_dir = dir.join(&pkg);
        std::fs::create_dir_all(&cfg_dir).expect("mkdir");
        let mut out = String::new();
        olmctl::fbc::write::write_blobs(&nodes, olmctl::fbc::write::Format::Yaml, &mut out);
        std::fs::write(cfg_dir.join("catalog.yaml"), out).expect("write");
    }
}

struct Row {
    name: String,
    mb: f64,
    files: f64,
    bundles: f64,
    load: f64,
    validate: f64,
    total: f64,
    rss_mb: f64,
    base: f64,
    base_rss_mb: f64,
}

fn measure(name: &str, dir: &Path, runs: usize) -> Row {
    let mut load = Vec::new();
    let mut validate = Vec::new();
    let mut total = Vec::new();
    let mut rss = Vec::new();
    let mut first = Vec::new();
    for _ in 0..runs {
        let m = run_child("olmctl", dir);
        assert_eq!(
            get(&m, "errors"),
            0.0,
            "{name}: the catalog must validate without errors"
        );
        load.push(get(&m, "load_ms"));
        validate.push(get(&m, "validate_ms"));
        total.push(get(&m, "total_ms"));
        rss.push(get(&m, "hwm_kb"));
        first = m;
    }
    let mut base = Vec::new();
    let mut base_rss = Vec::new();
    for _ in 0..runs {
        let m = run_child("baseline", dir);
        base.push(get(&m, "total_ms"));
        base_rss.push(get(&m, "hwm_kb"));
    }
    Row {
        name: name.to_string(),
        mb: dir_size(dir) as f64 / 1e6,
        files: get(&first, "files"),
        bundles: get(&first, "bundles"),
        load: median(load),
        validate: median(validate),
        total: median(total),
        rss_mb: median(rss) / 1024.0,
        base: median(base),
        base_rss_mb: median(base_rss) / 1024.0,
    }
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        let (mode, dir) = spec.split_once(':').expect("mode:dir");
        child(mode, Path::new(dir));
        return;
    }
    // `cargo bench` passes `--bench`; any other argument is a filter on catalog names.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |n: &str| filter.is_empty() || filter.iter().any(|f| n.contains(f.as_str()));
    let fixture = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/catalogs/v4.18"
    ));
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut rows = Vec::new();
    if wanted("fixture-v4.18") {
        rows.push(measure("fixture-v4.18", &fixture, 5));
    }
    for (name, packages, runs) in [("synthetic-1x", 300, 5), ("synthetic-10x", 3000, 3)] {
        if !wanted(name) {
            continue;
        }
        let dir = tmp.path().join(name);
        let t = Instant::now();
        generate(&dir, packages);
        eprintln!("generated {name} in {:.1} s", t.elapsed().as_secs_f64());
        rows.push(measure(name, &dir, runs));
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!(
        "\n{:<15} {:>8} {:>6} {:>8} {:>9} {:>11} {:>9} {:>8} {:>9} {:>11} {:>12} {:>6}",
        "catalog",
        "size MB",
        "files",
        "bundles",
        "load ms",
        "validate ms",
        "total ms",
        "MB/s",
        "peak MB",
        "scan ms",
        "scan peak MB",
        "ratio"
    );
    for r in &rows {
        println!(
            "{:<15} {:>8.1} {:>6} {:>8} {:>9.1} {:>11.1} {:>9.1} {:>8.0} {:>9.1} {:>11.1} {:>12.1} {:>6.2}",
            r.name,
            r.mb,
            r.files,
            r.bundles,
            r.load,
            r.validate,
            r.total,
            r.mb / (r.total / 1e3),
            r.rss_mb,
            r.base,
            r.base_rss_mb,
            r.total / r.base
        );
    }
    println!(
        "\nmedians over 5 runs (3 for synthetic-10x), each in a fresh process; ratio = olmctl load+validate / raw saphyr event scan of the same files on the same number of threads (read + tokenize only)"
    );
    println!("targets: fixture-v4.18 < 250 ms and < 60 MB peak; synthetic-10x < 5000 ms");
}
