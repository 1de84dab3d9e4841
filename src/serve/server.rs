//! The gRPC server: `api.Registry`, `grpc.health.v1.Health` (SERVING once the catalog is
//! loaded) and server reflection on one listener; SIGTERM or SIGINT drains and stops it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::conn::{ActivityLayer, Conn, Deadlines};
use super::listen::{Listener, connection_cap};

use super::api_server::experimental_registry_server::ExperimentalRegistryServer;
use super::api_server::registry_server::RegistryServer;
use super::catalog::ServedCatalog;
use super::registry::{ExperimentalService, RegistryService};

/// The bounds `catalog serve` keeps against slow and greedy clients (README, Limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Open connections at most (`--max-connections`); lowered to half the descriptors left
    /// after a reserve of 64 when `RLIMIT_NOFILE` is lower.
    pub max_connections: usize,
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` of every connection (`--max-concurrent-streams`):
    /// streams beyond it are refused with `REFUSED_STREAM` before any work is done.
    pub max_concurrent_streams: u32,
    /// For the HTTP/2 preface and first frame (`--handshake-timeout`).
    pub handshake_timeout: Duration,
    /// With no call in flight (`--idle-timeout`).
    pub idle_timeout: Duration,
    /// Between keepalive pings (`--keepalive-interval`).
    pub keepalive_interval: Duration,
    /// For a ping's answer, then the connection is closed (`--keepalive-timeout`).
    pub keepalive_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            max_concurrent_streams: 256,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            keepalive_interval: Duration::from_secs(60),
            keepalive_timeout: Duration::from_secs(20),
        }
    }
}

/// Descriptors kept for the process itself (catalog files, the runtime, stdio) when the
/// connection cap is derived from `RLIMIT_NOFILE`.
const DESCRIPTOR_RESERVE: u64 = 64;

/// Serves `catalog` on `listener` until `shutdown` resolves; in-flight calls finish first.
pub async fn serve(
    catalog: Arc<ServedCatalog>,
    listener: tokio::net::TcpListener,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), String> {
    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<RegistryServer<RegistryService>>()
        .await;
    // The overall status ("") too: grpc_health_probe asks for it.
    health_reporter
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    // Reflection lists every service, as grpc-go's does for opm: the registry's, health and
    // reflection itself, in both the v1 and the v1alpha reflection protocols.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(super::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .map_err(|e| format!("reflection: {e}"))?;
    let reflection = reflection()
        .build_v1()
        .map_err(|e| format!("reflection: {e}"))?;
    let cap = connection_cap(limits.max_connections, DESCRIPTOR_RESERVE, 0.5);
    let deadlines = Deadlines {
        handshake: limits.handshake_timeout,
        idle: limits.idle_timeout,
    };
    let incoming = incoming(Listener::new(listener, cap), deadlines);
    tonic::transport::Server::builder()
        .max_concurrent_streams(limits.max_concurrent_streams)
        .http2_keepalive_interval(Some(limits.keepalive_interval))
        .http2_keepalive_timeout(Some(limits.keepalive_timeout))
        .layer(ActivityLayer)
        .add_service(health)
        .add_service(reflection)
        .add_service(reflection_v1alpha)
        .add_service(RegistryServer::new(RegistryService::new(catalog.clone())))
        .add_service(ExperimentalRegistryServer::new(ExperimentalService::new(
            catalog,
        )))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
        .map_err(|e| format!("gRPC server: {e}"))
}

/// The listener as the stream of connections tonic takes: capped, backing off on accept
/// errors (tonic's own loop retries at once), each connection with its deadlines and Nagle's
/// algorithm off (left on, each small answer waits for the client's delayed ACK, about 40 ms
/// per call).
fn incoming(
    listener: Listener,
    deadlines: Deadlines,
) -> impl futures_util::Stream<Item = std::io::Result<Conn>> {
    futures_util::stream::unfold(listener, move |mut l| async move {
        let accepted = l.accept().await;
        let conn = Conn::new(accepted.stream, Some(accepted.permit), deadlines);
        Some((Ok(conn), l))
    })
}

/// A future that resolves on SIGTERM or SIGINT. The handlers are installed when this is called
/// (inside the runtime, before the server reports SERVING), so a signal that comes early is not
/// the default action's (exit by signal) but a graceful stop.
pub fn signalled() -> impl std::future::Future<Output = ()> + Send {
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    async move {
        match (term, int) {
            (Some(mut t), Some(mut i)) => {
                tokio::select! {
                    _ = t.recv() => {}
                    _ = i.recv() => {}
                }
            }
            (Some(mut t), None) => {
                t.recv().await;
            }
            (None, Some(mut i)) => {
                i.recv().await;
            }
            (None, None) => std::future::pending::<()>().await,
        }
    }
}

/// Where to listen: `--port` on every interface, as opm serve does.
pub fn address(port: u16) -> SocketAddr {
    SocketAddr::from(([0, 0, 0, 0], port))
}
