//! The commands that reach a cluster: `olmctl install` (without `--print`), `olmctl uninstall`
//! and `olmctl status`, with kube. The Kubernetes client lives in this package, not in the
//! library, so that the k8s-openapi version feature is set by a binary's crate only.
//!
//! - [`connect`]: kubeconfig or in-cluster configuration, as kubectl finds it;
//! - [`install`], [`uninstall`], [`status`]: the commands, over an untyped [`api`];
//! - [`manage`]: kubectl-operator's commands (packages, describe, upgrade, list-operands,
//!   catalog add/list/remove);
//! - [`ui`]: progress lines and confirmations.

pub mod api;
pub mod connect;
pub mod install;
pub mod install_v1;
pub mod manage;
pub mod status;
pub mod ui;
pub mod uninstall;
pub mod uninstall_v1;

use std::path::PathBuf;
use std::time::Duration;

use olmctl::install::Install;
use olmctl::install::uninstall::Uninstall;

/// How to reach the cluster, as kubectl: `--kubeconfig` (else `$KUBECONFIG`, else
/// `~/.kube/config`, else the in-cluster service account) and `--context`.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// A kubeconfig file.
    pub kubeconfig: Option<PathBuf>,
    /// A context of the kubeconfig.
    pub context: Option<String>,
}

/// How long and how to wait.
#[derive(Debug, Clone)]
pub struct Waiting {
    /// Give up after this long.
    pub timeout: Duration,
    /// Poll interval.
    pub interval: Duration,
    /// Answer yes to confirmations (approving an InstallPlan, deleting CRDs).
    pub yes: bool,
    /// Return once the objects are written, without waiting for OLM.
    pub no_wait: bool,
}

/// `olmctl install`, checked, to apply.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// What to create.
    pub install: Install,
    /// The cluster.
    pub connection: Connection,
    /// Waiting and confirmation.
    pub waiting: Waiting,
}

/// `olmctl uninstall`, checked.
#[derive(Debug, Clone)]
pub struct UninstallRequest {
    /// What to delete.
    pub uninstall: Uninstall,
    /// The cluster.
    pub connection: Connection,
    /// Waiting and confirmation.
    pub waiting: Waiting,
}

/// `f` on a runtime of its own; an error is printed, as exit status 2.
fn block_on<T, F: std::future::Future<Output = Result<T, String>>>(f: F) -> Result<T, u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"));
    crate::term::or_usage(rt.and_then(|rt| rt.block_on(f)))
}

/// Applies an install and follows OLM's progress; returns the exit status.
pub fn run_install(req: InstallRequest) -> u8 {
    block_on(async {
        let cluster = connect::client(&req.connection).await?;
        install::run(&cluster, &req, &mut ui::Terminal).await
    })
    .unwrap_or_else(|code| code)
}

/// Applies an OLM v1 install and follows catalogd and operator-controller; returns the exit
/// status.
pub fn run_install_v1(
    i: olmctl::install::olmv1::InstallV1,
    connection: Connection,
    waiting: Waiting,
) -> u8 {
    block_on(async {
        let cluster = connect::client(&connection).await?;
        install_v1::run(&cluster, &i, &waiting, &mut ui::Terminal).await
    })
    .unwrap_or_else(|code| code)
}

/// The image the ClusterCatalog `name` serves ([`olmctl::install::olmv1::catalog_image`]), for
/// `install --olmv1 --cluster-catalog` to derive the installer RBAC from. `None` when the
/// catalog (or OLM v1) is not there, or cannot be read: the install itself then says why.
pub fn cluster_catalog_image(
    connection: &Connection,
    name: &str,
    timeout: std::time::Duration,
) -> Option<String> {
    let cc = read_object(connection, api::CLUSTER_CATALOG, None, name, timeout)?;
    olmctl::install::olmv1::catalog_image(&cc)
}

/// One object read from the cluster: `Ok(None)` when it does not exist, `Err` when it cannot
/// be read.
fn get_object(
    connection: &Connection,
    res: api::Res,
    namespace: Option<&str>,
    name: &str,
    timeout: std::time::Duration,
) -> Result<Option<serde_json::Value>, String> {
    with_calls(connection, timeout, async |c| {
        api::get(c, res, namespace, name).await
    })
}

/// Runs `f` with calls to the cluster of `connection`, on a runtime of its own.
fn with_calls<T>(
    connection: &Connection,
    timeout: std::time::Duration,
    f: impl AsyncFnOnce(&api::Calls) -> Result<T, String>,
) -> Result<T, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let cluster = connect::client(connection).await?;
        let c = api::Calls::new(&cluster, timeout);
        f(&c).await
    })
}

/// One object read from the cluster; `None` when it cannot be read or does not exist.
fn read_object(
    connection: &Connection,
    res: api::Res,
    namespace: Option<&str>,
    name: &str,
    timeout: std::time::Duration,
) -> Option<serde_json::Value> {
    get_object(connection, res, namespace, name, timeout)
        .ok()
        .flatten()
}

/// The `spec.installPlanApproval` of Subscription `namespace/name`, read from the cluster;
/// `None` when it cannot be read or has none.
pub fn subscription_approval(
    connection: &Connection,
    namespace: &str,
    name: &str,
    timeout: std::time::Duration,
) -> Option<String> {
    let sub = read_object(
        connection,
        api::SUBSCRIPTION,
        Some(namespace),
        name,
        timeout,
    )?;
    sub["spec"]["installPlanApproval"]
        .as_str()
        .map(str::to_string)
}

/// A CatalogSource read from the cluster (`None`: there is none), for `install --bundle` to
/// find the catalog an earlier run made; a failed read is an error, unlike [`read_object`].
pub fn catalog_source(
    connection: &Connection,
    namespace: &str,
    name: &str,
    timeout: std::time::Duration,
) -> Result<Option<serde_json::Value>, String> {
    get_object(
        connection,
        api::CATALOG_SOURCE,
        Some(namespace),
        name,
        timeout,
    )
}

/// The image a CatalogSource serves (`spec.image`), read from the cluster; `None` when it
/// cannot be read or the source has no image (a ConfigMap or address source).
pub fn catalog_source_image(
    connection: &Connection,
    namespace: &str,
    name: &str,
    timeout: std::time::Duration,
) -> Option<String> {
    let cs = read_object(
        connection,
        api::CATALOG_SOURCE,
        Some(namespace),
        name,
        timeout,
    )?;
    cs["spec"]["image"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Deletes an OLM v1 install; returns the exit status.
pub fn run_uninstall_v1(
    name: &str,
    catalog: Option<&str>,
    connection: Connection,
    waiting: Waiting,
) -> u8 {
    block_on(async {
        let cluster = connect::client(&connection).await?;
        uninstall_v1::run(&cluster, name, catalog, &waiting, &mut ui::Terminal).await
    })
    .unwrap_or_else(|code| code)
}

/// Deletes an install; returns the exit status.
pub fn run_uninstall(req: UninstallRequest) -> u8 {
    block_on(async {
        let cluster = connect::client(&req.connection).await?;
        uninstall::run(&cluster, &req, &mut ui::Terminal).await
    })
    .unwrap_or_else(|code| code)
}

/// `olmctl status`: what to read.
#[derive(Debug, Clone)]
pub struct StatusRequest {
    /// The namespace; `None`: the kubeconfig context's (else `default`), as kubectl.
    pub namespace: Option<String>,
    /// Every namespace.
    pub all_namespaces: bool,
    /// The cluster.
    pub connection: Connection,
    /// Give up after this long.
    pub timeout: Duration,
}

/// Reads the rows of `olmctl status`, with the namespace read (`None`: all); an error is
/// printed, as exit status 2.
pub fn run_status(req: &StatusRequest) -> Result<status::Listing, u8> {
    block_on(async {
        let cluster = connect::client(&req.connection).await?;
        status::read(&cluster, req).await
    })
}

/// What `olmctl resolve` reads of a live cluster (read-only): the namespace's Subscriptions,
/// ClusterServiceVersions, OperatorGroups and CatalogSources, and the CatalogSources of the
/// global catalog namespace; each with its apiVersion and kind (a LIST's items have none).
pub fn resolution_objects(
    connection: &Connection,
    namespace: &str,
    global_namespace: &str,
    timeout: std::time::Duration,
) -> Result<Vec<serde_json::Value>, String> {
    with_calls(connection, timeout, async |c| {
        let mut lists = vec![
            (api::SUBSCRIPTION, namespace),
            (api::CSV, namespace),
            (api::OPERATOR_GROUP, namespace),
            (api::CATALOG_SOURCE, namespace),
        ];
        if global_namespace != namespace {
            lists.push((api::CATALOG_SOURCE, global_namespace));
        }
        let mut out = Vec::new();
        for (r, ns) in lists {
            for mut o in api::list(c, r, Some(ns)).await? {
                o["apiVersion"] = serde_json::json!(format!("{}/{}", r.group, r.version));
                o["kind"] = serde_json::json!(r.kind);
                out.push(o);
            }
        }
        Ok(out)
    })
}
