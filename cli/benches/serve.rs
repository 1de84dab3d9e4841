//! `olmctl catalog serve` under load: time to SERVING, RSS at idle, and RSS while 50 clients
//! (one connection each) stream `ListBundles` and call `GetBundle` in a loop, then RSS after.
//!
//! Catalogs: the v4.18 fixture (35 packages, 727 bundles) and a 10x catalog made of ten copies of
//! it under renamed packages (350 packages, 7,270 bundles; real bundle data, so the same shape).
//! `OLMCTL_LOAD_SECS` sets the load phase (default 60 s); `OLMCTL_LOAD_CLIENTS` the clients (50);
//! `OLMCTL_LOAD_CATALOGS` picks catalogs (`v4.18,10x`).
//! `OLMCTL_LOAD_ONLY_WRITE=DIR` writes the 10x catalog to DIR and stops. Any failed call fails
//! the bench (exit 1). Numbers are printed, nothing is asserted on time.
//!
//! With `OLMCTL_LOAD_API=http` (or `grpc,http`; default `grpc`) the same catalogs are served
//! with `--http --no-grpc` (catalogd's API) and each client (a thread, a new connection per
//! request) fetches `/api/v1/all` (every fourth time with gzip), then asks `metas` 20 times
//! (`package=P`, `schema=olm.package&name=P`, `schema=olm.bundle&package=P`, in turn over the
//! packages; every fourth with gzip). A body of the wrong length or a status other than 200
//! counts as an error.
//!
//! The server is the release `olmctl` binary.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[path = "../tests/common/http.rs"]
#[allow(dead_code)]
mod http;
#[path = "../../benches/support/proc.rs"]
mod proc;
#[path = "../../benches/support/tenfold.rs"]
mod tenfold;

use olmctl::serve::api;
use olmctl::serve::api::registry_client::RegistryClient;
use tonic_health::pb::health_client::HealthClient;

fn mb(kb: u64) -> String {
    format!("{:.1} MB", kb as f64 / 1024.0)
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Which API is served and loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Grpc,
    Http,
}

/// The HTTP API's base path in this benchmark.
const BASE: &str = "/catalogs/bench/api/v1";

/// Starts the server and waits until it answers (health SERVING, or `/all` for HTTP); the time
/// from spawn to then.
async fn start(dir: &Path, api: Api) -> (Server, Duration) {
    let port = free_port();
    let t0 = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_olmctl"));
    cmd.args(["catalog", "serve"]).arg(dir);
    match api {
        Api::Grpc => cmd.args(["--port", &port.to_string()]),
        Api::Http => cmd.args([
            "--http",
            &port.to_string(),
            "--no-grpc",
            "--catalog-name",
            "bench",
        ]),
    };
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start olmctl catalog serve");
    let server = Server { child, port };
    if api == Api::Http {
        tokio::task::spawn_blocking(move || http::wait_ready(port, &format!("{BASE}/all")))
            .await
            .unwrap();
        return (server, t0.elapsed());
    }
    let url = format!("http://127.0.0.1:{port}");
    loop {
        if let Ok(ch) = tonic::transport::Endpoint::from_shared(url.clone())
            .unwrap()
            .connect()
            .await
            && let Ok(r) = HealthClient::new(ch)
                .check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await
            && r.into_inner().status
                == tonic_health::pb::health_check_response::ServingStatus::Serving as i32
        {
            return (server, t0.elapsed());
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "never SERVING");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[derive(Default)]
struct Counts {
    list_streams: AtomicU64,
    list_messages: AtomicU64,
    get_bundles: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
}

/// One client: its own connection; ListBundles read to the end, then GetBundle for the next
/// few bundles it saw, until `stop`.
async fn client(port: u16, offset: usize, stop: Arc<AtomicBool>, counts: Arc<Counts>) {
    let ch = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut c = RegistryClient::new(ch).max_decoding_message_size(64 << 20);
    let mut keys: Vec<(String, String, String)> = Vec::new();
    let mut next = offset;
    while !stop.load(Ordering::Relaxed) {
        match c.list_bundles(api::ListBundlesRequest {}).await {
            Ok(s) => {
                let mut s = s.into_inner();
                let mut seen = Vec::new();
                loop {
                    match s.message().await {
                        Ok(Some(b)) => {
                            counts.list_messages.fetch_add(1, Ordering::Relaxed);
                            seen.push((b.package_name, b.channel_name, b.csv_name));
                        }
                        Ok(None) => break,
                        Err(_) => {
                            counts.errors.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                    }
                }
                counts.list_streams.fetch_add(1, Ordering::Relaxed);
                keys = seen;
            }
            Err(_) => {
                counts.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        for _ in 0..20 {
            if keys.is_empty() || stop.load(Ordering::Relaxed) {
                break;
            }
            let (p, ch, n) = &keys[next % keys.len()];
            next += 7;
            match c
                .get_bundle(api::GetBundleRequest {
                    pkg_name: p.clone(),
                    channel_name: ch.clone(),
                    csv_name: n.clone(),
                })
                .await
            {
                Ok(b) => {
                    counts.get_bundles.fetch_add(1, Ordering::Relaxed);
                    counts
                        .bytes
                        .fetch_add(b.into_inner().csv_json.len() as u64, Ordering::Relaxed);
                }
                Err(_) => {
                    counts.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// One HTTP client: `/all`, then 20 metas queries, until `stop`.
fn http_client(port: u16, offset: usize, stop: Arc<AtomicBool>, counts: Arc<Counts>) {
    let mut packages: Vec<String> = Vec::new();
    let mut expect_len = 0usize;
    let mut round = offset;
    while !stop.load(Ordering::Relaxed) {
        let gzip: &[(&str, &str)] = if round.is_multiple_of(4) {
            &[("Accept-Encoding", "gzip")]
        } else {
            &[]
        };
        round += 1;
        match http::request(port, "GET", &format!("{BASE}/all"), gzip) {
            Ok(a) if a.status == 200 => {
                counts.list_streams.fetch_add(1, Ordering::Relaxed);
                counts
                    .bytes
                    .fetch_add(a.body.len() as u64, Ordering::Relaxed);
                if gzip.is_empty() {
                    if packages.is_empty() {
                        expect_len = a.body.len();
                        packages = String::from_utf8_lossy(&a.body)
                            .lines()
                            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                            .filter(|v| v["schema"] == "olm.package")
                            .filter_map(|v| v["name"].as_str().map(str::to_string))
                            .collect();
                    } else if a.body.len() != expect_len {
                        counts.errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            _ => {
                counts.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        for i in 0..20 {
            if packages.is_empty() || stop.load(Ordering::Relaxed) {
                break;
            }
            let p = &packages[(offset + round * 20 + i) % packages.len()];
            let q = match i % 3 {
                0 => format!("package={p}"),
                1 => format!("schema=olm.package&name={p}"),
                _ => format!("schema=olm.bundle&package={p}"),
            };
            let gz: &[(&str, &str)] = if i.is_multiple_of(4) {
                &[("Accept-Encoding", "gzip")]
            } else {
                &[]
            };
            match http::request(port, "GET", &format!("{BASE}/metas?{q}"), gz) {
                Ok(a) if a.status == 200 && !a.body.is_empty() => {
                    counts.get_bundles.fetch_add(1, Ordering::Relaxed);
                    counts
                        .bytes
                        .fetch_add(a.body.len() as u64, Ordering::Relaxed);
                }
                _ => {
                    counts.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

struct Row {
    api: Api,
    name: String,
    ready: Duration,
    idle_kb: u64,
    peak_kb: u64,
    after_kb: u64,
    hwm_kb: u64,
    quarters: Vec<u64>,
    lists: u64,
    listed: u64,
    gets: u64,
    bytes: u64,
    errors: u64,
}

impl Row {
    /// The columns every table has: catalog, ready, RSS idle, peak/HWM, after.
    fn memory(&self) -> String {
        format!(
            "{:<7} {:>6} ms {:>9} {:>13} {:>9}",
            self.name,
            self.ready.as_millis(),
            mb(self.idle_kb),
            format!(
                "{}/{}",
                mb(self.peak_kb).trim_end_matches(" MB"),
                mb(self.hwm_kb)
            ),
            mb(self.after_kb)
        )
    }
}

async fn measure(name: &str, dir: &Path, secs: u64, clients: usize, api: Api) -> Row {
    let (mut server, ready) = start(dir, api).await;
    let pid = server.child.id().to_string();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_kb = proc::status_kb(&pid, "VmRSS:");
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let (mut tasks, mut threads) = (Vec::new(), Vec::new());
    for i in 0..clients {
        let (port, stop, counts) = (server.port, stop.clone(), counts.clone());
        match api {
            Api::Grpc => tasks.push(tokio::spawn(client(port, i * 13, stop, counts))),
            Api::Http => threads.push(std::thread::spawn(move || {
                http_client(port, i * 13, stop, counts)
            })),
        }
    }
    let t0 = Instant::now();
    let mut peak_kb = 0;
    // RSS at each quarter of the load: flat memory means these stay level.
    let mut quarters = Vec::new();
    while t0.elapsed() < Duration::from_secs(secs) {
        let rss = proc::status_kb(&pid, "VmRSS:");
        peak_kb = peak_kb.max(rss);
        if t0.elapsed().as_secs_f64() >= (quarters.len() + 1) as f64 * secs as f64 / 4.0 {
            quarters.push(rss);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    quarters.push(proc::status_kb(&pid, "VmRSS:"));
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    for t in threads {
        t.join().unwrap();
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after_kb = proc::status_kb(&pid, "VmRSS:");
    let hwm_kb = proc::status_kb(&pid, "VmHWM:");
    // SIGTERM: drains and exits 0.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let code = server.child.wait().unwrap().code();
    assert_eq!(code, Some(0), "{name}: exit after SIGTERM");
    Row {
        api,
        name: name.to_string(),
        ready,
        idle_kb,
        peak_kb: peak_kb.max(idle_kb),
        after_kb,
        hwm_kb,
        quarters,
        lists: counts.list_streams.load(Ordering::Relaxed),
        listed: counts.list_messages.load(Ordering::Relaxed),
        gets: counts.get_bundles.load(Ordering::Relaxed),
        bytes: counts.bytes.load(Ordering::Relaxed),
        errors: counts.errors.load(Ordering::Relaxed),
    }
}

fn main() {
    let secs: u64 = std::env::var("OLMCTL_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let clients: usize = std::env::var("OLMCTL_LOAD_CLIENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let tmp = tempfile::tempdir().unwrap();
    let (packages, bundles) = tenfold::tenfold(tmp.path());
    // OLMCTL_LOAD_ONLY_WRITE=DIR: write the 10x catalog there and stop (to serve it by hand).
    if let Ok(dir) = std::env::var("OLMCTL_LOAD_ONLY_WRITE") {
        let status = Command::new("cp")
            .arg("-r")
            .arg(tmp.path())
            .arg(&dir)
            .status()
            .unwrap();
        std::process::exit(if status.success() { 0 } else { 2 });
    }
    println!(
        "catalog serve: {clients} clients x {secs} s (gRPC: ListBundles to the end, then 20 GetBundle; HTTP: /all, then 20 metas), on 127.0.0.1; 10x = {packages} packages, {bundles} bundles"
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let only = std::env::var("OLMCTL_LOAD_CATALOGS").unwrap_or_else(|_| "v4.18,10x".into());
    let apis_wanted = std::env::var("OLMCTL_LOAD_API").unwrap_or_else(|_| "grpc".into());
    let mut apis = Vec::new();
    for a in apis_wanted.split(',') {
        match a {
            "grpc" => apis.push(Api::Grpc),
            "http" => apis.push(Api::Http),
            other => {
                eprintln!("OLMCTL_LOAD_API: unknown API {other:?} (grpc, http)");
                std::process::exit(2);
            }
        }
    }
    let rows = rt.block_on(async {
        let mut rows = Vec::new();
        for &api in &apis {
            if only.split(',').any(|c| c == "v4.18") {
                rows.push(measure("v4.18", &tenfold::fixture(), secs, clients, api).await);
            }
            if only.split(',').any(|c| c == "10x") {
                rows.push(measure("10x", tmp.path(), secs, clients, api).await);
            }
        }
        rows
    });
    if rows.iter().any(|r| r.api == Api::Grpc) {
        println!(
            "{:<7} {:>9} {:>9} {:>13} {:>9} {:>9} {:>9} {:>12} {:>9} {:>6}",
            "catalog",
            "ready",
            "RSS idle",
            "RSS peak/HWM",
            "RSS after",
            "lists",
            "listed",
            "GetBundle",
            "calls/s",
            "errors"
        );
    }
    let mut failed = false;
    for r in rows.iter().filter(|r| r.api == Api::Grpc) {
        println!(
            "{} {:>9} {:>9} {:>12} {:>9.0} {:>6}",
            r.memory(),
            r.lists,
            r.listed,
            r.gets,
            (r.lists + r.gets) as f64 / secs as f64,
            r.errors
        );
        failed |= r.errors > 0;
    }
    if rows.iter().any(|r| r.api == Api::Http) {
        println!(
            "HTTP (catalogd's API, --no-grpc): {:<7} {:>9} {:>9} {:>13} {:>9} {:>7} {:>9} {:>9} {:>6}",
            "catalog",
            "ready",
            "RSS idle",
            "RSS peak/HWM",
            "RSS after",
            "/all",
            "metas",
            "MB/s",
            "errors"
        );
    }
    for r in rows.iter().filter(|r| r.api == Api::Http) {
        println!(
            "HTTP (catalogd's API, --no-grpc): {} {:>7} {:>9} {:>9.1} {:>6}",
            r.memory(),
            r.lists,
            r.gets,
            r.bytes as f64 / 1e6 / secs as f64,
            r.errors
        );
        failed |= r.errors > 0;
    }
    for r in &rows {
        let q: Vec<String> = r.quarters.iter().map(|kb| mb(*kb)).collect();
        println!(
            "{:<7} {:?} RSS at each quarter of the load: {}",
            r.name,
            r.api,
            q.join(", ")
        );
    }
    if failed {
        eprintln!("calls failed under load");
        std::process::exit(1);
    }
}
