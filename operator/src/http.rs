//! The operator's HTTP endpoints: `/metrics`, `/healthz` and `/readyz` over plain HTTP, and the
//! conversion webhook (`POST /convert`, a `ConversionReview` answered by
//! `olmctl::gate::review::answer`) over TLS with the certificates OLM mounts.
//!
//! Both servers are bounded against slow and greedy clients ([`Limits`], README "Limits"): a
//! cap on open connections per listener (below the descriptor limit, so that a flood of the
//! webhook's port leaves descriptors for `/healthz` and the API client), a backoff on accept
//! errors (`olmctl::serve::listen`), a deadline for the TLS handshake, one for each request's
//! headers (hyper's `header_read_timeout`, which also ends an idle keep-alive connection), a
//! time budget for a request body and the same for its answer to be sent, and a memory budget
//! for reviews ([`REVIEW_MEMORY`]): a review reserves its share before its body is read and
//! keeps it while it is parsed, answered and its answer sent, so bodies and answers hold at
//! most that much whatever the clients send or fail to read.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::rt::TokioTimer;
use olmctl::serve::listen::{Listener, connection_cap};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::Metrics;

/// Where OLM mounts the webhook's serving certificate (`tls.crt`, `tls.key`).
pub const CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";
/// The largest ConversionReview accepted.
pub const MAX_REVIEW: usize = 8 << 20;
/// Bytes of ConversionReviews in memory at once: their bodies and their answers (at most
/// [`olmctl::gate::review::max_answer`], twice the body), reserved before a body is read
/// ([`reservation`]) and given back when its answer is sent. Two reviews of [`MAX_REVIEW`] fit,
/// or a few hundred of the API server's usual few kilobytes; the others wait within their
/// body's time budget, asking again ([`share_of`]) so that a share that fits is taken even
/// while a larger one waits.
pub const REVIEW_MEMORY: usize = 64 << 20;
/// The pieces an answer is handed to hyper in (copied, so that the answer is freed when the
/// last one is taken).
const ANSWER_CHUNK: usize = 16 << 10;
/// What hyper and rustls buffer per webhook connection (hyper's read and write buffers, the TLS
/// records not yet sent): outside [`REVIEW_MEMORY`], so small (256 connections, 16 KiB each).
const CONNECTION_BUFFER: usize = 16 << 10;
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
    /// For a request's whole body (`--body-timeout`): 408 after it; and for a webhook answer
    /// to be sent from its first byte: the connection is closed after it.
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

/// What a review of at most `len` bytes reserves of [`REVIEW_MEMORY`]: its body and the
/// largest answer it may have.
pub const fn reservation(len: usize) -> usize {
    len + olmctl::gate::review::max_answer(len)
}

// A review of any size can get its share (and the share fits in a `u32`).
const _: () =
    assert!(reservation(MAX_REVIEW) <= REVIEW_MEMORY && REVIEW_MEMORY <= u32::MAX as usize);

/// A webhook answer: handed to hyper in [`ANSWER_CHUNK`] pieces, holding the review's share of
/// [`REVIEW_MEMORY`] until the last piece is taken.
pub struct Answer {
    data: Bytes,
    at: usize,
    _share: Option<OwnedSemaphorePermit>,
}

impl Answer {
    fn new(data: impl Into<Bytes>, share: Option<OwnedSemaphorePermit>) -> Answer {
        Answer {
            data: data.into(),
            at: 0,
            _share: share,
        }
    }
}

impl http_body::Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let end = self.data.len().min(self.at + ANSWER_CHUNK);
        if self.at >= end {
            return Poll::Ready(None);
        }
        let chunk = Bytes::copy_from_slice(&self.data[self.at..end]);
        self.at = end;
        if end == self.data.len() {
            self.data = Bytes::new();
            self.at = 0;
            self._share = None;
        }
        Poll::Ready(Some(Ok(http_body::Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.at >= self.data.len()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact((self.data.len() - self.at) as u64)
    }
}

fn answer(code: StatusCode, ctype: &str, body: impl Into<Bytes>) -> Response<Answer> {
    Response::builder()
        .status(code)
        .header("content-type", ctype)
        .body(Answer::new(body, None))
        .expect("response")
}

/// The body, at most `bound` bytes (413 past [`MAX_REVIEW`]), in one buffer of its size.
async fn read_body(body: Incoming, bound: usize) -> Result<Vec<u8>, Response<Answer>> {
    let mut body = body;
    let mut buf = Vec::with_capacity(bound);
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| answer(StatusCode::BAD_REQUEST, "text/plain", format!("{e}\n")))?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > bound {
                return Err(answer(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "text/plain",
                    format!("a ConversionReview is at most {MAX_REVIEW} bytes\n"),
                ));
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf)
}

/// How often a review waiting for its share of [`REVIEW_MEMORY`] asks again.
const SHARE_RETRY: std::time::Duration = std::time::Duration::from_millis(5);

/// `permits` of `memory`, waited for by asking again every [`SHARE_RETRY`] rather than in the
/// semaphore's queue: a queue is first come, first served, so one large share at its head (a
/// review declaring 8 MiB, whose body may never come) would hold up every small review behind
/// it, however much memory is free for them. Asked again, a small share is taken whenever it
/// fits; a large one when enough is free (the caller's time budget bounds the wait).
async fn share_of(memory: &Arc<Semaphore>, permits: usize) -> OwnedSemaphorePermit {
    loop {
        match memory.clone().try_acquire_many_owned(permits as u32) {
            Ok(share) => return share,
            Err(tokio::sync::TryAcquireError::NoPermits) => {
                tokio::time::sleep(SHARE_RETRY).await;
            }
            // The semaphore is the server's and never closed.
            Err(tokio::sync::TryAcquireError::Closed) => tokio::time::sleep(SHARE_RETRY).await,
        }
    }
}

async fn convert(
    req: Request<Incoming>,
    memory: Arc<Semaphore>,
    budget: std::time::Duration,
) -> Response<Answer> {
    if req.method() != Method::POST || req.uri().path() != crate::crd::WEBHOOK_PATH {
        return answer(StatusCode::NOT_FOUND, "text/plain", "POST /convert\n");
    }
    let declared = req
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_REVIEW as u64) {
        return answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            "text/plain",
            format!("a ConversionReview is at most {MAX_REVIEW} bytes\n"),
        );
    }
    // Without a length (chunked), the largest review is reserved and the rest given back.
    let bound = declared.map_or(MAX_REVIEW, |n| n as usize);
    // The body within its time budget, waiting for a share of the memory included.
    let read = async {
        let share = share_of(&memory, reservation(bound)).await;
        read_body(req.into_body(), bound).await.map(|b| (share, b))
    };
    let (mut share, body) = match tokio::time::timeout(budget, read).await {
        Ok(Ok(got)) => got,
        Ok(Err(refused)) => return refused,
        Err(_) => {
            return answer(
                StatusCode::REQUEST_TIMEOUT,
                "text/plain",
                format!("the request body did not arrive within {budget:?}\n"),
            );
        }
    };
    drop(share.split(reservation(bound) - reservation(body.len())));
    // Off the runtime's workers, which keep serving the probes meanwhile; the share goes with
    // the work, so a client that hangs up does not free it while the conversion runs.
    let answered = tokio::task::spawn_blocking(move || {
        let out = olmctl::gate::review::answer(&body);
        (out, share)
    })
    .await;
    let (out, share) = answered.expect("conversion does not panic");
    match out {
        Ok(out) => Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .body(Answer::new(out, Some(share)))
            .expect("response"),
        Err(e) => answer(StatusCode::BAD_REQUEST, "text/plain", format!("{e}\n")),
    }
}

/// A connection whose writes fail once `timeout` has passed since the first write after the
/// last read: an answer the client does not read within the budget ends its connection, and
/// with it the review's share of [`REVIEW_MEMORY`]. As Go's net/http server.go ::
/// Server.WriteTimeout, which a new request resets, except that it starts with the answer's
/// first byte, so that waiting for a share and converting are not charged to it.
struct WriteDeadline<T> {
    io: T,
    timeout: std::time::Duration,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> WriteDeadline<T> {
    /// Whether the deadline has passed; `start` arms it when it is not armed (a write of
    /// data, where a flush only checks it: hyper flushes while it reads, too).
    fn expired(&mut self, cx: &mut Context<'_>, start: bool) -> bool {
        if start && self.deadline.is_none() {
            self.deadline = Some(Box::pin(tokio::time::sleep(self.timeout)));
        }
        self.deadline
            .as_mut()
            .is_some_and(|d| d.as_mut().poll(cx).is_ready())
    }
}

fn timed_out() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the answer was not read within the body timeout",
    )
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.deadline = None;
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.expired(cx, !buf.is_empty()) {
            return Poll::Ready(Err(timed_out()));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.expired(cx, false) {
            return Poll::Ready(Err(timed_out()));
        }
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Serves the conversion webhook over TLS on `listener` until the task is dropped.
pub async fn serve_webhook(listener: TcpListener, limits: Limits, tls: rustls::ServerConfig) {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let cap = connection_cap(limits.webhook_connections, DESCRIPTOR_RESERVE, 0.5);
    let mut listener = Listener::new(listener, cap);
    let memory = Arc::new(Semaphore::new(REVIEW_MEMORY));
    loop {
        let accepted = listener.accept().await;
        let acceptor = acceptor.clone();
        let memory = memory.clone();
        tokio::spawn(async move {
            let (stream, _permit) = (accepted.stream, accepted.permit);
            let Ok(Ok(mut tls)) =
                tokio::time::timeout(limits.tls_handshake, acceptor.accept(stream)).await
            else {
                return;
            };
            tls.get_mut().1.set_buffer_limit(Some(CONNECTION_BUFFER));
            let io = WriteDeadline {
                io: tls,
                timeout: limits.body,
                deadline: None,
            };
            let svc = service_fn(move |req| {
                let memory = memory.clone();
                async move { Ok::<_, Infallible>(convert(req, memory, limits.body).await) }
            });
            let _ = limits
                .http1()
                .max_buf_size(CONNECTION_BUFFER)
                .serve_connection(TokioIo::new(io), svc)
                .await;
        });
    }
}

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
