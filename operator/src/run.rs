//! `olmctl-operator run`: the process. Every replica serves the probes and the conversion
//! webhook and keeps its caches; it is ready once the webhook listens and the caches are
//! synced ([`crate::http::Readiness`]). One replica leads by the Lease
//! ([`crate::leader`]) and only it reconciles.
//!
//! It ends on SIGTERM or SIGINT (the kubelet sends SIGTERM): the controller stops first, then
//! the Lease is released so that another replica takes over at once; exit 0. When leadership
//! is lost (no renewal within the renew deadline) it stops acting and exits 1, as
//! controller-runtime's manager does (`leader election lost`), and the kubelet restarts it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::http::Readiness;
use crate::leader::{Elector, Ended, Leadership, Timing};
use crate::{controller, http, metrics};

/// How the process runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this namespace's policies (default: every namespace).
    pub namespace: Option<String>,
    /// Namespace of the leader-election Lease.
    pub lease_namespace: String,
    /// Name of the Lease.
    pub lease_name: String,
    /// This replica's identity in the Lease.
    pub identity: String,
    /// Address of `/metrics`, `/healthz`, `/readyz`.
    pub probe_addr: SocketAddr,
    /// Address of the conversion webhook (HTTPS).
    pub webhook_addr: SocketAddr,
    /// Directory of `tls.crt` and `tls.key`.
    pub cert_dir: PathBuf,
    /// Leader election timing.
    pub timing: Timing,
    /// Full resync period.
    pub resync: Duration,
    /// The operator's Deployment, which owns the Lease (so it goes with the Deployment).
    pub lease_owner_deployment: Option<String>,
    /// The probe and webhook servers' bounds.
    pub limits: http::Limits,
    /// Certificate authorities (PEM files) trusted for catalogd's HTTPS, beside the system's.
    pub catalogd_cas_dir: Option<PathBuf>,
}

/// How the process ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// Asked to stop (the Lease released): exit 0.
    Stopped,
    /// Leadership lost: exit 1 so that the kubelet restarts the container.
    LeadershipLost,
}

/// Runs until `stop` resolves or leadership is lost.
pub async fn run(
    client: kube::Client,
    opts: Options,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<Exit, String> {
    opts.timing.validate()?;
    let metrics = Arc::new(metrics::Metrics::default());
    let ready = Arc::new(Readiness::default());
    let probes = http::bind(opts.probe_addr)
        .await
        .map_err(|e| format!("{}: {e}", opts.probe_addr))?;
    // The address bound (port 0 asks for any), as controller-runtime's metrics server and
    // webhook server log theirs when they start serving.
    if let Ok(addr) = probes.local_addr() {
        tracing::info!(%addr, "serving probes and metrics");
    }
    let probe_task = tokio::spawn(http::serve_probes(
        probes,
        opts.limits,
        metrics.clone(),
        ready.clone(),
    ));
    // The webhook serves on every replica: conversions are pure, and the API server calls
    // whichever endpoint the Service picks.
    let cert = opts.cert_dir.join("tls.crt");
    let webhook_task = if cert.exists() {
        ready.webhook_required.store(true, Ordering::SeqCst);
        let tls = http::tls_config(&opts.cert_dir)?;
        let l = http::bind(opts.webhook_addr)
            .await
            .map_err(|e| format!("{}: {e}", opts.webhook_addr))?;
        if let Ok(addr) = l.local_addr() {
            tracing::info!(%addr, "serving the conversion webhook");
        }
        ready.webhook.store(true, Ordering::SeqCst);
        Some(tokio::spawn(http::serve_webhook(l, opts.limits, tls)))
    } else {
        tracing::warn!(dir = %opts.cert_dir.display(), "conversion webhook not served (no certificate)");
        None
    };
    let leadership = Arc::new(Leadership::default());
    let elector = Elector::new(
        client.clone(),
        &opts.lease_namespace,
        &opts.lease_name,
        &opts.identity,
        opts.timing,
        crate::system_clock(),
    )?
    .owned_by_deployment(opts.lease_owner_deployment.clone());
    let mut ctx = controller::Ctx::new(
        client,
        metrics,
        leadership.clone(),
        crate::system_clock(),
        None,
    );
    if let Some(dir) = &opts.catalogd_cas_dir {
        ctx.catalogs = crate::extensions::Catalogs::with_catalogd_cas_dir(dir)?;
    }
    let ctx = Arc::new(ctx);
    // The controller stops on `stop`; the elector stops after it (then releases).
    let (stop_ctl_tx, stop_ctl_rx) = tokio::sync::oneshot::channel::<()>();
    let (stop_el_tx, stop_el_rx) = tokio::sync::oneshot::channel::<()>();
    let synced = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let controller = {
        let synced = synced.clone();
        let ready = ready.clone();
        let ctx = ctx.clone();
        let ns = opts.namespace.clone();
        let resync = opts.resync;
        tokio::spawn(async move {
            use futures::FutureExt;
            let stop = async {
                let _ = stop_ctl_rx.await;
            }
            .shared();
            // The cluster's version, before the caches and any reconcile, but in this task:
            // neither the election nor SIGTERM waits for a server that does not answer.
            tokio::select! {
                v = crate::kube_version(&ctx.client) => {
                    if let Some(v) = v
                        && let Ok(mut k) = ctx.kube_version.lock()
                    {
                        *k = Some(v);
                    }
                }
                _ = stop.clone() => return,
            }
            let watch_sync = async {
                while !synced.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                ready.synced.store(true, Ordering::SeqCst);
            };
            let run = controller::run(ctx, ns, resync, synced.clone(), stop);
            tokio::pin!(run);
            // The task ends with the controller, synced or not (a replica whose caches never
            // synced stops on SIGTERM too).
            tokio::select! {
                _ = watch_sync => run.await,
                _ = &mut run => {}
            }
        })
    };
    let elector_task = tokio::spawn(elector.run(leadership.clone(), async {
        let _ = stop_el_rx.await;
    }));
    tokio::pin!(stop);
    let mut elector_task = elector_task;
    let exit = tokio::select! {
        _ = &mut stop => {
            tracing::info!("stopping");
            let _ = stop_ctl_tx.send(());
            let _ = controller.await;
            let _ = stop_el_tx.send(());
            let _ = (&mut elector_task).await;
            Exit::Stopped
        }
        ended = &mut elector_task => {
            match ended {
                Ok(Ended::Stopped) => Exit::Stopped,
                _ => {
                    // Stop acting at once (the fence already says so).
                    let _ = stop_ctl_tx.send(());
                    controller.abort();
                    Exit::LeadershipLost
                }
            }
        }
    };
    probe_task.abort();
    if let Some(w) = webhook_task {
        w.abort();
    }
    Ok(exit)
}

/// Resolves on SIGTERM or SIGINT.
pub async fn signals() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A Go-style duration: `15s`, `500ms`, `2m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {s:?}: e.g. 15s, 500ms, 2m");
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(bad)?;
    let (n, unit) = s.split_at(split);
    let n: f64 = n.parse().map_err(|_| bad())?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("15").is_err());
        assert!(parse_duration("s").is_err());
    }
}
