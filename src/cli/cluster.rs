//! The seam between the command line (this library, which knows no Kubernetes client) and a
//! binary that can reach a cluster: `olmctl install` without `--print` and `olmctl uninstall`
//! are parsed and checked here, then handed to [`ClusterCommands`]. The `olmctl` binary
//! (`cli/`) implements it with kube; the library's own [`NoCluster`] refuses.

use std::path::PathBuf;
use std::time::Duration;

use crate::install::Install;
use crate::install::uninstall::Uninstall;

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

/// The commands that talk to a cluster; each returns the exit status.
pub trait ClusterCommands: Send {
    /// Applies an install and follows OLM's progress.
    fn install(&self, req: InstallRequest) -> u8;
    /// Deletes an install.
    fn uninstall(&self, req: UninstallRequest) -> u8;
}

/// No cluster client in this build: the commands refuse with what to do instead.
pub struct NoCluster;

impl ClusterCommands for NoCluster {
    fn install(&self, _: InstallRequest) -> u8 {
        super::error(
            "this build has no cluster client: write the manifests with --print and apply them (`olmctl install ... --print | kubectl apply -f -`)",
        );
        super::EXIT_USAGE
    }

    fn uninstall(&self, _: UninstallRequest) -> u8 {
        super::error("this build has no cluster client: use the olmctl binary");
        super::EXIT_USAGE
    }
}
