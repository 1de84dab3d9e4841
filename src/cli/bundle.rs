//! `olmctl bundle ...`.

use std::path::PathBuf;

use clap::Subcommand;

use super::{EXIT_USAGE, Output};
use crate::checks::bundle::Options;
use crate::diag::sort_findings;

#[derive(Debug, Subcommand)]
pub enum BundleCmd {
    /// Validate bundle directories: the registry+v1 format, owned/bundled CRDs, the CSV, and
    /// what OLM only finds at runtime. Exit 0 when no error-level finding (1 with --strict and
    /// warnings), 1 on errors, 2 when a directory cannot be read.
    Validate {
        /// Bundle directories (holding manifests/ and metadata/, or a bundle/ subdirectory).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Treat warnings as errors for the exit status.
        #[arg(long)]
        strict: bool,
        /// Kubernetes version the bundle must run on (e.g. 1.29): APIs removed at or before
        /// it are errors, later removals warnings.
        #[arg(long, value_name = "X.Y")]
        k8s_version: Option<String>,
        /// Run only these suites or codes (comma-separated or repeated): bundle, csv, crd,
        /// deprecated-apis, operatorhub, good-practices, olm, all, or codes such as CSV005.
        #[arg(long, value_delimiter = ',', value_name = "SUITE|CODE")]
        select: Vec<String>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

pub fn run(cmd: BundleCmd) -> u8 {
    match cmd {
        BundleCmd::Validate {
            dirs,
            strict,
            k8s_version,
            select,
            output,
        } => {
            let k8s_version = match k8s_version.as_deref().map(parse_k8s_version).transpose() {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            let opts = Options {
                k8s_version,
                select,
            };
            if let Err(e) = opts.check_select() {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
            validate(&dirs, &opts, strict, output)
        }
    }
}

/// Reads `X.Y`, `X.Y.Z` or `vX.Y[.Z]` (as operator-sdk's `k8s-version` option does).
pub fn parse_k8s_version(s: &str) -> Result<semver::Version, String> {
    let t = s.trim().trim_start_matches('v');
    let parts: Vec<&str> = t.split('.').collect();
    let nums: Option<Vec<u64>> = parts.iter().map(|p| p.parse().ok()).collect();
    match nums.as_deref() {
        Some([a, b]) => Ok(semver::Version::new(*a, *b, 0)),
        Some([a, b, c]) => Ok(semver::Version::new(*a, *b, *c)),
        _ => Err(format!(
            "--k8s-version {s}: expected a Kubernetes version such as 1.29 or 1.29.0"
        )),
    }
}

fn validate(dirs: &[PathBuf], opts: &Options, strict: bool, output: Output) -> u8 {
    let mut findings = Vec::new();
    for d in dirs {
        match crate::bundle::load::load_bundle(d) {
            Ok(b) => findings.extend(crate::checks::bundle::validate_with(&b, opts)),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        }
    }
    sort_findings(&mut findings);
    let what = format!(
        "{} bundle{}",
        dirs.len(),
        if dirs.len() == 1 { "" } else { "s" }
    );
    super::catalog::report_findings(&findings, &what, output, strict)
}
