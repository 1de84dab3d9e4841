//! A fuzz harness with fixed seeds for the readers that take input written by strangers: the
//! catalog loader (`catalog validate`), the bundle reader (`bundle validate`) and the policy
//! reader (`check upgrade --policy`). Hostile generators (aliases, deep nesting, control
//! characters and invalid UTF-8, huge scalars, many documents, top-level and key-position
//! lists, carriage returns in repaired scalars) are combined per seed; every run of the CLI
//! (as a child under an address-space limit, with a watchdog) must end by itself with exit 0,
//! 1 or 2, stay under a memory bound, and name a file in every finding.
//!
//! Deterministic: the same seeds give the same inputs on every machine, so a failure names a
//! seed that reproduces it (`HOSTILE_SEED=n` runs just that one).

#![cfg(unix)]

mod common;

use std::path::Path;

use common::bounded::run;
use common::cli::p;
use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use common::write_tree;

/// Peak RSS a run may reach (the inputs are at most a few MiB).
const MAX_RSS: u64 = 256 << 20;

/// SplitMix64: tiny, deterministic, good enough to pick recipes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// Nested anchors, each level aliasing the previous one `width` times (flow or block, some
/// through merge keys).
fn aliases(r: &mut Rng) -> Vec<u8> {
    let (depth, width) = (r.range(2, 12), r.range(2, 12));
    let mut s = String::from("a0: &a0 [\"lol\", {k: v}]\n");
    for i in 1..=depth {
        let refs = vec![format!("*a{}", i - 1); width as usize];
        if r.below(3) == 0 {
            s.push_str(&format!(
                "a{i}: &a{i}\n  <<: {{x{i}: 1}}\n  l: [{}]\n",
                refs.join(", ")
            ));
        } else {
            s.push_str(&format!("a{i}: &a{i} [{}]\n", refs.join(",")));
        }
    }
    s.into_bytes()
}

/// Deep nesting: flow lists or maps, JSON objects, or indented block maps.
fn deep(r: &mut Rng) -> Vec<u8> {
    let n = r.range(50, 12_000) as usize;
    match r.below(4) {
        0 => format!("{}{}", "[".repeat(n), "]".repeat(n)),
        1 => format!("{}1{}", "{a: ".repeat(n), "}".repeat(n)),
        2 => format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n)),
        _ => {
            let n = n.min(1500);
            (0..n)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                .collect()
        }
    }
    .into_bytes()
}

/// Random bytes from a hostile alphabet: controls, ESC, DEL, C1 and invalid UTF-8 among
/// YAML punctuation.
fn noise(r: &mut Rng) -> Vec<u8> {
    const ALPHABET: &[&[u8]] = &[
        b"\x00",
        b"\x1b[2J",
        b"\x07",
        b"\r",
        b"\n",
        b"\t",
        b"\x7f",
        b"\xc2\x85",
        b"\xff",
        b"\xc3",
        b"\xe2\x80\xae",
        b": ",
        b"- ",
        b"'",
        b"\"",
        b"{",
        b"}",
        b"[",
        b"]",
        b"&a ",
        b"*a",
        b"---\n",
        b"schema: olm.package\n",
        b"name: ",
        b"x",
        b"#",
        b"|\n",
        b"? ",
    ];
    let n = r.range(1, 400);
    (0..n)
        .flat_map(|_| ALPHABET[r.below(ALPHABET.len() as u64) as usize].to_vec())
        .collect()
}

/// One huge scalar (plain, quoted, block) in an otherwise valid blob.
fn huge_scalar(r: &mut Rng) -> Vec<u8> {
    let n = r.range(1 << 10, 3 << 20) as usize;
    let body = "x".repeat(n);
    match r.below(3) {
        0 => format!("schema: olm.package\nname: {body}\n"),
        1 => format!("schema: olm.package\nname: foo\ndescription: \"{body}\n y\"\n"),
        _ => format!("schema: olm.package\nname: foo\ndescription: |\n  {body}\n"),
    }
    .into_bytes()
}

/// Many documents: empty ones, empty objects, or small blobs.
fn many_docs(r: &mut Rng) -> Vec<u8> {
    let n = r.range(100, 60_000) as usize;
    match r.below(3) {
        0 => "---\n".repeat(n),
        1 => "{}\n".repeat(n),
        _ => (0..n.min(5_000))
            .map(|i| format!("---\nschema: olm.package\nname: p{i}\n"))
            .collect(),
    }
    .into_bytes()
}

/// Lists: at the top level, in a key position, or as a block list.
fn lists(r: &mut Rng) -> Vec<u8> {
    let n = r.range(10, 400_000) as usize;
    let flow = format!("[{}]", vec!["1"; n].join(","));
    match r.below(4) {
        0 => flow,
        1 => format!("schema: custom.x\nname: a\nv:\n- {flow}\n"),
        2 => format!("? {flow}\n: 1\n"),
        _ => "- 1\n".repeat(n.min(200_000)),
    }
    .into_bytes()
}

/// Under-indented quoted scalars with carriage returns, many of them.
fn repairs(r: &mut Rng) -> Vec<u8> {
    let n = r.range(1, 3_000);
    let mut s = String::from("a:\n");
    for i in 0..n {
        let brk = ["\n", "\r", "\r\n"][r.below(3) as usize];
        s.push_str(&format!("  k{i}: \"x{brk}y{brk}  z\"\n"));
    }
    s.into_bytes()
}

type Gen = fn(&mut Rng) -> Vec<u8>;
const GENERATORS: [Gen; 8] = [
    aliases,
    deep,
    noise,
    huge_scalar,
    many_docs,
    lists,
    repairs,
    noise,
];

/// One to three hostile pieces, joined as separate documents (or run together).
fn hostile(seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let pieces = r.range(1, 3);
    let mut out = Vec::new();
    for i in 0..pieces {
        if i > 0 && r.below(2) == 0 {
            out.extend_from_slice(b"\n---\n");
        }
        let g = GENERATORS[r.below(GENERATORS.len() as u64) as usize];
        out.extend(g(&mut r));
    }
    out
}

fn seeds(salt: u64, n: u64) -> Vec<u64> {
    match std::env::var("HOSTILE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(s) => vec![s],
        None => (0..n).map(|i| salt * 1_000 + i).collect(),
    }
}

/// Runs one case and checks the invariants; JSON output must name a file in every finding.
#[track_caller]
fn check(seed: u64, args: &[&str]) {
    let started = std::time::Instant::now();
    let r = run(args);
    eprintln!("seed {seed}: {:?}", started.elapsed());
    let code = r.bounded(MAX_RSS);
    if code == 2 {
        assert!(
            !r.stderr.trim().is_empty(),
            "seed {seed}: exit 2 without a message"
        );
        return;
    }
    let v: serde_json::Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("seed {seed}: output is not JSON ({e}): {}", r.stdout));
    for f in v["findings"].as_array().expect("findings") {
        let file = f["file"].as_str().unwrap_or_default();
        assert!(!file.is_empty(), "seed {seed}: finding without a file: {f}");
    }
    assert_eq!(v["passed"].as_bool(), Some(code == 0), "seed {seed}");
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn catalog_loader_survives_hostile_files() {
    for seed in seeds(1, 40) {
        let dir = tempfile::tempdir().expect("tmp");
        write(dir.path(), "pkg/catalog.yaml", &hostile(seed));
        // Every other case also gets a second hostile file and a valid one beside it.
        if seed % 2 == 0 {
            write(dir.path(), "pkg/more.json", &hostile(seed ^ 0x5555));
            write(dir.path(), "ok/catalog.yaml", common::PKG.as_bytes());
        }
        check(seed, &["catalog", "validate", p(dir.path()), "-o", "json"]);
    }
}

#[test]
fn bundle_reader_survives_hostile_manifests_and_metadata() {
    for seed in seeds(2, 30) {
        let b = write_tree(&[
            ("manifests/demo.clusterserviceversion.yaml", CSV),
            ("manifests/widgets.crd.yaml", CRD),
            ("metadata/annotations.yaml", ANNOTATIONS),
        ]);
        let target = match seed % 3 {
            0 => "manifests/hostile.yaml",
            1 => "metadata/annotations.yaml",
            _ => "manifests/demo.clusterserviceversion.yaml",
        };
        write(b.path(), target, &hostile(seed));
        check(seed, &["bundle", "validate", p(b.path()), "-o", "json"]);
    }
}

#[test]
fn policy_reader_survives_hostile_policies() {
    let base = common::root().join("tests/data/upgrade/base");
    for seed in seeds(3, 20) {
        let dir = tempfile::tempdir().expect("tmp");
        write(dir.path(), "policy.yaml", &hostile(seed));
        let policy = dir.path().join("policy.yaml");
        let r = run(&[
            "check",
            "upgrade",
            p(&base),
            p(&base),
            "--policy",
            p(&policy),
            "-o",
            "json",
        ]);
        // The policy is either refused (exit 2, naming the file) or read.
        if r.bounded(MAX_RSS) == 2 {
            assert!(
                r.stderr.contains("policy.yaml"),
                "seed {seed}: {}",
                r.stderr
            );
        }
    }
}

/// Catalog templates are input written by strangers too: hostile documents as a template, and
/// hostile text inside a basic and a semver template's fields, end by themselves with exit 0, 1
/// or 2 under the memory bound, and a refusal names the template.
#[test]
fn template_reader_survives_hostile_templates() {
    for seed in seeds(4, 24) {
        let dir = tempfile::tempdir().expect("tmp");
        let hostile_text = hostile(seed);
        let text = match seed % 3 {
            0 => hostile_text,
            1 => {
                let mut t = b"schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: p\n  description: ".to_vec();
                t.extend(hostile_text);
                t
            }
            _ => {
                let mut t = b"schema: olm.semver\nstable:\n  bundles:\n  - image: ".to_vec();
                t.extend(hostile_text);
                t
            }
        };
        write(dir.path(), "t.yaml", &text);
        write(dir.path(), "map.yaml", b"{}\n");
        let t = dir.path().join("t.yaml");
        let map = dir.path().join("map.yaml");
        let cache = dir.path().join("cache");
        let r = run(&[
            "catalog",
            "template",
            p(&t),
            "--bundles",
            p(&map),
            "--cache-dir",
            p(&cache),
            "--retries",
            "0",
            "--timeout",
            "2s",
        ]);
        if r.bounded(MAX_RSS) == 2 {
            assert!(r.stderr.contains("t.yaml"), "seed {seed}: {}", r.stderr);
        }
    }
}

#[test]
fn generators_are_deterministic_and_varied() {
    assert_eq!(hostile(7), hostile(7));
    let distinct: std::collections::BTreeSet<Vec<u8>> = (0..20).map(hostile).collect();
    assert!(distinct.len() >= 18);
}
