//! The operator's API client: every call has a deadline.
//!
//! kube 5 sets no read timeout on its client (`Config::infer` leaves `read_timeout` at
//! `None`; only connect, 30 s, and write, 295 s, are bounded), so a call to an API server that
//! accepted the connection and never answered waited for ever: the first one, `GET /version`,
//! held the whole start (no election, no caches, no readiness). Here:
//!
//! - every request that is not a watch has `--request-timeout` (default [`REQUEST_TIMEOUT`])
//!   for its whole answer, headers and body ([`Deadline`]); a watch has it for its response
//!   headers, and its stream is left to kube-runtime's watcher, which ends a watch that stays
//!   silent past its `timeoutSeconds` (290 s) plus 5 s and starts another;
//! - the transport connects (TCP and TLS) within [`CONNECT_TIMEOUT`] (or `--request-timeout`
//!   when shorter), has `--request-timeout` as its write timeout, and [`TRANSPORT_READ_TIMEOUT`]
//!   as its read timeout, beyond the watcher's idle timeout so that a quiet watch is never cut
//!   by it (a backstop under the deadlines above).
//!
//! A call that ends so is an error like any other: the controller retries the namespace with
//! backoff, the watcher lists again with backoff, and leader election has its own shorter
//! timeout (`max(renewDeadline/2, 1s)`, [`crate::leader`]), which comes first. With an API
//! server that does not answer, the process keeps trying with bounded calls, serving
//! `/healthz` and answering 503 on `/readyz` until its caches sync, as a controller-runtime
//! manager does (its informers and elector retry; it does not exit).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// A boxed error, as tower and kube have it.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The default `--request-timeout`: kube-apiserver ends every request that is not a watch at
/// 60 s itself (its `--request-timeout`, a 504), so a call still unanswered then will never be
/// answered by a working server, and no call a working server completes is cut short.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Connecting, TCP and TLS, at most (kube's and client-go's dial timeout).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The transport's read timeout: over kube-runtime's watch idle timeout (`timeoutSeconds`
/// 290 s + 5 s), so that it never ends a quiet watch.
pub const TRANSPORT_READ_TIMEOUT: Duration = Duration::from_secs(300);

/// The client for `config`, every call within `request_timeout` ([`Deadline`]).
pub fn build(mut config: kube::Config, request_timeout: Duration) -> Result<kube::Client, String> {
    let server = olmctl::text::server_name(&config.cluster_url);
    config.connect_timeout = Some(request_timeout.min(CONNECT_TIMEOUT));
    config.write_timeout = Some(request_timeout);
    config.read_timeout = Some(TRANSPORT_READ_TIMEOUT.max(request_timeout));
    // The read timeout counts from the request, not from when its pooled connection went idle.
    config.reset_reader_on_write = true;
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| format!("cannot build the client of the API server {server}: {e}"))?;
    Ok(builder
        .with_layer(&Deadline {
            timeout: request_timeout,
            server,
        })
        .build())
}

/// A call that got no answer in time.
#[derive(Debug, Clone)]
pub struct NoAnswer {
    /// The API server.
    pub server: String,
    /// `GET`, `PATCH`, ...
    pub method: String,
    /// The request's path.
    pub path: String,
    /// Whether it is a watch (only its response headers were waited for).
    pub watch: bool,
    /// How long it was given.
    pub after: Duration,
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no answer from the API server {} within {:?} ({} {}{})",
            self.server,
            self.after,
            self.method,
            self.path,
            if self.watch { " watch" } else { "" }
        )
    }
}

impl std::error::Error for NoAnswer {}

/// Whether a request is a watch (`watch=true` or `watch=1`).
pub fn is_watch(uri: &Uri) -> bool {
    uri.query()
        .is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"))
}

/// A layer that gives every call `timeout`: a watch for its response headers, any other call
/// for its headers and its whole body.
#[derive(Debug, Clone)]
pub struct Deadline {
    /// How long a call may take.
    pub timeout: Duration,
    /// The API server (named in the error).
    pub server: String,
}

impl<S> tower_layer::Layer<S> for Deadline {
    type Service = DeadlineService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        DeadlineService {
            inner,
            deadline: self.clone(),
        }
    }
}

/// The service of [`Deadline`].
#[derive(Debug, Clone)]
pub struct DeadlineService<S> {
    inner: S,
    deadline: Deadline,
}

impl<S, R, B> tower_service::Service<Request<R>> for DeadlineService<S>
where
    S: tower_service::Service<Request<R>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = Response<DeadlineBody<B>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<R>) -> Self::Future {
        let watch = is_watch(req.uri());
        let no_answer = NoAnswer {
            server: self.deadline.server.clone(),
            method: req.method().to_string(),
            path: req.uri().path().to_string(),
            watch,
            after: self.deadline.timeout,
        };
        let ends = Instant::now() + self.deadline.timeout;
        let answer = self.inner.call(req);
        Box::pin(async move {
            match tokio::time::timeout_at(ends, answer).await {
                Err(_) => Err(Box::new(no_answer) as BoxError),
                Ok(Err(e)) => Err(e.into()),
                Ok(Ok(response)) => Ok(response.map(|inner| DeadlineBody {
                    inner,
                    // A watch's stream is the watcher's to time.
                    ends: (!watch).then(|| Box::pin(tokio::time::sleep_until(ends))),
                    no_answer,
                })),
            }
        })
    }
}

/// A response body that fails with [`NoAnswer`] when it is not over by the call's deadline.
pub struct DeadlineBody<B> {
    inner: B,
    ends: Option<Pin<Box<Sleep>>>,
    no_answer: NoAnswer,
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if let Some(ends) = &mut this.ends
            && ends.as_mut().poll(cx).is_ready()
        {
            this.ends = None;
            return Poll::Ready(Some(Err(Box::new(this.no_answer.clone()))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
