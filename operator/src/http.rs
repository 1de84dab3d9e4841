//! The operator's HTTP endpoints: `/metrics`, `/healthz` and `/readyz` over plain HTTP, and the
//! conversion webhook (`POST /convert`, a `ConversionReview` answered by
//! `olmctl::gate::convert::review`) over TLS with the certificates OLM mounts.
//!
//! Both servers are bounded against slow and greedy clients ([`Limits`], README "Limits"): a
//! cap on open connections per listener (below the descriptor limit, so that a flood of the
//! webhook's port leaves descriptors for `/healthz` and the API client), a backoff on accept
//! errors (`olmctl::serve::listen`), a deadline for the TLS handshake, one for each request's
//! headers (hyper's `header_read_timeout`, which also ends an idle keep-alive connection), a
//! time budget for a request body, and at most [`BODIES_IN_FLIGHT`] bodies read at once.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::rt::TokioTimer;
use olmctl::serve::listen::{Listener, connection_cap};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::metrics::Metrics;

/// Where OLM mounts the webhook's serving certificate (`tls.crt`, `tls.key`).
pub const CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";
/// The largest ConversionReview accepted.
pub const MAX_REVIEW: usize = 8 << 20;
/// Request bodies read at once: with [`MAX_REVIEW`], at most 64 MiB of bodies in memory.
pub const BODIES_IN_FLIGHT: usize = 8;
/// Descriptors kept for the process (the API client's connections, the runtime, stdio) when
/// caps are derived from `RLIMIT_NOFILE`.
const DESCRIPTOR_RESERVE: u64 = 64;

/// The bounds of the probe and webhook servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Open webhook connections at most (`--webhook-max-connections`); never more than half
    /// the descriptors left after the reserve.
    pub webhook_connections: usize,
    /// Open probe connections at most (`--probe-max-connections`); never more than a quarter.
    pub probe_connections: usize,
    /// For the TLS handshake (`--tls-handshake-timeout`).
    pub tls_handshake: std::time::Duration,
    /// For a request's headers, and for the next request on an idle keep-alive connection
    /// (`--header-timeout`).
    pub header: std::time::Duration,
    /// For a request's whole body (`--body-timeout`): 408 after it.
    pub body: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            webhook_connections: 256,
            probe_connections: 32,
            tls_handshake: std::time::Duration::from_secs(10),
            header: std::time::Duration::from_secs(10),
            body: std::time::Duration::from_secs(30),
        }
    }
}

impl Limits {
    fn http1(&self) -> hyper::server::conn::http1::Builder {
        let mut b = hyper::server::conn::http1::Builder::new();
        b.timer(TokioTimer::new()).header_read_timeout(self.header);
        b
    }
}

fn reply(code: StatusCode, ctype: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .header("content-type", ctype)
        .body(Full::new(body.into()))
        .expect("response")
}

/// What `/readyz` reports: this replica can serve. Its conversion webhook listens (when it has
/// a certificate to serve it with) and its caches have listed everything. Leadership plays no
/// part: a standby serves conversions and is as ready as the leader, so a Deployment of two
/// replicas becomes Available and OLM's CSV reaches Succeeded.
#[derive(Debug, Default)]
pub struct Readiness {
    /// The webhook must listen before the replica is ready.
    pub webhook_required: AtomicBool,
    /// The webhook listens.
    pub webhook: AtomicBool,
    /// The caches are synced.
    pub synced: AtomicBool,
}

impl Readiness {
    /// Why the replica is not ready, if it is not.
    pub fn missing(&self) -> Option<&'static str> {
        if self.webhook_required.load(Ordering::SeqCst) && !self.webhook.load(Ordering::SeqCst) {
            return Some("the conversion webhook is not listening yet");
        }
        if !self.synced.load(Ordering::SeqCst) {
            return Some("the caches have not synced yet");
        }
        None
    }
}

/// Serves `/metrics`, `/healthz` (always ok while the process runs) and `/readyz` (ok when
/// [`Readiness`] has nothing missing) on `listener` until the task is dropped.
pub async fn serve_probes(
    listener: TcpListener,
    limits: Limits,
    metrics: Arc<Metrics>,
    ready: Arc<Readiness>,
) {
    let cap = connection_cap(limits.probe_connections, DESCRIPTOR_RESERVE, 0.25);
    let mut listener = Listener::new(listener, cap);
    loop {
        let accepted = listener.accept().await;
        let (metrics, ready) = (metrics.clone(), ready.clone());
        tokio::spawn(async move {
            let (stream, _permit) = (accepted.stream, accepted.permit);
            let svc = service_fn(move |req: Request<Incoming>| {
                let (metrics, ready) = (metrics.clone(), ready.clone());
                async move {
                    Ok::<_, Infallible>(match req.uri().path() {
                        "/metrics" => reply(
                            StatusCode::OK,
                            crate::metrics::CONTENT_TYPE,
                            metrics.render(),
                        ),
                        "/healthz" => reply(StatusCode::OK, "text/plain", "ok\n"),
                        "/readyz" => match ready.missing() {
                            None => reply(StatusCode::OK, "text/plain", "ok\n"),
                            Some(why) => reply(
                                StatusCode::SERVICE_UNAVAILABLE,
                                "text/plain",
                                format!("not ready: {why}\n"),
                            ),
                        },
                        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
                    })
                }
            });
            let _ = limits
                .http1()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

/// The TLS configuration from `dir/tls.crt` and `dir/tls.key` (PEM).
pub fn tls_config(dir: &Path) -> Result<rustls::ServerConfig, String> {
    let crt = dir.join("tls.crt");
    let key = dir.join("tls.key");
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&crt)
        .map_err(|e| format!("{}: {e}", crt.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", crt.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate", crt.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&key).map_err(|e| format!("{}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("{}: {e}", dir.display()))
}

async fn convert(
    req: Request<Incoming>,
    bodies: Arc<Semaphore>,
    budget: std::time::Duration,
) -> Response<Full<Bytes>> {
    if req.method() != Method::POST || req.uri().path() != crate::crd::WEBHOOK_PATH {
        return reply(StatusCode::NOT_FOUND, "text/plain", "POST /convert\n");
    }
    // The body within its time budget, waiting for a turn included; one of a few at once.
    let read = async {
        let _turn = bodies.acquire().await.expect("never closed");
        Limited::new(req.into_body(), MAX_REVIEW).collect().await
    };
    let body = match tokio::time::timeout(budget, read).await {
        Ok(Ok(b)) => b.to_bytes(),
        Ok(Err(e)) => {
            return reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                "text/plain",
                format!("{e}\n"),
            );
        }
        Err(_) => {
            return reply(
                StatusCode::REQUEST_TIMEOUT,
                "text/plain",
                format!("the request body did not arrive within {budget:?}\n"),
            );
        }
    };
    let review: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return reply(
                StatusCode::BAD_REQUEST,
                "text/plain",
                format!("not a ConversionReview: {e}\n"),
            );
        }
    };
    let out = olmctl::gate::convert::review(&review);
    reply(StatusCode::OK, "application/json", out.to_string())
}

/// Serves the conversion webhook over TLS on `listener` until the task is dropped.
pub async fn serve_webhook(listener: TcpListener, limits: Limits, tls: rustls::ServerConfig) {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let cap = connection_cap(limits.webhook_connections, DESCRIPTOR_RESERVE, 0.5);
    let mut listener = Listener::new(listener, cap);
    let bodies = Arc::new(Semaphore::new(BODIES_IN_FLIGHT));
    loop {
        let accepted = listener.accept().await;
        let acceptor = acceptor.clone();
        let bodies = bodies.clone();
        tokio::spawn(async move {
            let (stream, _permit) = (accepted.stream, accepted.permit);
            let Ok(Ok(tls)) =
                tokio::time::timeout(limits.tls_handshake, acceptor.accept(stream)).await
            else {
                return;
            };
            let svc = service_fn(move |req| {
                let bodies = bodies.clone();
                async move { Ok::<_, Infallible>(convert(req, bodies, limits.body).await) }
            });
            let _ = limits
                .http1()
                .serve_connection(TokioIo::new(tls), svc)
                .await;
        });
    }
}

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
