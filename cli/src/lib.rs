//! The `olmctl` binary's cluster side: `olmctl install` and `olmctl uninstall` with kube, on
//! the olmctl library's command line ([`olmctl::cli::main_with`]). The Kubernetes client lives
//! here, not in the library, so that the k8s-openapi version feature is set by a binary's crate
//! only.
//!
//! - [`connect`]: kubeconfig or in-cluster configuration, as kubectl finds it;
//! - [`install`], [`uninstall`]: the commands, over an untyped [`api`];
//! - [`ui`]: progress lines and confirmations.

pub mod api;
pub mod connect;
pub mod install;
pub mod ui;
pub mod uninstall;

use olmctl::cli::cluster::{ClusterCommands, InstallRequest, UninstallRequest};
use olmctl::cli::{EXIT_USAGE, error};

/// The cluster commands, with kube.
pub struct Kube;

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

impl ClusterCommands for Kube {
    fn install(&self, req: InstallRequest) -> u8 {
        block_on(async {
            let cluster = connect::client(&req.connection).await?;
            install::run(&cluster, &req, &mut ui::Terminal).await
        })
    }

    fn uninstall(&self, req: UninstallRequest) -> u8 {
        block_on(async {
            let cluster = connect::client(&req.connection).await?;
            uninstall::run(&cluster, &req, &mut ui::Terminal).await
        })
    }
}
