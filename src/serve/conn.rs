//! One served HTTP/2 connection of `catalog serve`, closed when it stalls or idles.
//!
//! - **Handshake**: the client must send the HTTP/2 connection preface and the frame after it
//!   (its SETTINGS) within the handshake timeout; an idle TCP connection, a preface alone or
//!   half a frame is closed then. Before the handshake hyper has no keepalive to catch them.
//! - **Idle**: a connection with no call in flight and none started for the idle timeout is
//!   closed (grpc-go's `MaxConnectionIdle`; clients reconnect on their next call). Keepalive
//!   pings (set on the server builder) catch a peer that stops answering in the middle of a
//!   call or a frame.
//!
//! [`Conn`] wraps the TCP stream: its reads fail with `TimedOut` once a deadline passes, which
//! makes hyper drop the connection (and the listener's permit with it). [`ActivityLayer`]
//! marks calls in flight on the connection's [`Activity`], which tonic hands to each request
//! as its connection info.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Sleep;

/// The HTTP/2 client connection preface (RFC 9113 §3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// An HTTP/2 frame header's length.
const FRAME_HEADER: usize = 9;

/// Calls in flight and the time of the last call's start or end, shared by a connection and
/// the requests it carries.
#[derive(Debug, Default)]
pub struct Activity {
    in_flight: AtomicUsize,
    /// Milliseconds since [`epoch`] of the last call's start or end.
    last: AtomicU64,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn millis(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_millis() as u64
}

impl Activity {
    fn touch(&self) {
        self.last.store(millis(Instant::now()), Ordering::Relaxed);
    }

    /// Marks a call started; the call ends when the guard is dropped.
    pub fn start(self: &Arc<Self>) -> CallGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.touch();
        CallGuard(self.clone())
    }

    /// Calls in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    fn idle_since(&self) -> Instant {
        epoch() + Duration::from_millis(self.last.load(Ordering::Relaxed))
    }
}

/// A call in flight; dropping it ends the call.
#[derive(Debug)]
pub struct CallGuard(Arc<Activity>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The connection information tonic puts into each request's extensions.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    /// The connection's activity.
    pub activity: Arc<Activity>,
    /// The peer's address.
    pub remote: Option<std::net::SocketAddr>,
}

/// The deadlines of a connection.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// For the preface and the first frame.
    pub handshake: Duration,
    /// With no call in flight.
    pub idle: Duration,
}

/// Counts the client's first bytes: the preface, then one frame (its header says its length).
#[derive(Debug, Default)]
struct Handshake {
    head: Vec<u8>,
    need: Option<usize>,
    consumed: usize,
}

impl Handshake {
    fn feed(&mut self, data: &[u8]) {
        let head = PREFACE.len() + FRAME_HEADER;
        for &b in data {
            if self.done() {
                return;
            }
            self.consumed += 1;
            if self.head.len() < head {
                self.head.push(b);
                if self.head.len() == head {
                    let h = &self.head[PREFACE.len()..];
                    let len =
                        (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
                    self.need = Some(head + len);
                }
            }
        }
    }

    fn done(&self) -> bool {
        self.need.is_some_and(|n| self.consumed >= n)
    }
}

/// A served TCP connection with deadlines; holds the listener's permit.
pub struct Conn {
    inner: TcpStream,
    _permit: Option<OwnedSemaphorePermit>,
    info: ConnInfo,
    deadlines: Deadlines,
    started: Instant,
    handshake: Handshake,
    handshaken: bool,
    timer: Pin<Box<Sleep>>,
}

impl Conn {
    /// Wraps an accepted stream.
    pub fn new(
        inner: TcpStream,
        permit: Option<OwnedSemaphorePermit>,
        deadlines: Deadlines,
    ) -> Self {
        let started = Instant::now();
        let remote = inner.peer_addr().ok();
        let activity = Arc::new(Activity::default());
        activity.touch();
        Conn {
            inner,
            _permit: permit,
            info: ConnInfo { activity, remote },
            deadlines,
            started,
            handshake: Handshake::default(),
            handshaken: false,
            timer: Box::pin(tokio::time::sleep_until(
                (started + deadlines.handshake).into(),
            )),
        }
    }

    /// Counts the handshake's bytes in what was just read.
    fn observe(&mut self, data: &[u8]) {
        self.handshake.feed(data);
        if self.handshake.done() {
            self.handshaken = true;
            self.handshake = Handshake::default();
            self.info.activity.touch();
        }
    }

    /// The reason to close now, or when to look again.
    fn check(&self, now: Instant) -> Result<Instant, io::Error> {
        if !self.handshaken {
            let at = self.started + self.deadlines.handshake;
            return if now >= at {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "no HTTP/2 preface and first frame within {:?}",
                        self.deadlines.handshake
                    ),
                ))
            } else {
                Ok(at)
            };
        }
        if self.info.activity.in_flight() > 0 {
            return Ok(now + self.deadlines.idle);
        }
        let at = self.info.activity.idle_since() + self.deadlines.idle;
        if now >= at {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("idle for {:?}", self.deadlines.idle),
            ))
        } else {
            Ok(at)
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        while self.timer.as_mut().poll(cx).is_ready() {
            let next = self.check(Instant::now())?;
            self.timer.as_mut().reset(next.into());
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = r
            && !self.handshaken
        {
            let new = buf.filled()[before..].to_vec();
            self.observe(&new);
            if self.handshaken {
                let next = self.started.max(Instant::now()) + self.deadlines.idle;
                self.timer.as_mut().reset(next.into());
            }
        }
        r
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl tonic::transport::server::Connected for Conn {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        self.info.clone()
    }
}

/// Marks each request a call in flight on its connection until its response body ends.
#[derive(Debug, Clone, Copy, Default)]
pub struct ActivityLayer;

impl<S> tower_layer::Layer<S> for ActivityLayer {
    type Service = ActivityService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ActivityService { inner }
    }
}

/// See [`ActivityLayer`].
#[derive(Debug, Clone)]
pub struct ActivityService<S> {
    inner: S,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> tower_service::Service<http::Request<B>> for ActivityService<S>
where
    S: tower_service::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let guard = req
            .extensions()
            .get::<ConnInfo>()
            .map(|c| c.activity.start());
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            Ok(match guard {
                Some(guard) => resp.map(|body| {
                    tonic::body::Body::new(GuardedBody {
                        inner: body,
                        _guard: guard,
                    })
                }),
                None => resp,
            })
        })
    }
}

/// A response body that keeps its call in flight until it is done or dropped.
struct GuardedBody {
    inner: tonic::body::Body,
    _guard: CallGuard,
}

impl http_body::Body for GuardedBody {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, tonic::Status>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handshake_ends_after_the_first_frame() {
        let mut bytes = PREFACE.to_vec();
        // A SETTINGS frame with one setting (6 bytes of payload).
        bytes.extend_from_slice(&[0, 0, 6, 4, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&[0, 3, 0, 0, 0, 100]);
        let mut one_by_one = Handshake::default();
        for (i, b) in bytes.iter().enumerate() {
            assert!(!one_by_one.done(), "not before byte {i}");
            one_by_one.feed(&[*b]);
        }
        assert!(one_by_one.done());
        let mut at_once = Handshake::default();
        at_once.feed(&bytes[..bytes.len() - 1]);
        assert!(!at_once.done(), "half a frame is not a handshake");
        at_once.feed(&bytes[bytes.len() - 1..]);
        assert!(at_once.done());
        let mut preface_only = Handshake::default();
        preface_only.feed(PREFACE);
        assert!(!preface_only.done());
    }
}
