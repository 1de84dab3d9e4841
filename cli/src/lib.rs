//! The `olmctl` command line over the olmctl library: clap, printing and exit statuses live
//! here, never in the library. The binary only calls [`main`].
//!
//! - [`cmd`]: one module per command group, each calling the library and printing its result;
//! - [`cluster`]: the commands that reach a cluster (install, uninstall, status) with kube;
//! - run under the name [`PLUGIN`] (`kubectl-olm`), the binary is kubectl's plugin `kubectl olm`,
//!   and under [`PLUGIN_COMPLETION`] it completes that plugin's command lines for kubectl;
//! - shared by the commands, never a command themselves: [`args`] (flags and values several
//!   commands take), [`inputs`] (catalogs and image inputs read with the command line's
//!   messages), [`build`] (one image operation run and printed), [`report`] (findings,
//!   delivered images, image news on stderr), [`term`] (exit statuses, output, stdout/stderr).

pub mod args;
pub mod build;
pub mod cluster;
pub mod cmd;
pub mod inputs;
pub mod report;
pub mod resolution;
pub mod term;

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

/// `--version`: the package version and the commit built from (cli/build.rs).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("OLMCTL_COMMIT"), ")");

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use cmd::{bundle, catalog, check, gate, image, install, manage, shell, status};
use term::{EXIT_OK, EXIT_USAGE, Output, error, out};

/// Package Kubernetes operators for OLM and manage their lifecycle: catalogs, bundles, images,
/// upgrade safety, installs and the upgrade gate.
#[derive(Debug, Parser)]
#[command(name = "olmctl", version = VERSION, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Run as `kubectl olm` (see [`PLUGIN`]).
    #[arg(skip)]
    plugin: bool,
    /// Largest input file read (catalog, bundle, policy and manifest files), e.g. 256M or 1G;
    /// a larger file is an error naming it.
    #[arg(long, global = true, value_name = "SIZE", value_parser = args::parse_size,
          default_value = "256M")]
    max_file_size: u64,
    /// Show no progress on stderr (progress is shown only when stderr is a terminal).
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
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
    Install(Box<install::InstallArgs>),
    /// Uninstall a package OLM installed: its Subscription and CSV (and, when asked, its CRDs
    /// and the CatalogSource `olmctl install` created).
    #[command(disable_version_flag = true)]
    Uninstall(install::UninstallArgs),
    /// Where OLM installs stand: Subscriptions, their CSVs, InstallPlans waiting for approval
    /// and the upgrade gate's decisions, in one table (as `kubectl get` prints).
    #[command(disable_version_flag = true)]
    Status(status::StatusArgs),
    /// What OLM v0 will install in a namespace: its Subscriptions and their dependencies,
    /// resolved as OLM's resolver decides, from cluster objects in files and the catalogs'
    /// content; when OLM cannot resolve, its message and why, in plain words. Exit 0
    /// resolved, 1 not resolvable, 2 usage or input error.
    #[command(disable_version_flag = true)]
    Resolve(cmd::resolve::ResolveArgs),
    /// The packages the cluster's catalogs offer, one row per channel: NAME, CATALOG, CHANNEL,
    /// LATEST CSV, AGE (OLM's PackageManifests; kubectl operator list-available).
    #[command(visible_alias = "list-available", disable_version_flag = true)]
    Packages(manage::PackagesArgs),
    /// Describe a package a cluster catalog offers: a channel's head, channels, install modes
    /// (kubectl operator describe).
    #[command(disable_version_flag = true)]
    Describe(manage::DescribeArgs),
    /// Upgrade a Subscription: approve its waiting InstallPlan (or move it to --channel first)
    /// and wait for the new CSV; a plan an UpgradePolicy covers is left to the gate (kubectl
    /// operator upgrade).
    #[command(disable_version_flag = true)]
    Upgrade(manage::UpgradeArgs),
    /// List the custom resources of an installed operator's owned CRDs in its OperatorGroup's
    /// namespaces (kubectl operator list-operands).
    #[command(disable_version_flag = true)]
    ListOperands(manage::OperandsArgs),
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
    /// Print the shell completion script (bash, zsh, fish, powershell, elvish).
    Completion(shell::CompletionArgs),
    /// Print the manual page, or write one per command into a directory.
    Man(shell::ManArgs),
}

/// The file name under which the binary is kubectl's plugin `olm`: kubectl runs
/// `kubectl olm ARGS` as `kubectl-olm ARGS` (krew installs it under that name; a symlink does
/// too). Run under it, usage and help read `kubectl olm`.
pub const PLUGIN: &str = "kubectl-olm";

/// The file name under which the binary answers kubectl's completion of `kubectl olm ...`:
/// kubectl (1.26+) runs `kubectl_complete-olm` from PATH for it (a second symlink).
pub const PLUGIN_COMPLETION: &str = "kubectl_complete-olm";

/// Whether `argv0`'s file name is `name` (or `name.exe`).
fn named(argv0: &std::ffi::OsStr, name: &str) -> bool {
    Path::new(argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.strip_suffix(".exe").unwrap_or(n) == name)
}

/// Whether `argv0` (the program path the process was started with; kubectl passes the
/// plugin's path found on PATH) names the plugin.
pub fn is_plugin(argv0: &std::ffi::OsStr) -> bool {
    named(argv0, PLUGIN)
}

/// The command line's definition, as `olmctl` or as `kubectl olm`.
pub fn command(plugin: bool) -> clap::Command {
    let cmd = Cli::command();
    if plugin {
        cmd.bin_name("kubectl olm").display_name(PLUGIN)
    } else {
        cmd
    }
}

/// Parses `args` (the program's path first), as `kubectl olm` when that path names [`PLUGIN`].
pub fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let plugin = args.first().is_some_and(|a| is_plugin(a));
    let mut cmd = command(plugin);
    let matches = cmd.try_get_matches_from_mut(args)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    cli.plugin = plugin;
    Ok(cli)
}

/// Runs the command line with the process arguments and returns the exit status.
pub fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if args.next().is_some_and(|a| named(&a, PLUGIN_COMPLETION)) {
        return ExitCode::from(cmd::shell::kubectl_complete(command(true), args.collect()));
    }
    let cli = match parse(std::env::args_os()) {
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
                .any(|a| a.chars().any(olmctl::text::needs_escape))
            {
                let escaped = args.iter().map(|a| olmctl::text::escape(a).into_owned());
                match parse(escaped) {
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
    if let Command::Catalog(cmd::catalog::CatalogCmd::Serve { no_grpc: true, .. }) = &cli.command {
        // Before any other thread: see olmctl::serve::single_arena.
        olmctl::serve::single_arena();
    }
    // Run on a large stack: catalog values may nest deeply and are walked recursively.
    let worker = std::thread::Builder::new()
        .stack_size(olmctl::fbc::load::PARSER_STACK)
        .spawn(move || run(cli));
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

/// Runs a parsed command line and returns the exit status.
pub fn run(cli: Cli) -> u8 {
    olmctl::input::set_max_file_size(cli.max_file_size);
    term::set_quiet(cli.quiet);
    match cli.command {
        Command::Catalog(c) => cmd::catalog::run(c),
        Command::Bundle(c) => cmd::bundle::run(c),
        Command::Check(c) => cmd::check::run(c),
        Command::Gate(c) => cmd::gate::run(c),
        Command::Image(c) => cmd::image::run(c),
        Command::Install(a) => cmd::install::run(*a),
        Command::Uninstall(a) => cmd::install::run_uninstall(a),
        Command::Status(a) => cmd::status::run(a),
        Command::Resolve(a) => cmd::resolve::run(a),
        Command::Packages(a) => cmd::manage::packages(a),
        Command::Describe(a) => cmd::manage::describe(a),
        Command::Upgrade(a) => cmd::manage::upgrade(a),
        Command::ListOperands(a) => cmd::manage::list_operands(a),
        Command::Completion(a) => cmd::shell::completion(a, command(false)),
        Command::Man(a) => cmd::shell::man(a, command(cli.plugin)),
        Command::Explain { code } => match olmctl::codes::find(&code) {
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
            let codes = olmctl::codes::all_codes();
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
