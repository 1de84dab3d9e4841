//! The HTTP/1.1 server of catalogd's API (`internal/catalogd/serverutil/serverutil.go ::
//! catalogServerRunnable`, `storageServerHandlerWrapped`): every answer passes through
//! klauspost `gzhttp.GzipHandler`'s rules (`Vary: Accept-Encoding` on every answer; gzip when
//! the request is not HEAD and accepts gzip, the body is at least `DefaultMinSize` 1024 bytes and
//! has no `Content-Range`; then `Content-Length` and `Accept-Ranges` go).
//!
//! Bounded like catalogd's `http.Server` (`ReadTimeout` 5 s, `WriteTimeout` 5 min, a 30 s
//! shutdown): a cap on open connections (`serve::listen`), a deadline for each request's
//! headers (also ending an idle keep-alive connection), a deadline for a write that makes no
//! progress, and a request head of at most [`MAX_BUFFER`] (431 beyond it). SIGTERM stops accepting, lets
//! answers in flight finish (at most the shutdown grace), then returns.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, Request, Response};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

use super::body::{Payload, Piece};
use super::handlers::{Catalog, Content, Reply, handle};
use super::precond::Conditions;
use crate::serve::listen::{Listener, connection_cap};

/// gzhttp's `DefaultMinSize`: smaller bodies are sent as they are.
pub const GZIP_MIN_SIZE: u64 = 1024;

/// The bounds of the HTTP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Open connections at most.
    pub max_connections: usize,
    /// For a request's headers, and for the next request on an idle connection.
    pub header_timeout: Duration,
    /// For a write that makes no progress (a client that stopped reading).
    pub write_stall: Duration,
    /// For answers in flight after SIGTERM.
    pub shutdown_grace: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(5),
            write_stall: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

/// hyper's buffer per connection: the largest request head (431 beyond it; Go's
/// `DefaultMaxHeaderBytes` is 1 MiB) and how much of an answer is queued before the client
/// reads it (with hyper's default, about 400 KiB, 50 clients of the v4.18 fixture held 25.6 MB
/// of RSS, with this 19.6 MB).
pub const MAX_BUFFER: usize = 64 << 10;

/// Descriptors kept for the process (the catalog file, gRPC's listener, stdio).
const DESCRIPTOR_RESERVE: u64 = 64;

/// `Accept-Encoding`'s weight for gzip (gzhttp `parseEncodingQValue`, `parseCoding`): codings
/// compared in lower case, `q=` clamped to 0..1, 1 without it.
pub fn gzip_quality(accept: &str) -> f64 {
    for coding in accept.trim().split(',') {
        let mut q = 1.0;
        let mut name = String::new();
        for (i, part) in coding.split(';').enumerate() {
            let part = part.trim();
            q = 1.0;
            if i == 0 {
                name = part.to_ascii_lowercase();
            } else if part.len() >= 2 && part[..2].eq_ignore_ascii_case("q=") {
                q = part[2..].parse::<f64>().unwrap_or(0.0).clamp(0.0, 1.0);
            }
        }
        if name == "gzip" {
            return q;
        }
    }
    0.0
}

/// Whether gzhttp compresses `reply` for a request with `accept` (`GzipResponseWriter.Write`,
/// `Close`: not HEAD, gzip accepted, a body of at least [`GZIP_MIN_SIZE`] bytes, no
/// `Content-Encoding` or `Content-Range`; every content type sent here is compressible).
pub fn compresses(method: &str, accept: Option<&str>, reply: &Reply) -> bool {
    method != "HEAD"
        && accept.is_some_and(|a| gzip_quality(a) > 0.0)
        && reply.content.len() >= GZIP_MIN_SIZE
        && reply.header("Content-Encoding").is_none()
        && reply.header("Content-Range").is_none()
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// The answer to one request, as hyper sends it.
pub fn respond(catalog: &Catalog, req: &Request<Incoming>) -> Response<Payload> {
    let method = req.method().as_str();
    let h = req.headers();
    let conditions = Conditions {
        get_or_head: method == "GET" || method == "HEAD",
        if_match: header(h, "if-match"),
        if_unmodified_since: header(h, "if-unmodified-since"),
        if_none_match: header(h, "if-none-match"),
        if_modified_since: header(h, "if-modified-since"),
        // The bytes as hyper read them, shared, not copied: a multipart answer reads its
        // ranges from them while it is sent. (A copy costs as much: hyper then reuses its
        // read buffer, which it otherwise replaces; 140 and 143 KiB a connection measured.)
        range: h.get("range").map(|v| bytes::Bytes::from_owner(v.clone())),
        if_range: header(h, "if-range"),
    };
    let path = req.uri().path();
    let query = req.uri().query().unwrap_or("");
    let mut reply = handle(
        catalog,
        &super::handlers::Request {
            method,
            path,
            query,
            conditions,
        },
    );
    let accept = header(h, "accept-encoding");
    let gzip = compresses(method, accept.as_deref(), &reply);
    if gzip {
        reply.remove("Content-Length");
        reply.remove("Accept-Ranges");
        reply.headers.push(("Content-Encoding", "gzip".into()));
    }
    let head = method == "HEAD";
    let body_len = reply.content.len();
    let content = match std::mem::replace(&mut reply.content, Content::Empty) {
        _ if head => Content::Empty,
        c => c,
    };
    let mut b = Response::builder()
        .status(reply.status)
        .header("Vary", "Accept-Encoding");
    for (n, v) in &reply.headers {
        b = b.header(*n, v.as_str());
    }
    // HEAD: what GET would send is announced, nothing is sent.
    if head && reply.header("Content-Length").is_none() && body_len > 0 {
        b = b.header("Content-Length", body_len.to_string());
    }
    let len = content.len();
    let payload = Payload::new(catalog.stored.file.clone(), content.pieces(), len, gzip);
    b.body(payload).unwrap_or_else(|_| {
        let text = b"500 Internal Server Error\n".to_vec();
        let len = text.len() as u64;
        let mut r = Response::new(Payload::new(
            catalog.stored.file.clone(),
            std::iter::once(Piece::Text(text)),
            len,
            false,
        ));
        *r.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
        r
    })
}

/// Serves `catalog` on `listener` until `shutdown` resolves.
pub async fn serve(
    catalog: Arc<Catalog>,
    listener: tokio::net::TcpListener,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), String> {
    let cap = connection_cap(limits.max_connections, DESCRIPTOR_RESERVE, 0.5);
    let mut listener = Listener::new(listener, cap);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut shutdown => break,
        };
        while tasks.try_join_next().is_some() {}
        let catalog = catalog.clone();
        let mut stop = stop_rx.clone();
        tasks.spawn(async move {
            let _permit = accepted.permit;
            let io = TokioIo::new(Stalls::new(accepted.stream, limits.write_stall));
            let svc = service_fn(move |req: Request<Incoming>| {
                let catalog = catalog.clone();
                async move { Ok::<_, Infallible>(respond(&catalog, &req)) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(MAX_BUFFER);
            let conn = builder.serve_connection(io, svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let drained = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.shutdown_grace, drained)
        .await
        .is_err()
    {
        tasks.abort_all();
    }
    Ok(())
}

/// A connection whose writes fail with `TimedOut` once one has waited `limit` without
/// progress: a client that stops reading is dropped (with its permit).
pub struct Stalls {
    inner: TcpStream,
    limit: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl Stalls {
    /// Wraps `inner`.
    pub fn new(inner: TcpStream, limit: Duration) -> Self {
        Stalls {
            inner,
            limit,
            stalled: None,
        }
    }

    fn watch<T>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let limit = self.limit;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading",
            )));
        }
        Poll::Pending
    }
}

impl AsyncRead for Stalls {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stalls {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, r)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_chosen_as_gzhttp_chooses_it() {
        assert_eq!(gzip_quality("gzip"), 1.0);
        assert_eq!(gzip_quality("br, GZIP;q=0.5"), 0.5);
        assert_eq!(gzip_quality("gzip;q=0"), 0.0);
        assert_eq!(gzip_quality("gzip;q=7"), 1.0);
        assert_eq!(gzip_quality("*"), 0.0);
        assert_eq!(gzip_quality("deflate"), 0.0);
        let mut r = Reply {
            status: 200,
            headers: Vec::new(),
            content: Content::Text(vec![b'x'; 1024]),
        };
        assert!(compresses("GET", Some("gzip"), &r));
        assert!(!compresses("HEAD", Some("gzip"), &r));
        assert!(!compresses("GET", None, &r));
        r.headers
            .push(("Content-Range", "bytes 0-1023/2000".into()));
        assert!(!compresses("GET", Some("gzip"), &r));
        r.headers.clear();
        r.content = Content::Text(vec![b'x'; 1023]);
        assert!(!compresses("GET", Some("gzip"), &r));
    }
}
