//! The olmctl-operator binary: `olmctl-operator run` runs the gate in the
//! cluster; `olmctl-operator crd` prints the UpgradePolicy CRD.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::{Parser, Subcommand};
use olmctl_operator::{controller, crd, http, leader, metrics, system_clock};

/// An upgrade gate for OLM: approves InstallPlans by UpgradePolicy.
#[derive(Parser)]
#[command(name = "olmctl-operator", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the controller (in-cluster config, else the kubeconfig).
    Run(RunArgs),
    /// Print the UpgradePolicy CustomResourceDefinition as YAML.
    Crd {
        /// The CRD an earlier release shipped (0.1.0, 0.2.0), for the bundle history.
        #[arg(long)]
        release: Option<String>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Only this namespace's policies (default: every namespace).
    #[arg(long)]
    namespace: Option<String>,
    /// Namespace of the leader-election Lease (default: $POD_NAMESPACE, else olmctl-system).
    #[arg(long)]
    lease_namespace: Option<String>,
    /// Address of /metrics, /healthz and /readyz.
    #[arg(long, default_value = "0.0.0.0:8080")]
    probe_addr: SocketAddr,
    /// Address of the conversion webhook (HTTPS).
    #[arg(long, default_value = "0.0.0.0:9443")]
    webhook_addr: SocketAddr,
    /// Directory of the webhook's tls.crt and tls.key (OLM mounts them here).
    #[arg(long, default_value = http::CERT_DIR)]
    cert_dir: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Crd { release: None } => {
            print!("{}", crd::crd_yaml());
            ExitCode::SUCCESS
        }
        Command::Crd { release: Some(r) } => match crd::crd_yaml_for(&r) {
            Some(y) => {
                print!("{y}");
                ExitCode::SUCCESS
            }
            None => {
                eprintln!(
                    "error: unknown release {r:?} (known: {})",
                    crd::RELEASES.join(", ")
                );
                ExitCode::from(2)
            }
        },
        Command::Run(args) => run(args),
    }
}

fn run(args: RunArgs) -> ExitCode {
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,kube=warn".into()),
        )
        .init();
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match rt.block_on(serve(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "stopped");
            ExitCode::from(1)
        }
    }
}

async fn serve(args: RunArgs) -> Result<(), String> {
    let client = kube::Client::try_default()
        .await
        .map_err(|e| format!("no cluster configuration (in-cluster or kubeconfig): {e}"))?;
    let metrics = Arc::new(metrics::Metrics::default());
    let ready = Arc::new(AtomicBool::new(false));
    let probes = http::bind(args.probe_addr)
        .await
        .map_err(|e| format!("{}: {e}", args.probe_addr))?;
    tokio::spawn(http::serve_probes(probes, metrics.clone(), ready.clone()));
    // The webhook serves whatever replica holds the Lease: conversions are pure.
    match http::tls_config(&args.cert_dir) {
        Ok(tls) => {
            let l = http::bind(args.webhook_addr)
                .await
                .map_err(|e| format!("{}: {e}", args.webhook_addr))?;
            tokio::spawn(http::serve_webhook(l, tls));
        }
        Err(e) => tracing::warn!(error = %e, "conversion webhook not served (no certificate)"),
    }
    let lease_ns = args
        .lease_namespace
        .or_else(|| std::env::var("POD_NAMESPACE").ok())
        .unwrap_or_else(|| "olmctl-system".into());
    let identity = std::env::var("POD_NAME")
        .unwrap_or_else(|_| format!("olmctl-operator-{}", std::process::id()));
    let leader = Arc::new(AtomicBool::new(false));
    leader::Elector::new(
        client.clone(),
        &lease_ns,
        "olmctl-operator",
        &identity,
        Duration::from_secs(15),
        system_clock(),
    )
    .lead(leader.clone())
    .await;
    let kube_version = olmctl_operator::kube_version(&client).await;
    let ctx = Arc::new(controller::Ctx::new(
        client,
        metrics,
        leader.clone(),
        system_clock(),
        kube_version,
    ));
    ready.store(true, std::sync::atomic::Ordering::SeqCst);
    let lost = {
        let leader = leader.clone();
        async move {
            let stop = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            let lost = async {
                while leader.load(std::sync::atomic::Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            };
            tokio::select! { _ = stop => {}, _ = lost => {} }
        }
    };
    controller::run(ctx, args.namespace, lost).await;
    if leader.load(std::sync::atomic::Ordering::SeqCst) {
        Ok(())
    } else {
        Err("lost the leader Lease".into())
    }
}
