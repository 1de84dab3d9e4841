//! `catalog serve` as one operation: the catalog loaded and validated (a catalog with
//! error-level findings is not served), then made ready for what is asked (the gRPC index,
//! catalogd's `catalog.jsonl` and its index, or both), the parsed catalog given back to the
//! system, then the registry API and/or catalogd's HTTP API served on their own ports and
//! runtime until SIGTERM or SIGINT.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::catalog::ServedCatalog;
use super::http::handlers::{Catalog, catalog_name_error};
use super::http::server::HttpLimits;
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

/// catalogd's HTTP API: where and under which name.
#[derive(Debug, Clone)]
pub struct HttpServing {
    /// The port (every interface).
    pub port: u16,
    /// The catalog's name in `/catalogs/{name}/api/v1/...`.
    pub catalog: String,
    /// The server's bounds.
    pub limits: HttpLimits,
}

/// What to serve: the registry gRPC API on `grpc`, catalogd's HTTP API as `http`, or both.
#[derive(Debug, Clone)]
pub struct Serving {
    /// The gRPC port, if gRPC is served.
    pub grpc: Option<u16>,
    /// catalogd's HTTP API, if served.
    pub http: Option<HttpServing>,
}

/// Serves the catalog at `dir` as `serving` asks; `events` hears the lines that say it is
/// serving (with how long loading, validating and indexing took).
pub fn serve_dir(
    dir: &Path,
    serving: &Serving,
    limits: Limits,
    events: &dyn Events,
) -> Result<(), NotServed> {
    if let Some(e) = serving
        .http
        .as_ref()
        .and_then(|h| catalog_name_error(h.catalog.as_bytes()))
    {
        return Err(NotServed::Failed(e));
    }
    let started = Instant::now();
    let loaded = crate::fbc::load::load_catalog(&[dir.to_path_buf()]).map_err(NotServed::Failed)?;
    let load_ms = started.elapsed().as_millis();
    let findings = crate::checks::fbc::validate(&loaded);
    let validate_ms = started.elapsed().as_millis() - load_ms;
    if findings.iter().any(|f| f.severity == Severity::Error) {
        let what = loaded.summary();
        return Err(NotServed::Invalid { findings, what });
    }
    let indexed = Instant::now();
    let grpc_catalog = serving
        .grpc
        .map(|_| Arc::new(ServedCatalog::new(&loaded.cfg)));
    drop(loaded);
    drop(findings);
    let index_ms = indexed.elapsed().as_millis();
    let stored_at = Instant::now();
    let http_catalog = match &serving.http {
        None => None,
        Some(h) => Some(Arc::new(Catalog {
            name: h.catalog.clone(),
            stored: store_deep(dir)?,
        })),
    };
    let store_ms = stored_at.elapsed().as_millis();
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
    rt.block_on(async move {
        // Handlers first: a SIGTERM from the moment a port is open is a graceful stop.
        let signal = signalled();
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            signal.await;
            let _ = stop_tx.send(true);
        });
        let stopped = move || {
            let mut rx = stop_rx.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        };
        let bind = |port: u16| async move {
            let addr = address(port);
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))
        };
        let grpc = match (serving.grpc, grpc_catalog) {
            (Some(port), Some(c)) => Some((bind(port).await?, c)),
            _ => None,
        };
        let http = match (&serving.http, http_catalog) {
            (Some(h), Some(c)) => Some((bind(h.port).await?, c, h.limits)),
            _ => None,
        };
        let ready_ms = started.elapsed().as_millis();
        if let Some((l, c)) = &grpc {
            let bound = l.local_addr().map_err(|e| e.to_string())?;
            events.note(&format!(
                "serving {} packages on {bound} (ready in {ready_ms} ms: load {load_ms}, validate {validate_ms}, index {index_ms})",
                c.packages.len(),
            ));
        }
        if let Some((l, c, _)) = &http {
            let bound = l.local_addr().map_err(|e| e.to_string())?;
            events.note(&format!(
                "serving catalogd's API at http://{bound}/catalogs/{} ({} blobs, {} bytes; ready in {ready_ms} ms: load {load_ms}, validate {validate_ms}, store {store_ms})",
                c.name,
                c.stored.index.len(),
                c.stored.len,
            ));
        }
        let grpc = async {
            match grpc {
                Some((l, c)) => serve(c, l, limits, stopped()).await,
                None => Ok(()),
            }
        };
        let http = async {
            match http {
                Some((l, c, lim)) => super::http::server::serve(c, l, lim, stopped()).await,
                None => Ok(()),
            }
        };
        tokio::try_join!(grpc, http).map(|_| ())
    })
    .map_err(NotServed::Failed)
}

/// [`super::http::store::store`] on a thread with the loader's stack (blobs nest as deep as
/// it allows, and encoding them recurses), into the system's temporary directory.
fn store_deep(dir: &Path) -> Result<super::http::store::Stored, NotServed> {
    let scratch = std::env::temp_dir();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(crate::fbc::load::PARSER_STACK)
            .spawn_scoped(s, || super::http::store::store(dir, &scratch))
            .map_err(|e| format!("cannot start the store thread: {e}"))?
            .join()
            .map_err(|_| "the store thread failed".to_string())?
    })
    .map_err(NotServed::Failed)
}
