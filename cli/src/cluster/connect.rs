//! The cluster connection, found as kubectl finds it: `--kubeconfig` (else `$KUBECONFIG`, else
//! `~/.kube/config`, else the in-cluster service account), and `--context`.

use std::path::PathBuf;

use super::Connection;
use kube::config::{Config, KubeConfigOptions, Kubeconfig};

use super::api::{CALL_TIMEOUT, CONNECT_TIMEOUT, Cluster};

/// A client for the connection. Credentials never appear in errors (kube's errors name files
/// and fields, not their values; the server is named without user information).
pub async fn client(c: &Connection) -> Result<Cluster, String> {
    check_kubeconfigs(c)?;
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
    // held a call for ever). Each call has its own deadline within these ([`super::api::Calls`]);
    // these bound the transport under any call.
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    config.read_timeout = Some(CALL_TIMEOUT);
    config.write_timeout = Some(CALL_TIMEOUT);
    // The read timeout counts from the request, not from when its pooled connection went idle.
    config.reset_reader_on_write = true;
    let server = olmctl::text::server_name(&config.cluster_url);
    let client = kube::Client::try_from(config)
        .map_err(|e| format!("cannot build the cluster client: {e}"))?;
    Ok(Cluster { client, server })
}

/// The kubeconfig files kube reads checked first as olmctl's inputs are
/// ([`olmctl::input::check`]: a regular file within the size limit), as kube reads them whole
/// and would block on a FIFO or read a device without end. Missing ones are left to kube, which
/// falls back (or names them) as kubectl does.
fn check_kubeconfigs(c: &Connection) -> Result<(), String> {
    // As kube finds them: the flag, else every file of $KUBECONFIG, else ~/.kube/config.
    let mut files: Vec<PathBuf> = match &c.kubeconfig {
        Some(p) => vec![p.clone()],
        None => std::env::var_os("KUBECONFIG")
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default(),
    };
    if files.is_empty() {
        files.extend(std::env::home_dir().map(|h| h.join(".kube/config")));
    }
    for f in files {
        match olmctl::input::check(&f) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("{}: {e}", f.display()));
            }
            _ => {}
        }
    }
    Ok(())
}
