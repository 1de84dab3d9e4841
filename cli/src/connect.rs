//! The cluster connection, found as kubectl finds it: `--kubeconfig` (else `$KUBECONFIG`, else
//! `~/.kube/config`, else the in-cluster service account), and `--context`.

use kube::config::{Config, KubeConfigOptions, Kubeconfig};
use olmctl::cli::cluster::Connection;

use crate::api::{CALL_TIMEOUT, CONNECT_TIMEOUT, Cluster};

/// A client for the connection. Credentials never appear in errors (kube's errors name files
/// and fields, not their values; the server is named without user information).
pub async fn client(c: &Connection) -> Result<Cluster, String> {
    let opts = KubeConfigOptions {
        context: c.context.clone(),
        ..Default::default()
    };
    let mut config = match (&c.kubeconfig, &c.context) {
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
    // kube 5 sets no read timeout (a server that accepts the connection and never answers
    // held a call for ever). Each call has its own deadline within these ([`crate::api::Calls`]);
    // these bound the transport under any call.
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    config.read_timeout = Some(CALL_TIMEOUT);
    config.write_timeout = Some(CALL_TIMEOUT);
    // The read timeout counts from the request, not from when its pooled connection went idle.
    config.reset_reader_on_write = true;
    let server = olmctl::cli::cluster::server_name(&config.cluster_url);
    let client = kube::Client::try_from(config)
        .map_err(|e| format!("cannot build the cluster client: {e}"))?;
    Ok(Cluster { client, server })
}
