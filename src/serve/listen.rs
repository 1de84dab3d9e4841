//! Accepting connections without letting clients exhaust the process, for `catalog serve` and
//! olmctl-operator's webhook and probe servers.
//!
//! - A cap on open connections: a connection holds a permit until it is dropped, and no
//!   connection is accepted while none is free (the kernel's backlog holds the rest), so the
//!   process keeps descriptors for its own files, its client and its other listeners. The cap
//!   is also bounded by the descriptor limit (`RLIMIT_NOFILE`), less a reserve.
//! - A backoff on accept errors: `accept` fails with `EMFILE`/`ENFILE` while descriptors are
//!   short, and a loop that retries at once spins a core and starves every other task. The
//!   listener sleeps 10 ms after a failure, doubling to 1 s while failures go on (hyper's and
//!   tokio's examples sleep on these errors too); an error that belongs to one aborted
//!   connection (`ECONNABORTED`, `ECONNRESET`, `EPROTO`, `EPERM`, `EINTR`) is retried at once.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The first sleep after a failed accept.
pub const BACKOFF_START: Duration = Duration::from_millis(10);
/// The longest sleep between failed accepts.
pub const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// A listener that accepts at most `cap` open connections and backs off on errors.
pub struct Listener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    cap: usize,
    backoff: Duration,
    failures: u64,
}

/// An accepted connection and its permit (given back when this is dropped).
pub struct Accepted {
    /// The connection, with Nagle's algorithm off.
    pub stream: TcpStream,
    /// Held as long as the connection is open.
    pub permit: OwnedSemaphorePermit,
}

impl Listener {
    /// Wraps `inner`, allowing `cap` open connections (at least 1).
    pub fn new(inner: TcpListener, cap: usize) -> Self {
        let cap = cap.max(1);
        Listener {
            inner,
            permits: Arc::new(Semaphore::new(cap)),
            cap,
            backoff: BACKOFF_START,
            failures: 0,
        }
    }

    /// The cap on open connections.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.cap - self.permits.available_permits()
    }

    /// Accept errors seen so far (each one slept on, or retried at once when it belonged to a
    /// single connection).
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// The local address.
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.inner.local_addr()
    }

    /// The next connection: waits for a free permit, then for a connection; never returns an
    /// error (failures are slept on as described in the module documentation).
    pub async fn accept(&mut self) -> Accepted {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        loop {
            match self.inner.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    self.backoff = BACKOFF_START;
                    return Accepted { stream, permit };
                }
                Err(e) => {
                    self.failures += 1;
                    if !per_connection(&e) {
                        tokio::time::sleep(self.backoff).await;
                        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
                    }
                }
            }
        }
    }
}

/// Whether an accept error belongs to one connection (retry at once) rather than to the
/// process (descriptors or memory short: back off).
fn per_connection(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED | libc::ECONNRESET | libc::EPROTO | libc::EPERM | libc::EINTR)
    )
}

/// The soft descriptor limit of this process (`RLIMIT_NOFILE`), if it can be read and is
/// finite.
pub fn descriptor_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass and reads nothing else.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// The connection cap to use: `requested`, but no more than `share` of the descriptors left
/// after `reserve` (for the process's own files, clients and other listeners); at least 1.
pub fn connection_cap(requested: usize, reserve: u64, share: f64) -> usize {
    let by_limit = descriptor_limit()
        .map(|n| ((n.saturating_sub(reserve)) as f64 * share) as usize)
        .unwrap_or(usize::MAX);
    requested.min(by_limit).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_errors_back_off_and_connection_errors_do_not() {
        let e = |n| std::io::Error::from_raw_os_error(n);
        assert!(!per_connection(&e(libc::EMFILE)));
        assert!(!per_connection(&e(libc::ENFILE)));
        assert!(!per_connection(&e(libc::ENOBUFS)));
        assert!(per_connection(&e(libc::ECONNABORTED)));
        assert!(per_connection(&std::io::Error::from_raw_os_error(
            libc::EINTR
        )));
    }

    #[test]
    fn the_cap_never_exceeds_the_descriptors_left() {
        let limit = descriptor_limit().expect("a finite limit in tests");
        assert_eq!(connection_cap(usize::MAX, 0, 1.0), limit as usize);
        assert_eq!(connection_cap(3, 0, 1.0), 3.min(limit as usize));
        assert_eq!(connection_cap(usize::MAX, u64::MAX, 1.0), 1, "at least one");
    }

    #[tokio::test]
    async fn no_connection_is_accepted_while_the_cap_is_reached() {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        let mut l = Listener::new(l, 1);
        let _c1 = TcpStream::connect(addr).await.expect("connect");
        let first = l.accept().await;
        assert_eq!(l.open(), 1);
        let _c2 = TcpStream::connect(addr).await.expect("connect");
        let waited = tokio::time::timeout(Duration::from_millis(200), l.accept()).await;
        assert!(waited.is_err(), "the second waits for a permit");
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), l.accept())
            .await
            .expect("accepted once the first is closed");
        assert_eq!(l.open(), 1);
        drop(second);
        assert_eq!(l.open(), 0);
    }
}
