//! The operator's HTTP endpoints: `/metrics`, `/healthz` and `/readyz` over plain HTTP, and the
//! conversion webhook (`POST /convert`, a `ConversionReview` answered by
//! `olmctl::gate::convert::review`) over TLS with the certificates OLM mounts.

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
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

use crate::metrics::Metrics;

/// Where OLM mounts the webhook's serving certificate (`tls.crt`, `tls.key`).
pub const CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";
/// The largest ConversionReview accepted.
pub const MAX_REVIEW: usize = 8 << 20;

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
pub async fn serve_probes(listener: TcpListener, metrics: Arc<Metrics>, ready: Arc<Readiness>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (metrics, ready) = (metrics.clone(), ready.clone());
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let (metrics, ready) = (metrics.clone(), ready.clone());
                async move {
                    Ok::<_, Infallible>(match req.uri().path() {
                        "/metrics" => reply(
                            StatusCode::OK,
                            "text/plain; version=0.0.4",
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
            let _ = hyper::server::conn::http1::Builder::new()
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

async fn convert(req: Request<Incoming>) -> Response<Full<Bytes>> {
    if req.method() != Method::POST || req.uri().path() != crate::crd::WEBHOOK_PATH {
        return reply(StatusCode::NOT_FOUND, "text/plain", "POST /convert\n");
    }
    let body = match Limited::new(req.into_body(), MAX_REVIEW).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                "text/plain",
                format!("{e}\n"),
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
pub async fn serve_webhook(listener: TcpListener, tls: rustls::ServerConfig) {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let svc = service_fn(|req| async move { Ok::<_, Infallible>(convert(req).await) });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), svc)
                .await;
        });
    }
}

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
