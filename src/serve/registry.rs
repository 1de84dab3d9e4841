//! The `api.Registry` service over a [`ServedCatalog`], answering as `opm serve` does
//! (catalogs.md §13.2). Errors carry opm's messages with opm's code: its registry server returns
//! the cache's plain Go errors (`fmt.Errorf`), which grpc-go sends as `Unknown`, never NotFound
//! (operator-registry `pkg/server/server.go`).

use std::pin::Pin;
use std::sync::Arc;

use futures_util::Stream;
use tonic::{Request, Response, Status};

use super::api;
use super::catalog::ServedCatalog;

/// The service.
#[derive(Debug, Clone)]
pub struct RegistryService {
    catalog: Arc<ServedCatalog>,
}

impl RegistryService {
    /// Serves `catalog`.
    pub fn new(catalog: Arc<ServedCatalog>) -> Self {
        RegistryService { catalog }
    }

    /// `GetPackage`'s answer.
    pub fn package(&self, name: &str) -> Result<api::Package, Status> {
        let p = self
            .catalog
            .packages
            .get(name)
            .ok_or_else(|| Status::unknown(format!("package {name:?} not found")))?;
        Ok(api::Package {
            name: name.to_string(),
            channels: p
                .channels
                .iter()
                .map(|(n, c)| api::Channel {
                    name: n.clone(),
                    csv_name: c.head.clone(),
                    deprecation: deprecation(c.deprecation.as_deref()),
                })
                .collect(),
            default_channel_name: p.default_channel.clone(),
            deprecation: deprecation(p.deprecation.as_deref()),
        })
    }
}

fn deprecation(m: Option<&str>) -> Option<api::Deprecation> {
    m.map(|m| api::Deprecation {
        message: m.to_string(),
    })
}

type Stream_<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

fn stream<T: Send + 'static>(items: Vec<T>) -> Stream_<T> {
    Box::pin(futures_util::stream::iter(items.into_iter().map(Ok)))
}

fn not_yet<T>(rpc: &str) -> Result<T, Status> {
    Err(Status::unimplemented(format!(
        "{rpc} is not served by this build of olmctl yet"
    )))
}

#[tonic::async_trait]
impl api::registry_server::Registry for RegistryService {
    type ListPackagesStream = Stream_<api::PackageName>;

    async fn list_packages(
        &self,
        _: Request<api::ListPackageRequest>,
    ) -> Result<Response<Self::ListPackagesStream>, Status> {
        // Sorted: opm's order is a map iteration (random); sorted is one of its orders.
        let names: Vec<api::PackageName> = self
            .catalog
            .packages
            .keys()
            .map(|n| api::PackageName { name: n.clone() })
            .collect();
        Ok(Response::new(stream(names)))
    }

    async fn get_package(
        &self,
        req: Request<api::GetPackageRequest>,
    ) -> Result<Response<api::Package>, Status> {
        self.package(&req.get_ref().name).map(Response::new)
    }

    async fn get_bundle(
        &self,
        _: Request<api::GetBundleRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        not_yet("GetBundle")
    }

    async fn get_bundle_for_channel(
        &self,
        _: Request<api::GetBundleInChannelRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        not_yet("GetBundleForChannel")
    }

    type GetChannelEntriesThatReplaceStream = Stream_<api::ChannelEntry>;

    async fn get_channel_entries_that_replace(
        &self,
        _: Request<api::GetAllReplacementsRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatReplaceStream>, Status> {
        not_yet("GetChannelEntriesThatReplace")
    }

    async fn get_bundle_that_replaces(
        &self,
        _: Request<api::GetReplacementRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        not_yet("GetBundleThatReplaces")
    }

    type GetChannelEntriesThatProvideStream = Stream_<api::ChannelEntry>;

    async fn get_channel_entries_that_provide(
        &self,
        _: Request<api::GetAllProvidersRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatProvideStream>, Status> {
        not_yet("GetChannelEntriesThatProvide")
    }

    type GetLatestChannelEntriesThatProvideStream = Stream_<api::ChannelEntry>;

    async fn get_latest_channel_entries_that_provide(
        &self,
        _: Request<api::GetLatestProvidersRequest>,
    ) -> Result<Response<Self::GetLatestChannelEntriesThatProvideStream>, Status> {
        not_yet("GetLatestChannelEntriesThatProvide")
    }

    async fn get_default_bundle_that_provides(
        &self,
        _: Request<api::GetDefaultProviderRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        not_yet("GetDefaultBundleThatProvides")
    }

    type ListBundlesStream = Stream_<api::Bundle>;

    async fn list_bundles(
        &self,
        _: Request<api::ListBundlesRequest>,
    ) -> Result<Response<Self::ListBundlesStream>, Status> {
        not_yet("ListBundles")
    }
}
