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
use olmctl_testdata::procfs::{cpu_seconds, peak_rss_kib, rss_kib};
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

/// Review 39: a review's share of the memory is reserved from its declared length before its
/// body is read, in the semaphore's first-come queue, so three connections declaring 8 MiB and
/// sending nothing held up every other review (two shares of 24 MiB taken, the third waiting at
/// the head of the queue) until the body timeout. Now a waiting share asks again instead of
/// queueing: with eight such connections stalled, a small review is answered while they wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_declaring_large_bodies_do_not_hold_up_small_ones() {
    let (_api, r) = ready_replica(&["--body-timeout", "60s"]).await;
    let tls = connector(&r);
    let mut stalled = Vec::new();
    for _ in 0..8 {
        let tcp = TcpStream::connect(r.webhook).await.expect("connect");
        let mut s = tls.connect(server_name(), tcp).await.expect("handshake");
        let head = "POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 8388608\r\n\r\n";
        s.write_all(head.as_bytes()).await.expect("head");
        s.flush().await.expect("flush");
        stalled.push(s);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let valid = format!(
        r#"{REVIEW_HEAD}"uid":"small","desiredAPIVersion":"olmctl.dev/v1","objects":[]}}}}"#
    );
    // A hang guard, well inside the 60 s the stalled bodies have.
    let answered = tokio::time::timeout(
        Duration::from_secs(20),
        post_review(&tls, r.webhook, valid.into_bytes()),
    )
    .await;
    let (code, got) = answered.expect("the small review is answered while the others stall");
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&got));
    // The stalled ones are still waiting for their bodies: nothing answered them.
    for s in &mut stalled {
        let mut b = [0u8; 64];
        let read = tokio::time::timeout(Duration::from_millis(100), s.read(&mut b)).await;
        assert!(read.is_err(), "a stalled review was answered: {read:?}");
    }
}

/// A replica started with `flags`, ready, and the API it talks to (which must live as long).
async fn ready_replica(flags: &[&str]) -> (olmctl_testkit::api::ApiServer, Replica) {
    let api = operator_cluster();
    let server = api.serve_on_loopback();
    let r = start(&api, &server, "olmctl-operator-a", flags);
    ready(&server, &r).await;
    (api, r)
}

/// POSTs `body` to the webhook over TLS and reads the whole answer: (status, body).
async fn post_review(
    tls: &tokio_rustls::TlsConnector,
    addr: SocketAddr,
    body: Vec<u8>,
) -> (u16, Vec<u8>) {
    use http_body_util::BodyExt;
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let s = tls.connect(server_name(), tcp).await.expect("handshake");
    let (mut tx, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(s))
        .await
        .expect("http handshake");
    tokio::spawn(conn);
    let req = http::Request::builder()
        .method("POST")
        .uri("/convert")
        .header("host", "olmctl-operator-service.olmctl-system.svc")
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .expect("request");
    let resp = tx.send_request(req).await.expect("response");
    let status = resp.status().as_u16();
    let got = resp.into_body().collect().await.expect("body").to_bytes();
    (status, got.to_vec())
}

/// `head`, then `unit` as often as fits in [`MAX_REVIEW`] bytes with `tail`, then `tail`:
/// (the body, how many units).
fn fill(head: &str, unit: &str, tail: &str) -> (Vec<u8>, usize) {
    const MAX_REVIEW: usize = 8 << 20;
    let n = (MAX_REVIEW - head.len() - tail.len()) / unit.len();
    let mut b = Vec::with_capacity(MAX_REVIEW);
    b.extend_from_slice(head.as_bytes());
    for _ in 0..n {
        b.extend_from_slice(unit.as_bytes());
    }
    b.extend_from_slice(tail.as_bytes());
    assert!(b.len() <= MAX_REVIEW);
    (b, n)
}

const REVIEW_HEAD: &str =
    r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"#;

/// Issue 39 item 7: 8 MiB ConversionReviews whose parsed form would be tens of times their size
/// (a `uid` of 2.8 million `[]`, `objects` nested 4 million deep, an object holding 4 million
/// zeros, 270,000 tiny objects, 1 million v1alpha1 windows that would grow 3.6 times in v1),
/// eight at once, twice: the operator refuses the `uid` that is not a string (400, as
/// controller-runtime's decoder does), refuses nesting deeper than Go's `encoding/json` reads,
/// converts what is a valid review and answers a Failure for an answer over its bound, and its
/// peak resident set stays within the shipped Deployment's 128 MiB limit; afterwards it still
/// answers `/healthz` and a valid review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_reviews_are_parsed_within_a_bounded_size() {
    // Time enough for eight 8 MiB reviews in a row in a debug build on a busy machine.
    let (_api, r) = ready_replica(&["--body-timeout", "300s"]).await;
    let pid = r.proc.pid();
    let baseline = rss_kib(pid);
    let tls = connector(&r);
    let req = |desired: &str, objects_head: &str| {
        format!(
            r#"{REVIEW_HEAD}"uid":"u-1","desiredAPIVersion":"{desired}","objects":[{objects_head}"#
        )
    };
    let deep = {
        let head = req("olmctl.dev/v1", "");
        let n = ((8 << 20) - head.len() - 3) / 2;
        let mut b = head.into_bytes();
        b.extend(std::iter::repeat_n(b'[', n));
        b.extend(std::iter::repeat_n(b']', n));
        b.extend_from_slice(b"]}}");
        (b, n)
    };
    let kinds: Vec<(&str, (Vec<u8>, usize))> = vec![
        (
            "uid of []",
            fill(
                &format!("{REVIEW_HEAD}\"uid\":["),
                "[],",
                r#"[]],"desiredAPIVersion":"olmctl.dev/v1","objects":[]}}"#,
            ),
        ),
        ("deep objects", deep),
        (
            "many zeros",
            fill(
                &req(
                    "olmctl.dev/v1",
                    r#"{"apiVersion":"olmctl.dev/v1alpha1","kind":"UpgradePolicy","metadata":{"name":"p"},"spec":{"maxUpgrade":"minor","x":["#,
                ),
                "0,",
                "0]}}]}}",
            ),
        ),
        (
            "many objects",
            fill(
                &req("olmctl.dev/v1alpha1", ""),
                r#"{"apiVersion":"olmctl.dev/v1"},"#,
                r#"{"apiVersion":"olmctl.dev/v1"}]}}"#,
            ),
        ),
        (
            "growing windows",
            fill(
                &req(
                    "olmctl.dev/v1",
                    r#"{"apiVersion":"olmctl.dev/v1alpha1","metadata":{"name":"w","namespace":"n"},"spec":{"maintenanceWindows":["#,
                ),
                r#""* 0+0","#,
                r#""* 0+0"]}}]}}"#,
            ),
        ),
    ];
    // Eight at once: three `[]` uids, one deep nesting and four that convert (two holding
    // zeros, one of many objects, one of growing windows); twice, so that what one round took
    // must have been given back for the next.
    let eight = [0, 0, 0, 1, 2, 2, 3, 4];
    for round in 1..=2 {
        let started = Instant::now();
        let clients: Vec<_> = eight
            .iter()
            .map(|&k| {
                let (tls, body, addr) = (tls.clone(), kinds[k].1.0.clone(), r.webhook);
                tokio::spawn(async move { (k, post_review(&tls, addr, body).await) })
            })
            .collect();
        for c in clients {
            let (k, (code, got)) = c.await.expect("client");
            let (what, n) = (kinds[k].0, kinds[k].1.1);
            let text = String::from_utf8_lossy(&got[..got.len().min(300)]).into_owned();
            match what {
                "uid of []" => {
                    assert_eq!(code, 400, "{what}: {text}");
                    assert!(
                        text.contains("uid") && text.contains("string"),
                        "{what}: {text}"
                    );
                }
                "deep objects" => {
                    assert_eq!(code, 400, "{what}: {text}");
                    assert!(text.contains("10000"), "{what}: {text}");
                }
                _ => {
                    assert_eq!(code, 200, "{what}: {text}");
                    let v: serde_json::Value = serde_json::from_slice(&got).expect("json");
                    let resp = &v["response"];
                    assert_eq!(resp["uid"], "u-1", "{what}");
                    let objs = resp["convertedObjects"].as_array().expect("list");
                    match what {
                        "many zeros" => {
                            assert_eq!(resp["result"]["status"], "Success", "{what}: {text}");
                            assert_eq!(objs[0]["spec"]["maxVersionJump"], "minor");
                            assert_eq!(objs[0]["spec"]["x"].as_array().map(Vec::len), Some(n + 1));
                        }
                        "many objects" => {
                            assert_eq!(resp["result"]["status"], "Success", "{what}: {text}");
                            assert_eq!(objs.len(), n + 1);
                            assert!(
                                objs.iter()
                                    .all(|o| o["apiVersion"] == "olmctl.dev/v1alpha1")
                            );
                        }
                        _ => {
                            assert_eq!(resp["result"]["status"], "Failure", "{what}: {text}");
                            assert!(objs.is_empty());
                            let m = resp["result"]["message"].as_str().unwrap_or_default();
                            assert!(
                                m.contains("UpgradePolicy n/w") && m.contains("bytes"),
                                "{what}: {m}"
                            );
                        }
                    }
                }
            }
        }
        eprintln!(
            "round {round}: 8 reviews of 8 MiB answered in {:?}; peak RSS {} KiB",
            started.elapsed(),
            peak_rss_kib(pid)
        );
    }
    let peak = peak_rss_kib(pid);
    eprintln!("RSS {baseline} KiB before; peak {peak} KiB");
    // The shipped Deployment's limit is 128 Mi: the peak must stay below, with room.
    assert!(
        peak < 112 * 1024,
        "hostile reviews stay within the pod's 128 MiB: peak {peak} KiB (from {baseline} KiB)"
    );
    assert_eq!(
        http_get(r.probe, "/healthz").await.map(|x| x.0),
        Some(200),
        "still serving\n{}",
        r.proc.output()
    );
    let valid = format!(
        r#"{REVIEW_HEAD}"uid":"after","desiredAPIVersion":"olmctl.dev/v1","objects":[{{"apiVersion":"olmctl.dev/v1alpha1","kind":"UpgradePolicy","metadata":{{"name":"p"}},"spec":{{"soak":"1h"}}}}]}}}}"#
    );
    let (code, got) = post_review(&tls, r.webhook, valid.into_bytes()).await;
    let v: serde_json::Value = serde_json::from_slice(&got).expect("json");
    assert_eq!(code, 200);
    assert_eq!(v["response"]["uid"], "after");
    assert_eq!(v["response"]["result"]["status"], "Success");
    assert_eq!(v["response"]["convertedObjects"][0]["spec"]["minAge"], "1h");
}

/// Issue 39 item 7: an answer the client does not read holds the review's share of the
/// webhook's memory only until the body timeout: then its connection is closed, before the
/// 8 MiB answer is all sent (without the deadline the whole answer arrived, however late).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_left_unread_is_given_up_at_the_body_timeout() {
    let (_api, r) = ready_replica(&["--body-timeout", "3s"]).await;
    let tls = connector(&r);
    // One object at the desired version, copied back as it is: an answer as large as the review.
    let (body, _) = fill(
        &format!(
            r#"{REVIEW_HEAD}"uid":"u","desiredAPIVersion":"olmctl.dev/v1","objects":[{{"apiVersion":"olmctl.dev/v1","x":""#
        ),
        "A",
        r#""}]}}"#,
    );
    let tcp = TcpStream::connect(r.webhook).await.expect("connect");
    let mut s = tls.connect(server_name(), tcp).await.expect("handshake");
    let head = format!(
        "POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.expect("write");
    s.write_all(&body).await.expect("write");
    s.flush().await.expect("flush");
    // Not reading for five times the timeout; then reading what was sent, until the close.
    tokio::time::sleep(Duration::from_secs(15)).await;
    let (was_closed, got) = closed(s).await;
    eprintln!(
        "unread answer: closed {was_closed} after {} of its {} bytes: {:?}",
        got.len(),
        body.len(),
        got.lines().next()
    );
    assert!(was_closed, "the connection is closed");
    assert!(got.starts_with("HTTP/1.1 200"), "{:?}", got.lines().next());
    assert!(
        got.len() < body.len(),
        "the answer is given up: {} bytes of about {} arrived",
        got.len(),
        body.len()
    );
    let valid = format!(
        r#"{REVIEW_HEAD}"uid":"after","desiredAPIVersion":"olmctl.dev/v1","objects":[]}}}}"#
    );
    let (code, got) = post_review(&tls, r.webhook, valid.into_bytes()).await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&got));
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
