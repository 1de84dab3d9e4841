//! The olmctl-operator binary: `olmctl-operator run` runs the gate in the
//! cluster; `olmctl-operator crd` prints the UpgradePolicy CRD.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use olmctl_operator::{client, crd, http, leader, run};

/// The static (musl) build allocates with mimalloc, as olmctl's (cli/src/main.rs).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `--version`: the package version and the commit built from (build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("OLMCTL_COMMIT"), ")");

/// An upgrade gate for OLM: approves InstallPlans by UpgradePolicy.
#[derive(Parser)]
#[command(name = "olmctl-operator", version = VERSION)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the controller (in-cluster config, else the kubeconfig).
    Run(Box<RunArgs>),
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
    /// How long a standby waits, after it last saw the Lease change, before taking it over.
    #[arg(long, default_value = "15s", value_parser = run::parse_duration)]
    lease_duration: Duration,
    /// How long the leader retries renewing before it stops leading.
    #[arg(long, default_value = "10s", value_parser = run::parse_duration)]
    renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews.
    #[arg(long, default_value = "2s", value_parser = run::parse_duration)]
    retry_period: Duration,
    /// How often every namespace with a policy is judged again without an event.
    #[arg(long, default_value = "10m", value_parser = run::parse_duration)]
    resync: Duration,
    /// The operator's Deployment in the Lease's namespace: it owns the Lease, so the garbage
    /// collector removes the Lease with the Deployment.
    #[arg(long, value_name = "NAME")]
    lease_owner_deployment: Option<String>,
    /// Open webhook connections at most (never more than half the descriptors `ulimit -n`
    /// leaves after 64); more wait in the listen backlog.
    #[arg(long, default_value_t = 256, value_name = "N")]
    webhook_max_connections: usize,
    /// Open probe and metrics connections at most (never more than a quarter of them).
    #[arg(long, default_value_t = 32, value_name = "N")]
    probe_max_connections: usize,
    /// Close a webhook connection whose TLS handshake takes longer.
    #[arg(long, default_value = "10s", value_parser = run::parse_duration)]
    tls_handshake_timeout: Duration,
    /// Close a connection whose request headers take longer (or that stays idle that long
    /// between requests).
    #[arg(long, default_value = "10s", value_parser = run::parse_duration)]
    header_timeout: Duration,
    /// Answer 408 when a request body takes longer; close a webhook connection whose answer
    /// is not read within it.
    #[arg(long, default_value = "30s", value_parser = run::parse_duration)]
    body_timeout: Duration,
    /// The longest one call to the API server may take (a watch: until its response headers);
    /// a call still unanswered then fails and is retried.
    #[arg(long, default_value = "60s", value_parser = run::parse_duration)]
    request_timeout: Duration,
    /// Certificate authorities (every file of the directory, PEM) to trust for catalogd's
    /// HTTPS, where OLM v1's catalog content is read (operator-controller's flag of the same
    /// name, `--ca-certs-dir` before its PR 1673, kept as an alias); the system's are trusted
    /// too. Read again when its files change.
    #[arg(long, value_name = "DIR", alias = "ca-certs-dir")]
    catalogd_cas_dir: Option<PathBuf>,
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
        Command::Run(args) => serve(*args),
    }
}

fn serve(args: RunArgs) -> ExitCode {
    // Review bodies and answers are megabytes: freed, they go back to the system.
    olmctl::serve::map_large_buffers();
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
    let timing = leader::Timing {
        lease_duration: args.lease_duration,
        renew_deadline: args.renew_deadline,
        retry_period: args.retry_period,
    };
    if let Err(e) = timing.validate() {
        eprintln!("error: leader election: {e}");
        return ExitCode::from(2);
    }
    let opts = run::Options {
        namespace: args.namespace,
        lease_namespace: args
            .lease_namespace
            .or_else(|| std::env::var("POD_NAMESPACE").ok())
            .unwrap_or_else(|| "olmctl-system".into()),
        lease_name: "olmctl-operator".into(),
        identity: leader::identity(
            &std::env::var("POD_NAME").unwrap_or_else(|_| "olmctl-operator".into()),
        ),
        probe_addr: args.probe_addr,
        webhook_addr: args.webhook_addr,
        cert_dir: args.cert_dir,
        timing,
        resync: args.resync,
        lease_owner_deployment: args.lease_owner_deployment,
        limits: http::Limits {
            webhook_connections: args.webhook_max_connections,
            probe_connections: args.probe_max_connections,
            tls_handshake: args.tls_handshake_timeout,
            header: args.header_timeout,
            body: args.body_timeout,
        },
        catalogd_cas_dir: args.catalogd_cas_dir,
    };
    let request_timeout = args.request_timeout;
    let result = rt.block_on(async move {
        let config = kube::Config::infer()
            .await
            .map_err(|e| format!("no cluster configuration (in-cluster or kubeconfig): {e}"))?;
        tracing::info!(server = %olmctl::text::server_name(&config.cluster_url), request_timeout = ?request_timeout, "API server");
        let client = client::build(config, request_timeout)?;
        run::run(client, opts, run::signals()).await
    });
    match result {
        Ok(run::Exit::Stopped) => ExitCode::SUCCESS,
        Ok(run::Exit::LeadershipLost) => {
            tracing::error!("leader election lost");
            ExitCode::from(1)
        }
        Err(e) => {
            tracing::error!(error = %e, "stopped");
            eprintln!("error: {}", olmctl::text::esc(&e));
            ExitCode::from(1)
        }
    }
}
