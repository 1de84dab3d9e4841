//! The `olmctl` command line. The binary only calls [`main`]; everything here is library code so
//! that tests can drive it in-process.

mod bundle;
mod catalog;
mod check;
pub mod cluster;
pub mod diff;
mod gate;
mod graph;
mod image;
mod install;
pub mod oci;
mod template;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Exit status: no error-level findings.
pub const EXIT_OK: u8 = 0;
/// Exit status: error-level findings.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit status: usage or I/O error.
pub const EXIT_USAGE: u8 = 2;

/// Package Kubernetes operators for OLM: validate, format and inspect File-Based Catalogs.
#[derive(Debug, Parser)]
#[command(name = "olmctl", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Largest input file read (catalog, bundle, policy and manifest files), e.g. 256M or 1G;
    /// a larger file is an error naming it.
    #[arg(long, global = true, value_name = "SIZE", value_parser = oci::parse_size,
          default_value = "256M")]
    max_file_size: u64,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Work with File-Based Catalogs.
    #[command(subcommand)]
    Catalog(catalog::CatalogCmd),
    /// Work with registry+v1 bundles.
    #[command(subcommand)]
    Bundle(bundle::BundleCmd),
    /// Check upgrade safety: semver skew, CRD versions and schemas, Kubernetes API removals.
    #[command(subcommand)]
    Check(check::CheckCmd),
    /// Install a package through OLM: CatalogSource, OperatorGroup, Subscription (and an
    /// UpgradePolicy with --gate); --print writes them for `kubectl apply` or GitOps.
    #[command(disable_version_flag = true)]
    Install(install::InstallArgs),
    /// Uninstall a package OLM installed: its Subscription and CSV (and, when asked, its CRDs
    /// and the CatalogSource `olmctl install` created).
    #[command(disable_version_flag = true)]
    Uninstall(install::UninstallArgs),
    /// Build images of binaries (daemonless, as ko does).
    #[command(subcommand)]
    Image(image::ImageCmd),
    /// The upgrade gate (what olmctl-operator decides), offline.
    #[command(subcommand)]
    Gate(gate::GateCmd),
    /// Explain a diagnostic code (e.g. `olmctl explain FBC029`).
    Explain {
        /// The code.
        code: String,
    },
    /// List every diagnostic code.
    Codes {
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

/// Text for people or JSON for machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Human-readable text.
    Text,
    /// One JSON document.
    Json,
}

/// Whether to colour text written to stdout.
pub fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// Writes `s` to stdout, ignoring a closed pipe.
pub fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

/// Prints `error: <message>` to stderr, the message's control characters escaped (it names
/// files and values from the input).
pub fn error(message: impl std::fmt::Display) {
    eprintln!("error: {}", crate::text::esc(message));
}

/// Runs the CLI with the process arguments, without a cluster client ([`cluster::NoCluster`]).
pub fn main() -> ExitCode {
    main_with(Box::new(cluster::NoCluster))
}

/// Runs the CLI with the process arguments; `cluster` runs the commands that reach a cluster.
pub fn main_with(cluster: Box<dyn cluster::ClusterCommands>) -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            // clap quotes the offending argument; with control characters in the arguments,
            // the message is the one for the same arguments escaped.
            let args: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let e = if args
                .iter()
                .any(|a| a.chars().any(crate::text::needs_escape))
            {
                let escaped = args.iter().map(|a| crate::text::escape(a).into_owned());
                match Cli::try_parse_from(escaped) {
                    Err(escaped) => escaped,
                    Ok(_) => clap::Error::raw(
                        clap::error::ErrorKind::InvalidValue,
                        "an argument is not valid\n",
                    ),
                }
            } else {
                e
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // Run on a large stack: catalog values may nest deeply and are walked recursively.
    let worker = std::thread::Builder::new()
        .stack_size(crate::fbc::load::PARSER_STACK)
        .spawn(move || run_with(cli, cluster.as_ref()));
    let code = match worker.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => EXIT_USAGE,
        Err(e) => {
            error(format_args!("cannot start worker thread: {e}"));
            EXIT_USAGE
        }
    };
    ExitCode::from(code)
}

/// Runs a parsed command line without a cluster client and returns the exit status.
pub fn run(cli: Cli) -> u8 {
    run_with(cli, &cluster::NoCluster)
}

/// Runs a parsed command line and returns the exit status.
pub fn run_with(cli: Cli, cluster: &dyn cluster::ClusterCommands) -> u8 {
    crate::input::set_max_file_size(cli.max_file_size);
    match cli.command {
        Command::Catalog(c) => catalog::run(c),
        Command::Bundle(c) => bundle::run(c),
        Command::Check(c) => check::run(c),
        Command::Gate(c) => gate::run(c),
        Command::Image(c) => image::run(c),
        Command::Install(a) => install::run(a, cluster),
        Command::Uninstall(a) => install::run_uninstall(a, cluster),
        Command::Explain { code } => match crate::checks::find(&code) {
            Some(c) => {
                out(&format!(
                    "{} ({}): {}\n",
                    c.code,
                    c.severity.as_str(),
                    c.summary
                ));
                EXIT_OK
            }
            None => {
                error(format_args!(
                    "unknown code `{code}` (run `olmctl codes` for the list)"
                ));
                EXIT_USAGE
            }
        },
        Command::Codes { output } => {
            let codes = crate::checks::all_codes();
            match output {
                Output::Text => {
                    let mut s = String::new();
                    for c in codes {
                        s.push_str(&format!(
                            "{}  {:<7}  {}\n",
                            c.code,
                            c.severity.as_str(),
                            c.summary
                        ));
                    }
                    out(&s);
                }
                Output::Json => {
                    let v: Vec<_> = codes
                        .iter()
                        .map(|c| serde_json::json!({"code": c.code, "severity": c.severity.as_str(), "summary": c.summary}))
                        .collect();
                    out(&format!(
                        "{}\n",
                        serde_json::to_string_pretty(&v).unwrap_or_default()
                    ));
                }
            }
            EXIT_OK
        }
    }
}
