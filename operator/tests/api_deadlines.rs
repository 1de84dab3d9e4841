//! Every API call of olmctl-operator has a deadline (issue 28 item 10): the client's layer
//! in-process (a call, a stalled body and a watch's headers end at the deadline; a quiet
//! watch stream does not), and the real binary against an API server that accepts
//! connections and never answers on them.
//!
//! The leader whose API server goes silent while it leads is `replicas.rs`'s
//! `a_standby_takes_over_a_killed_leader_and_a_cut_off_leader_stops_first`: it stops acting
//! (exit 1, `leader election lost`) before the standby acquires.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::pods::*;
use futures::StreamExt;
use http::{Request, Response};
use http_body_util::StreamBody;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, WatchParams};
use olmctl_operator::client::{BoxError, Deadline, is_watch};
use olmctl_testkit::process::{eventually, http_get};

/// A body that never sends anything.
type Silent = StreamBody<futures::stream::Pending<Result<http_body::Frame<Bytes>, BoxError>>>;

/// An API server that answers `GET /api/v1/namespaces/default/pods/p` and watches of pods
/// with headers only, and never answers anything else.
#[derive(Clone)]
struct Stalling;

impl tower_service::Service<Request<kube::client::Body>> for Stalling {
    type Response = Response<Silent>;
    type Error = BoxError;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Response<Silent>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let headers_only = req.uri().path().ends_with("/pods/p")
            || (is_watch(req.uri()) && req.uri().path().ends_with("/pods"));
        Box::pin(async move {
            if !headers_only {
                futures::future::pending::<()>().await;
            }
            Ok(Response::new(StreamBody::new(futures::stream::pending())))
        })
    }
}

const SERVER: &str = "https://api.example.test:6443";
const DEADLINE: Duration = Duration::from_millis(300);

fn stalling_client() -> kube::Client {
    kube::client::ClientBuilder::new(Stalling, "default")
        .with_layer(&Deadline {
            timeout: DEADLINE,
            server: SERVER.into(),
        })
        .build()
}

/// `f`'s error, which comes at the deadline (the test fails at 10 s).
async fn fails<T>(f: impl std::future::Future<Output = Result<T, kube::Error>>) -> String {
    let start = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("ended by the deadline, not by the test");
    let took = start.elapsed();
    assert!(
        took >= DEADLINE && took < Duration::from_secs(5),
        "{took:?}"
    );
    match r {
        Ok(_) => panic!("an answer from a server that gives none"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn a_call_with_no_answer_or_a_stalled_body_ends_at_the_deadline_naming_the_server_and_request()
 {
    let client = stalling_client();
    let e = fails(client.apiserver_version()).await;
    assert!(
        e.contains("no answer from the API server https://api.example.test:6443 within 300ms (GET /version)"),
        "{e}"
    );
    // Headers, then nothing: the body is within the same deadline.
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let e = fails(pods.get("p")).await;
    assert!(
        e.contains("within 300ms (GET /api/v1/namespaces/default/pods/p)"),
        "{e}"
    );
}

#[tokio::test]
async fn a_watch_has_the_deadline_for_its_headers_and_its_quiet_stream_is_left_open() {
    let client = stalling_client();
    let maps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let e = fails(maps.watch(&WatchParams::default(), "0")).await;
    assert!(
        e.contains("within 300ms (GET /api/v1/namespaces/default/configmaps watch)"),
        "{e}"
    );
    let pods: Api<Pod> = Api::default_namespaced(client);
    let stream = pods
        .watch(&WatchParams::default(), "0")
        .await
        .expect("headers");
    let mut stream = stream.boxed();
    // Ten deadlines of silence: still open, no error (the watcher's idle timeout is its own).
    assert!(
        tokio::time::timeout(DEADLINE * 10, stream.next())
            .await
            .is_err(),
        "the quiet watch ended"
    );
}

/// A TCP proxy to `upstream`. While silent, it accepts connections and never answers on them,
/// for ever (the sockets stay open): a connection to an API server that hung, or that a
/// load balancer dropped without a reset. Connections made after it speaks again reach the
/// API server.
struct Proxy {
    url: String,
    silent: Arc<AtomicBool>,
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

fn proxy(upstream: &str) -> Proxy {
    let upstream: SocketAddr = upstream
        .trim_start_matches("http://")
        .parse()
        .expect("upstream address");
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", l.local_addr().expect("addr"));
    let silent = Arc::new(AtomicBool::new(true));
    let s = silent.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming().flatten() {
            if s.load(Ordering::SeqCst) {
                held.push(c);
                continue;
            }
            let Ok(u) = TcpStream::connect(upstream) else {
                continue;
            };
            let (c2, u2) = (c.try_clone().expect("clone"), u.try_clone().expect("clone"));
            std::thread::spawn(move || pipe(c, u));
            std::thread::spawn(move || pipe(u2, c2));
        }
    });
    Proxy { url, silent }
}

/// A replica started while its API server does not answer (fast election timings, a 2 s
/// request timeout), once its calls have ended with errors naming the server and the request.
async fn start_cut_off(api: &olmctl_testkit::api::ApiServer) -> (Proxy, Replica) {
    let p = proxy(&api.serve_on_loopback());
    let a = start(
        api,
        &p.url,
        "olmctl-operator-a",
        &[FAST_ELECTION.as_slice(), &["--request-timeout", "2s"]].concat(),
    );
    // It keeps trying, every call bounded (the election's within 1 s, the others within 2 s,
    // naming the server and the request).
    let no_answer = format!("no answer from the API server {} within 2s (GET /", p.url);
    let tried = eventually(Duration::from_secs(20), || async {
        let log = a.proc.output();
        log.contains("error retrieving resource lock")
            && log.contains(&no_answer)
            && log.contains("GET /version)")
    })
    .await;
    assert!(tried, "{}", a.proc.output());
    (p, a)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_off_at_start_it_retries_with_bounded_calls_and_leads_once_the_api_server_answers() {
    // Before: the first call (GET /version) had no deadline, so a replica that started while
    // its API server did not answer waited on that connection for ever: it never tried the
    // Lease, never listed, never became ready, and SIGTERM killed it by the signal.
    let api = operator_cluster();
    let (p, mut a) = start_cut_off(&api).await;
    // The probes answer; it is not ready.
    assert_eq!(http_get(a.probe, "/healthz").await.map(|r| r.0), Some(200));
    assert_eq!(http_get(a.probe, "/readyz").await.map(|r| r.0), Some(503));
    assert!(a.proc.exited().is_none(), "{}", a.proc.output());

    // The API server answers new connections; the calls hung on the old ones end, and it
    // becomes ready and leads.
    p.silent.store(false, Ordering::SeqCst);
    let leads = eventually(Duration::from_secs(40), || async {
        a.ready().await && holder(&api).starts_with("olmctl-operator-a")
    })
    .await;
    assert!(leads, "ready and leading\n{}", a.proc.output());
    a.terminate_exits_0().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_the_api_server_does_not_answer_ends_it_with_exit_0() {
    // The controller's task also waited for its caches to sync before it ended, so a replica
    // whose caches never synced did not stop on SIGTERM.
    let api = operator_cluster();
    let (_p, mut a) = start_cut_off(&api).await;
    a.terminate_exits_0().await;
}
