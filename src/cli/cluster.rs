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

/// An API server's URL as errors and logs name it: `scheme://host:port/path`, without the
/// user information a URL may carry (credentials never appear in errors).
pub fn server_name(url: &http::Uri) -> String {
    format!(
        "{}://{}{}{}",
        url.scheme_str().unwrap_or("https"),
        url.host().unwrap_or_default(),
        url.port_u16().map(|p| format!(":{p}")).unwrap_or_default(),
        url.path().trim_end_matches('/')
    )
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

#[cfg(test)]
mod tests {
    use super::server_name;

    #[test]
    fn server_names_leave_credentials_out() {
        let name = |u: &str| server_name(&u.parse().expect("uri"));
        assert_eq!(name("https://10.96.0.1:443/"), "https://10.96.0.1:443");
        assert_eq!(
            name("https://user:secret@api.example.com:6443/k8s/clusters/c-1/"),
            "https://api.example.com:6443/k8s/clusters/c-1"
        );
        assert_eq!(name("http://[::1]:8080"), "http://[::1]:8080");
    }
}
