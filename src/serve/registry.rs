//! The `api.Registry` service over a [`ServedCatalog`], answering as `opm serve` does
//! (catalogs.md §13.2). Errors carry opm's messages with opm's code: its registry server returns
//! the cache's plain Go errors (`fmt.Errorf`), which grpc-go sends as `Unknown`, never NotFound
//! (operator-registry `pkg/server/server.go`).

use super::echo::{plain, quoted};
use std::pin::Pin;
use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use super::api;
use super::catalog::{ServedCatalog, ServedChannel, ServedEntry};
use super::reply::{BundleReply, Shape};

/// The service.
#[derive(Debug, Clone)]
pub struct RegistryService {
    catalog: Arc<ServedCatalog>,
    /// Every (package, channel, bundle) in `ListBundles` order, worked out once.
    listing: Arc<[(String, String, String)]>,
}

impl RegistryService {
    /// Serves `catalog`.
    pub fn new(catalog: Arc<ServedCatalog>) -> Self {
        let mut listing: Vec<(String, String, String)> = Vec::new();
        for (pn, p) in &catalog.packages {
            for (cn, c) in &p.channels {
                for bn in c.entries.keys() {
                    listing.push((pn.clone(), cn.clone(), bn.clone()));
                }
            }
        }
        // opm's ListBundles order: channel name, then package name, then bundle name.
        listing.sort_by(|a, b| (&a.1, &a.0, &a.2).cmp(&(&b.1, &b.0, &b.2)));
        RegistryService {
            catalog,
            listing: listing.into(),
        }
    }

    fn channel(&self, pkg: &str, ch: &str) -> Result<&ServedChannel, Status> {
        let p = self
            .catalog
            .packages
            .get(pkg)
            .ok_or_else(|| Status::unknown(format!("package {} not found", quoted(pkg))))?;
        p.channels.get(ch).ok_or_else(|| {
            Status::unknown(format!(
                "package {}, channel {} not found",
                quoted(pkg),
                quoted(ch)
            ))
        })
    }

    /// A bundle of a channel (`None`: its head) as the single-bundle RPCs send it, or opm's
    /// errors for what is not there.
    fn trimmed(&self, pkg: &str, ch: &str, name: Option<&str>) -> Result<BundleReply, Status> {
        let c = self.channel(pkg, ch)?;
        let name = name.unwrap_or(&c.head);
        let e = c.entries.get(name).ok_or_else(|| {
            Status::unknown(format!(
                "package {}, channel {}, bundle {} not found",
                quoted(pkg),
                quoted(ch),
                quoted(name)
            ))
        })?;
        Ok(bundle(pkg, ch, name, e, Shape::Trimmed))
    }

    /// `GetLatestChannelEntriesThatProvide`'s entries (sorted by package, channel).
    fn latest_providers(
        &self,
        g: &str,
        v: &str,
        k: &str,
    ) -> Result<Vec<api::ChannelEntry>, Status> {
        let mut out = Vec::new();
        for (pn, p) in &self.catalog.packages {
            for (cn, c) in &p.channels {
                if let Some(e) = c.entries.get(&c.head)
                    && provides(e, g, v, k)
                {
                    provider_entries(pn, cn, c, &c.head, e, false, &mut out);
                }
            }
        }
        if out.is_empty() {
            return Err(no_providers(g, v, k));
        }
        Ok(out)
    }

    /// `GetPackage`'s answer.
    pub fn package(&self, name: &str) -> Result<api::Package, Status> {
        let p = self
            .catalog
            .packages
            .get(name)
            .ok_or_else(|| Status::unknown(format!("package {} not found", quoted(name))))?;
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

fn bundle(pkg: &str, ch: &str, name: &str, e: &Arc<ServedEntry>, shape: Shape) -> BundleReply {
    BundleReply {
        package: pkg.to_string(),
        channel: ch.to_string(),
        name: name.to_string(),
        entry: Some(e.clone()),
        shape,
    }
}

fn entry(pkg: &str, ch: &str, name: &str, replaces: &str) -> api::ChannelEntry {
    api::ChannelEntry {
        package_name: pkg.to_string(),
        channel_name: ch.to_string(),
        bundle_name: name.to_string(),
        replaces: replaces.to_string(),
    }
}

/// opm's `channelEntriesForBundle`: the bundle with its `replaces`, then one entry per skipped
/// name (other than `replaces`), only names of the same channel unless `any_skip`.
fn provider_entries(
    pkg: &str,
    ch: &str,
    c: &ServedChannel,
    name: &str,
    e: &ServedEntry,
    any_skip: bool,
    out: &mut Vec<api::ChannelEntry>,
) {
    out.push(entry(pkg, ch, name, &e.replaces));
    for s in &e.skips {
        if *s != e.replaces && (any_skip || c.entries.contains_key(s)) {
            out.push(entry(pkg, ch, name, s));
        }
    }
}

fn provides(e: &ServedEntry, g: &str, v: &str, k: &str) -> bool {
    e.data
        .provided
        .iter()
        .any(|[a, b, c]| a == g && b == v && c == k)
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

fn no_providers(g: &str, v: &str, k: &str) -> Status {
    Status::unknown(format!(
        "no channel entries found that provide group:{} version:{} kind:{}",
        quoted(g),
        quoted(v),
        quoted(k)
    ))
}

#[tonic::async_trait]
impl super::api_server::registry_server::Registry for RegistryService {
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
        req: Request<api::GetBundleRequest>,
    ) -> Result<Response<BundleReply>, Status> {
        let r = req.get_ref();
        self.trimmed(&r.pkg_name, &r.channel_name, Some(&r.csv_name))
            .map(Response::new)
    }

    async fn get_bundle_for_channel(
        &self,
        req: Request<api::GetBundleInChannelRequest>,
    ) -> Result<Response<BundleReply>, Status> {
        let r = req.get_ref();
        self.trimmed(&r.pkg_name, &r.channel_name, None)
            .map(Response::new)
    }

    type GetChannelEntriesThatReplaceStream = Stream_<api::ChannelEntry>;

    async fn get_channel_entries_that_replace(
        &self,
        req: Request<api::GetAllReplacementsRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatReplaceStream>, Status> {
        let name = &req.get_ref().csv_name;
        let mut out = Vec::new();
        for (pn, p) in &self.catalog.packages {
            for (cn, c) in &p.channels {
                for (bn, e) in &c.entries {
                    if e.replaces == *name {
                        out.push(entry(pn, cn, bn, &e.replaces));
                    }
                    // opm names the bundle's own replaces here, not the skipped name.
                    for s in &e.skips {
                        if s == name && *s != e.replaces {
                            out.push(entry(pn, cn, bn, &e.replaces));
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(Status::unknown(format!(
                "no channel entries found that replace {}",
                plain(name)
            )));
        }
        Ok(Response::new(stream(out)))
    }

    async fn get_bundle_that_replaces(
        &self,
        req: Request<api::GetReplacementRequest>,
    ) -> Result<Response<BundleReply>, Status> {
        let r = req.get_ref();
        let p =
            self.catalog.packages.get(&r.pkg_name).ok_or_else(|| {
                Status::unknown(format!("package {} not found", plain(&r.pkg_name)))
            })?;
        let c = p.channels.get(&r.channel_name).ok_or_else(|| {
            Status::unknown(format!(
                "package {}, channel {} not found",
                quoted(&r.pkg_name),
                quoted(&r.channel_name)
            ))
        })?;
        // opm takes whichever a map iteration meets first; here the first by bundle name.
        let found = c
            .entries
            .iter()
            .find(|(_, e)| e.replaces == r.csv_name || e.skips.contains(&r.csv_name));
        let Some((name, e)) = found else {
            return Err(Status::unknown(format!(
                "no entry found for package {}, channel {}",
                quoted(&r.pkg_name),
                quoted(&r.channel_name)
            )));
        };
        Ok(Response::new(bundle(
            &r.pkg_name,
            &r.channel_name,
            name,
            e,
            Shape::Trimmed,
        )))
    }

    type GetChannelEntriesThatProvideStream = Stream_<api::ChannelEntry>;

    async fn get_channel_entries_that_provide(
        &self,
        req: Request<api::GetAllProvidersRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatProvideStream>, Status> {
        let r = req.get_ref();
        let mut out = Vec::new();
        for (pn, p) in &self.catalog.packages {
            for (cn, c) in &p.channels {
                for (bn, e) in &c.entries {
                    if provides(e, &r.group, &r.version, &r.kind) {
                        provider_entries(pn, cn, c, bn, e, true, &mut out);
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(no_providers(&r.group, &r.version, &r.kind));
        }
        Ok(Response::new(stream(out)))
    }

    type GetLatestChannelEntriesThatProvideStream = Stream_<api::ChannelEntry>;

    async fn get_latest_channel_entries_that_provide(
        &self,
        req: Request<api::GetLatestProvidersRequest>,
    ) -> Result<Response<Self::GetLatestChannelEntriesThatProvideStream>, Status> {
        let r = req.get_ref();
        let out = self.latest_providers(&r.group, &r.version, &r.kind)?;
        Ok(Response::new(stream(out)))
    }

    async fn get_default_bundle_that_provides(
        &self,
        req: Request<api::GetDefaultProviderRequest>,
    ) -> Result<Response<BundleReply>, Status> {
        let r = req.get_ref();
        let latest = self.latest_providers(&r.group, &r.version, &r.kind)?;
        // The first package (by name) whose default channel's head provides it.
        for e in &latest {
            let Some(p) = self.catalog.packages.get(&e.package_name) else {
                continue;
            };
            if e.channel_name == p.default_channel {
                return self
                    .trimmed(&e.package_name, &e.channel_name, Some(&e.bundle_name))
                    .map(Response::new);
            }
        }
        Err(Status::unknown(format!(
            "no entry found that provides group:{} version:{} kind:{}",
            quoted(&r.group),
            quoted(&r.version),
            quoted(&r.kind)
        )))
    }

    type ListBundlesStream = Stream_<BundleReply>;

    async fn list_bundles(
        &self,
        req: Request<api::ListBundlesRequest>,
    ) -> Result<Response<Self::ListBundlesStream>, Status> {
        let _ = req;
        // Built one at a time as the client reads: a stream holds one bundle, not a copy of
        // the catalog.
        let (catalog, listing) = (self.catalog.clone(), self.listing.clone());
        let out = futures_util::stream::iter(0..listing.len()).filter_map(move |i| {
            let (p, c, b) = &listing[i];
            let e = catalog
                .packages
                .get(p)
                .and_then(|pk| pk.channels.get(c))
                .and_then(|ch| ch.entries.get(b))
                .map(|e| Ok(bundle(p, c, b, e, Shape::Listed)));
            std::future::ready(e)
        });
        Ok(Response::new(Box::pin(out)))
    }
}

/// `api.ExperimentalRegistry`: custom-schema blobs, for clients that acknowledge it is
/// experimental (operator-registry#1981).
#[derive(Debug, Clone)]
pub struct ExperimentalService {
    catalog: Arc<ServedCatalog>,
}

impl ExperimentalService {
    /// Serves `catalog`'s custom-schema blobs.
    pub fn new(catalog: Arc<ServedCatalog>) -> Self {
        ExperimentalService { catalog }
    }
}

/// opm's key rule for a schema or package name.
fn valid_key(what: &str, v: &str) -> Result<(), Status> {
    let ok = v.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!(
            "invalid {what} {}: must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$",
            quoted(v)
        )))
    }
}

#[tonic::async_trait]
impl super::api_server::experimental_registry_server::ExperimentalRegistry for ExperimentalService {
    type ExperimentalListPackageCustomSchemasStream = Stream_<prost_types::Struct>;

    async fn experimental_list_package_custom_schemas(
        &self,
        req: Request<api::ExperimentalListPackageCustomSchemasRequest>,
    ) -> Result<Response<Self::ExperimentalListPackageCustomSchemasStream>, Status> {
        // Without the acknowledgement (first value exactly "true") the stream is empty, before
        // anything is checked.
        let acknowledged = req
            .metadata()
            .get("x-acknowledge-experimental")
            .and_then(|v| v.to_str().ok())
            == Some("true");
        if !acknowledged {
            return Ok(Response::new(stream(Vec::new())));
        }
        let r = req.get_ref();
        if r.schema.is_empty() {
            return Err(Status::invalid_argument("schema is required"));
        }
        valid_key("schema", &r.schema)?;
        if !r.package_name.is_empty() {
            valid_key("packageName", &r.package_name)?;
        }
        let blobs = self
            .catalog
            .custom
            .get(&(r.schema.clone(), r.package_name.clone()))
            .cloned()
            .unwrap_or_default();
        Ok(Response::new(stream(blobs)))
    }
}
