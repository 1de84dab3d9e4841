//! `olmctl bundle ...`.

use std::path::PathBuf;

use clap::Subcommand;

use super::{EXIT_USAGE, Output};
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
            output,
        } => validate(&dirs, strict, output),
    }
}

fn validate(dirs: &[PathBuf], strict: bool, output: Output) -> u8 {
    let mut findings = Vec::new();
    for d in dirs {
        match crate::bundle::load::load_bundle(d) {
            Ok(b) => findings.extend(crate::checks::bundle::validate(&b)),
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
