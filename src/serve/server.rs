//! The gRPC server: `api.Registry`, `grpc.health.v1.Health` (SERVING once the catalog is
//! loaded) and server reflection on one listener; SIGTERM or SIGINT drains and stops it.

use std::net::SocketAddr;
use std::sync::Arc;

use super::api_server::experimental_registry_server::ExperimentalRegistryServer;
use super::api_server::registry_server::RegistryServer;
use super::catalog::ServedCatalog;
use super::registry::{ExperimentalService, RegistryService};

/// Serves `catalog` on `listener` until `shutdown` resolves; in-flight calls finish first.
pub async fn serve(
    catalog: Arc<ServedCatalog>,
    listener: tokio::net::TcpListener,
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
    let incoming = tokio_stream_of(listener);
    tonic::transport::Server::builder()
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

/// The listener as the stream of connections tonic takes, with Nagle's algorithm off (tonic only
/// sets that on listeners it binds itself; left on, each small answer waits for the client's
/// delayed ACK, about 40 ms per call).
fn tokio_stream_of(
    listener: tokio::net::TcpListener,
) -> impl futures_util::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    futures_util::stream::unfold(listener, |l| async move {
        let r = l.accept().await.map(|(s, _)| {
            let _ = s.set_nodelay(true);
            s
        });
        Some((r, l))
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
