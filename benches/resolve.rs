//! OLM v0 resolver benchmarks. The solver (`olmctl::resolve::solver::solve`) on the input of OLM's
//! `pkg/controller/registry/resolver/solver/bench_test.go` (`BenchmarkSolve`), against a
//! baseline in the same run.
//!
//! - The input: `length` variables; each is mandatory with probability 0.1, has a
//!   dependency on 1 to 5 other variables with probability 0.15 and conflicts with 1 or 2
//!   others with probability 0.05 (bench_test.go's constants), drawn from a seeded
//!   SplitMix64 rather than Go's math/rand (so the same distribution, not the same
//!   instance). 256 variables is OLM's benchmark; 512 and 1,024 show how it grows.
//! - The baseline: the same 256 variables without their constraints but the mandatory
//!   ones (the circuit, the search over the anchors and the cardinality step only).
//!
//! Measured in a debug build (`cargo test --bench resolve`, 2 shared cores; no release build
//! was run): baseline 1.4 ms; 256 variables 2.1 ms (1.5x, 33 installed), 512 variables
//! 5.5 ms (4.0x), 1,024 variables 42.7 ms (32x; that instance is unsatisfiable and its
//! failed constraints are shrunk by one solve per member).
//!
//! The resolver over real catalogs: namespace `team` resolved with one Subscription, every
//! package directory of `shared/fixtures/catalogs/v4.18` its own CatalogSource (35 catalogs,
//! loaded before timing; each resolution builds their snapshots, as OLM's cache does on a
//! miss). Baseline: a Subscription without dependencies (kube-green). Debug build, same
//! run: baseline 31.3 ms; rabbitmq-messaging-topology-operator, whose dependency
//! rabbitmq-cluster-operator comes from another catalog, 72.3 ms (2.3x).
//!
//! `cargo bench --bench resolve` (a release build); prints the median of 15 rounds. Measured
//! so on 2 cores with a debug build running beside it: the 35 catalogs' baseline 17.0 ms,
//! rabbitmq-messaging-topology-operator 22.1 ms (1.3x); the solver's baseline 0.056 ms, 256
//! variables 0.144 ms (2.6x), 512 variables 0.334 ms (6.0x), 1,024 variables 1.299 ms (23.4x).

use std::time::{Duration, Instant};

use olmctl::resolve::solver::{BasicVariable, Constraint, solve};

/// SplitMix64, for a fixed input without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn float(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// bench_test.go's `BenchmarkInput` generator for `length` variables.
fn input(length: usize, seed: u64) -> Vec<BasicVariable> {
    const P_MANDATORY: f64 = 0.1;
    const P_DEPENDENCY: f64 = 0.15;
    const N_DEPENDENCY: usize = 6;
    const P_CONFLICT: f64 = 0.05;
    const N_CONFLICT: usize = 3;
    let mut rnd = Rng(seed);
    let other = |rnd: &mut Rng, i: usize| loop {
        let y = rnd.below(length);
        if y != i {
            return y.to_string();
        }
    };
    (0..length)
        .map(|i| {
            let mut c = Vec::new();
            if rnd.float() < P_MANDATORY {
                c.push(Constraint::Mandatory);
            }
            if rnd.float() < P_DEPENDENCY {
                let n = rnd.below(N_DEPENDENCY - 1) + 1;
                let d: Vec<String> = (0..n).map(|_| other(&mut rnd, i)).collect();
                c.push(Constraint::dependency(d));
            }
            if rnd.float() < P_CONFLICT {
                let n = rnd.below(N_CONFLICT - 1) + 1;
                for _ in 0..n {
                    c.push(Constraint::conflict(other(&mut rnd, i)));
                }
            }
            BasicVariable::new(i.to_string(), c)
        })
        .collect()
}

/// The median of 15 solves, in seconds; the outcome of the last.
fn seconds(vars: &[BasicVariable]) -> (f64, String) {
    let mut times: Vec<Duration> = Vec::new();
    let mut outcome = String::new();
    for _ in 0..15 {
        let start = Instant::now();
        let r = solve(vars);
        times.push(start.elapsed());
        outcome = match r {
            Ok(chosen) => format!("{} installed", chosen.len()),
            Err(e) => format!(
                "{} constraints not satisfiable",
                e.to_string().matches(", ").count() + 1
            ),
        };
    }
    times.sort();
    (times[times.len() / 2].as_secs_f64(), outcome)
}

/// The median of 15 resolutions of namespace `team` with one Subscription to `package` of
/// catalog `package/olm`, over every package directory of the v4.18 fixture catalog as its
/// own CatalogSource (35 catalogs, loaded before timing); the outcome of the last.
fn namespace_seconds(
    catalogs: &[(
        olmctl::resolve::entry::SourceKey,
        olmctl::fbc::decl::DeclarativeConfig,
    )],
    package: &str,
) -> (f64, String) {
    use olmctl::resolve::state::ClusterState;
    use olmctl::resolve::steps::{CatalogContent, Request, resolve};
    let mut state = ClusterState::default();
    state.add(
        &serde_json::json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
        "metadata": {"name": "og", "namespace": "team"}}),
    );
    state.add(
        &serde_json::json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": {"name": package, "namespace": "team"},
        "spec": {"name": package, "source": package, "sourceNamespace": "olm"}}),
    );
    let req = Request {
        namespace: "team".into(),
        global_namespace: "olm".into(),
        state: &state,
        catalogs: catalogs
            .iter()
            .map(|(key, cfg)| CatalogContent {
                key: key.clone(),
                cfg,
            })
            .collect(),
    };
    let mut times = Vec::new();
    let mut outcome = String::new();
    for _ in 0..15 {
        let start = Instant::now();
        let r = resolve(&req);
        times.push(start.elapsed());
        outcome = match r.result {
            Ok(p) => format!("{} to install", p.chosen.len()),
            Err(e) => format!("fails: {e}"),
        };
    }
    times.sort();
    (times[times.len() / 2].as_secs_f64(), outcome)
}

fn fixture_catalogs() -> Vec<(
    olmctl::resolve::entry::SourceKey,
    olmctl::fbc::decl::DeclarativeConfig,
)> {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/catalogs/v4.18");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("the v4.18 fixture catalog")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| {
            let name = d
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let cfg = olmctl::fbc::load::load(&[d]).expect("loads").cfg;
            (olmctl::resolve::entry::SourceKey::new(name, "olm"), cfg)
        })
        .collect()
}

fn main() {
    let catalogs = fixture_catalogs();
    let (base, outcome) = namespace_seconds(&catalogs, "kube-green");
    println!(
        "baseline, {} catalogs, a Subscription without dependencies (kube-green): {:.3} ms ({outcome})",
        catalogs.len(),
        base * 1e3
    );
    let (s, outcome) = namespace_seconds(&catalogs, "rabbitmq-messaging-topology-operator");
    println!(
        "  a Subscription with a dependency in another catalog (rabbitmq-messaging-topology-operator): {:.3} ms  {:.1}x the baseline  ({outcome})",
        s * 1e3,
        s / base
    );
    let anchors_only: Vec<BasicVariable> = input(256, 9)
        .into_iter()
        .map(|mut v| {
            v.constraints.retain(|c| *c == Constraint::Mandatory);
            v
        })
        .collect();
    let (base, _) = seconds(&anchors_only);
    println!(
        "baseline, 256 variables, only the mandatory constraints: {:.3} ms",
        base * 1e3
    );
    for length in [256, 512, 1024] {
        let (s, outcome) = seconds(&input(length, 9));
        println!(
            "  {length:>5} variables (bench_test.go's mix): {:>8.3} ms  {:>6.1}x the baseline  ({outcome})",
            s * 1e3,
            s / base
        );
    }
}
