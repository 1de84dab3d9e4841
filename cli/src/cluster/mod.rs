//! The commands that reach a cluster: `olmctl install` (without `--print`) and `olmctl
//! uninstall`, with kube. The Kubernetes client lives in this package, not in the library, so
//! that the k8s-openapi version feature is set by a binary's crate only.
//!
//! - [`connect`]: kubeconfig or in-cluster configuration, as kubectl finds it;
//! - [`install`], [`uninstall`]: the commands, over an untyped [`api`];
//! - [`ui`]: progress lines and confirmations.

pub mod api;
pub mod connect;
pub mod install;
pub mod ui;
pub mod uninstall;

use std::path::PathBuf;
use std::time::Duration;

use olmctl::install::Install;
use olmctl::install::uninstall::Uninstall;

use crate::term::{EXIT_USAGE, error};

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

fn block_on<F: std::future::Future<Output = Result<u8, String>>>(f: F) -> u8 {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            error(format_args!("cannot start the runtime: {e}"));
            return EXIT_USAGE;
        }
    };
    match rt.block_on(f) {
        Ok(code) => code,
        Err(e) => {
            error(e);
            EXIT_USAGE
        }
    }
}

/// Applies an install and follows OLM's progress; returns the exit status.
pub fn run_install(req: InstallRequest) -> u8 {
    block_on(async {
        let cluster = connect::client(&req.connection).await?;
        install::run(&cluster, &req, &mut ui::Terminal).await
    })
}

/// Deletes an install; returns the exit status.
pub fn run_uninstall(req: UninstallRequest) -> u8 {
    block_on(async {
        let cluster = connect::client(&req.connection).await?;
        uninstall::run(&cluster, &req, &mut ui::Terminal).await
    })
}
