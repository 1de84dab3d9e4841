//! olmctl-operator's conversion webhook (TLS) and probe servers against slow and greedy
//! clients, on the real binary (issue 28, items 3 and 4): connections that stall in the TLS
//! handshake, in the headers or in the body are closed by their deadlines; a hundred stalled
//! 8 MiB bodies cost a bounded amount of memory; with descriptors short and the webhook's
//! port flooded, the process neither spins nor stops answering `/healthz`. Every wait is
//! bounded; memory and CPU are read from /proc.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::pods::*;
use olmctl_testdata::procfs::{cpu_seconds, rss_kib};
use olmctl_testkit::process::{eventually, http_get};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SHORT: &[&str] = &[
    "--tls-handshake-timeout",
    "1s",
    "--header-timeout",
    "1s",
    "--body-timeout",
    "2s",
];

/// A TLS client trusting the replica's serving certificate.
fn connector(r: &Replica) -> tokio_rustls::TlsConnector {
    let crt = r._dir.path().join("certs").join("tls.crt");
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&crt).expect("crt") {
        roots.add(c.expect("pem")).expect("root");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

fn server_name() -> ServerName<'static> {
    ServerName::try_from("olmctl-operator-service.olmctl-system.svc").expect("name")
}

/// Reads until the peer closes (true) or 20 s pass (false); returns what was read too.
async fn closed<R: tokio::io::AsyncRead + Unpin>(mut io: R) -> (bool, String) {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let r = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match io.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    (r.is_ok(), String::from_utf8_lossy(&got).into_owned())
}

async fn ready(api_server: &str, r: &Replica) {
    let ok = eventually(Duration::from_secs(30), || r.ready()).await;
    assert!(ok, "ready ({api_server})\n{}", r.proc.output());
}

/// Item 4: every way to stall is ended by its deadline (shortened here by the flags).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_connections_are_closed_by_their_deadlines() {
    let api = operator_cluster();
    let server = api.serve_on_loopback();
    let r = start(&api, &server, "olmctl-operator-a", SHORT);
    ready(&server, &r).await;
    let tls = connector(&r);
    let (webhook, probe) = (r.webhook, r.probe);

    let no_tls =
        tokio::spawn(
            async move { closed(TcpStream::connect(webhook).await.expect("connect")).await },
        );
    let tls2 = tls.clone();
    let half_header_tls = tokio::spawn(async move {
        let tcp = TcpStream::connect(webhook).await.expect("connect");
        let mut s = tls2.connect(server_name(), tcp).await.expect("handshake");
        s.write_all(b"POST /convert HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        closed(s).await
    });
    let tls3 = tls.clone();
    let stalled_body = tokio::spawn(async move {
        let tcp = TcpStream::connect(webhook).await.expect("connect");
        let mut s = tls3.connect(server_name(), tcp).await.expect("handshake");
        s.write_all(b"POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"apiVersion\"")
            .await
            .expect("write");
        closed(s).await
    });
    let half_header_plain = tokio::spawn(async move {
        let mut s = TcpStream::connect(probe).await.expect("connect");
        s.write_all(b"GET /healthz HTTP/1.1\r\nHo")
            .await
            .expect("write");
        closed(s).await
    });
    let idle_keepalive = tokio::spawn(async move {
        let mut s = TcpStream::connect(probe).await.expect("connect");
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("write");
        closed(s).await
    });
    for (what, h) in [
        ("webhook: TCP that never starts TLS", no_tls),
        ("webhook: half a header over TLS", half_header_tls),
        ("webhook: a body that stalls", stalled_body),
        ("probes: half a header", half_header_plain),
        ("probes: idle after one request", idle_keepalive),
    ] {
        let (was_closed, got) = h.await.expect("task");
        eprintln!(
            "{what}: closed {was_closed}, answered {:?}",
            got.lines().next()
        );
        assert!(was_closed, "{what}: still open after 20 s");
        if what.contains("body") {
            assert!(got.starts_with("HTTP/1.1 408"), "{what}: {got}");
        }
        if what.contains("idle") {
            assert!(got.starts_with("HTTP/1.1 200"), "{what}: {got}");
        }
    }
    assert_eq!(
        http_get(r.probe, "/healthz").await.map(|x| x.0),
        Some(200),
        "still serving"
    );
}

/// Item 4: a hundred TLS connections that each send 8 MiB − 1 of a ConversionReview and
/// stall: the operator reads a few bodies at a time, each within its budget, and its memory
/// stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_stalled_bodies_cost_bounded_memory() {
    let api = operator_cluster();
    let server = api.serve_on_loopback();
    let r = start(&api, &server, "olmctl-operator-a", SHORT);
    ready(&server, &r).await;
    let pid = r.proc.pid();
    let baseline = rss_kib(pid);
    let tls = connector(&r);
    const LEN: usize = (8 << 20) - 1;
    let clients: Vec<_> = (0..100)
        .map(|_| {
            let tls = tls.clone();
            let addr: SocketAddr = r.webhook;
            tokio::spawn(async move {
                let tcp = TcpStream::connect(addr).await.ok()?;
                let mut s = tls.connect(server_name(), tcp).await.ok()?;
                let head = format!(
                    "POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    LEN + 1
                );
                s.write_all(head.as_bytes()).await.ok()?;
                let chunk = vec![b' '; 256 << 10];
                let mut sent = 0;
                // Bounded: a write the server does not read is given up after 10 s.
                let _ = tokio::time::timeout(Duration::from_secs(10), async {
                    while sent < LEN {
                        let n = chunk.len().min(LEN - sent);
                        if s.write_all(&chunk[..n]).await.is_err() {
                            break;
                        }
                        sent += n;
                    }
                    let _ = s.flush().await;
                })
                .await;
                let (_, got) = closed(s).await;
                Some((sent, got))
            })
        })
        .collect();
    let watch = tokio::spawn(async move {
        let mut peak = 0;
        let end = Instant::now() + Duration::from_secs(40);
        while Instant::now() < end {
            peak = peak.max(rss_kib(pid));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        peak
    });
    let mut timed_out = 0;
    let mut sent_total = 0;
    for c in clients {
        if let Some((sent, got)) = c.await.expect("task") {
            sent_total += sent;
            if got.starts_with("HTTP/1.1 408") {
                timed_out += 1;
            }
        }
    }
    watch.abort();
    let peak = rss_kib(pid).max(watch.await.unwrap_or(0));
    eprintln!(
        "RSS {baseline} KiB before, {peak} KiB at most; {} MiB sent in all; {timed_out} answered 408",
        sent_total >> 20
    );
    assert!(
        peak < baseline + 160 * 1024,
        "stalled bodies cost less than 160 MiB: {baseline} -> {peak} KiB"
    );
    assert!(timed_out > 0, "stalled bodies are answered 408");
    assert_eq!(
        http_get(r.probe, "/healthz").await.map(|x| x.0),
        Some(200),
        "still serving\n{}",
        r.proc.output()
    );
}

/// Item 3: under `ulimit -n 128`, 200 connections to the webhook's port that never speak: the
/// process does not spin on accept errors and `/healthz` keeps answering (the kubelet would
/// restart a pod whose liveness probe times out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptors_running_out_keep_healthz_answering() {
    let api = operator_cluster();
    let server = api.serve_on_loopback();
    let r = start_limited(&api, &server, "olmctl-operator-a", &[], Some(128));
    ready(&server, &r).await;
    let pid = r.proc.pid();
    let mut hogs = Vec::new();
    for _ in 0..200 {
        if let Ok(Ok(s)) =
            tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(r.webhook)).await
        {
            hogs.push(s);
        }
    }
    assert!(hogs.len() >= 150, "{} connections opened", hogs.len());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = cpu_seconds(pid);
    let window = Duration::from_secs(2);
    let mut answered = 0;
    let started = Instant::now();
    while started.elapsed() < window {
        if http_get(r.probe, "/healthz").await.map(|x| x.0) == Some(200) {
            answered += 1;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let used = cpu_seconds(pid) - before;
    eprintln!(
        "{} idle webhook connections: {used:.2} s of CPU in {:?}; /healthz answered {answered} times",
        hogs.len(),
        started.elapsed()
    );
    assert!(used < 0.5, "no busy loop: {used:.2} s of CPU");
    assert!(
        answered >= 5,
        "/healthz answered {answered} times\n{}",
        r.proc.output()
    );
    drop(hogs);
}
