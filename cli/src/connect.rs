//! The cluster connection, found as kubectl finds it: `--kubeconfig` (else `$KUBECONFIG`, else
//! `~/.kube/config`, else the in-cluster service account), and `--context`.

use kube::config::{Config, KubeConfigOptions, Kubeconfig};
use olmctl::cli::cluster::Connection;

/// A client for the connection. Credentials never appear in errors (kube's errors name files
/// and fields, not their values).
pub async fn client(c: &Connection) -> Result<kube::Client, String> {
    let opts = KubeConfigOptions {
        context: c.context.clone(),
        ..Default::default()
    };
    let config = match (&c.kubeconfig, &c.context) {
        (Some(path), _) => {
            let kc = Kubeconfig::read_from(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(kc, &opts)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?
        }
        (None, Some(ctx)) => Config::from_kubeconfig(&opts)
            .await
            .map_err(|e| format!("kubeconfig context {ctx}: {e}"))?,
        (None, None) => Config::infer().await.map_err(|e| {
            format!(
                "no cluster configuration: {e} (pass --kubeconfig, set KUBECONFIG, or run in a pod)"
            )
        })?,
    };
    kube::Client::try_from(config).map_err(|e| format!("cannot build the cluster client: {e}"))
}
