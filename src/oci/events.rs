//! What image operations tell the person waiting for them: lines of news ("pushed ..."),
//! warnings (a retry) and the progress of a large upload. The library never prints: the
//! command line implements [`Events`] (stderr, a progress bar on a terminal); other callers
//! record them or ignore them ([`Silent`]).

use std::sync::Arc;

/// Receives an operation's news. Every method has a default that ignores it.
pub trait Events: Send + Sync {
    /// One line of news (what was built, pushed, written, pulled).
    fn note(&self, _line: &str) {}
    /// A warning: the operation goes on (a retry, a push forced over findings).
    fn warn(&self, _line: &str) {}
    /// A step of a long operation, worth showing only to a person watching (the command line
    /// shows it when stderr is a terminal): "pulling 12 bundle images", "[3/12] IMAGE".
    fn step(&self, _line: &str) {}
    /// An upload of `total` bytes of blob `blob` (a short digest) starts.
    fn upload_started(&self, _blob: &str, _total: u64) {}
    /// `done` bytes of the upload were handed to the connection.
    fn upload_progress(&self, _blob: &str, _done: u64) {}
    /// The upload ended (`ok`: it succeeded).
    fn upload_finished(&self, _blob: &str, _ok: bool) {}
}

/// Ignores every event.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Events for Silent {}

/// The events of an operation, shared by the tasks that report them.
pub type Sink = Arc<dyn Events>;

/// A sink that ignores everything.
pub fn silent() -> Sink {
    Arc::new(Silent)
}
