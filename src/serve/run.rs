//! `catalog serve` as one operation: the catalog loaded and validated (a catalog with
//! error-level findings is not served), indexed, the parsed catalog given back to the system,
//! then the registry API served on its own runtime until SIGTERM or SIGINT.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::catalog::ServedCatalog;
use super::server::{Limits, address, serve, signalled};
use crate::diag::{Finding, Severity};
use crate::oci::events::Events;

/// Why a catalog was not served.
#[derive(Debug)]
pub enum NotServed {
    /// It could not be read, or the server could not start or failed (exit status 2).
    Failed(String),
    /// It has error-level findings: every finding, and what the report covered.
    Invalid {
        /// The catalog's findings.
        findings: Vec<Finding>,
        /// `N files, N packages, ...` of the catalog.
        what: String,
    },
}

/// Serves the catalog at `dir` on `port` of every address; `events` hears the line that says it
/// is serving (with how long loading, validating and indexing took).
pub fn serve_dir(
    dir: &Path,
    port: u16,
    limits: Limits,
    events: &dyn Events,
) -> Result<(), NotServed> {
    let started = Instant::now();
    let loaded = crate::fbc::load::load_catalog(&[dir.to_path_buf()]).map_err(NotServed::Failed)?;
    let load_ms = started.elapsed().as_millis();
    let findings = crate::checks::fbc::validate(&loaded);
    let validate_ms = started.elapsed().as_millis() - load_ms;
    if findings.iter().any(|f| f.severity == Severity::Error) {
        let what = loaded.summary();
        return Err(NotServed::Invalid { findings, what });
    }
    let catalog = Arc::new(ServedCatalog::new(&loaded.cfg));
    drop(loaded);
    drop(findings);
    // The parsed catalog is gone: give its pages back to the system.
    super::release_freed_memory();
    // Workers with the loader's stack: custom-schema blobs nest as deep as it allows, and
    // answering with them recurses.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(crate::fbc::load::PARSER_STACK)
        .enable_all()
        .build()
        .map_err(|e| NotServed::Failed(format!("cannot start the runtime: {e}")))?;
    let addr = address(port);
    rt.block_on(async move {
        // Handlers first: a SIGTERM from the moment the port is open is a graceful stop.
        let shutdown = signalled();
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?;
        let ready_ms = started.elapsed().as_millis();
        events.note(&format!(
            "serving {} packages on {bound} (ready in {ready_ms} ms: load {load_ms}, validate {validate_ms}, index {})",
            catalog.packages.len(),
            ready_ms - load_ms - validate_ms
        ));
        serve(catalog, listener, limits, shutdown).await
    })
    .map_err(NotServed::Failed)
}
