//! `olmctl bundle ...`.

use std::path::PathBuf;

use clap::Subcommand;

use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, out, use_color};
use crate::diag::{Severity, render_json, render_summary, render_text, sort_findings};

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
    let summary = crate::diag::Summary::of(&findings);
    match output {
        Output::Json => out(&render_json(&findings)),
        Output::Text => {
            let mut s = render_text(&findings, use_color());
            s.push_str(&format!(
                "{}: {} ({} bundle{})\n",
                if summary.errors == 0 { "ok" } else { "failed" },
                render_summary(&summary),
                dirs.len(),
                if dirs.len() == 1 { "" } else { "s" }
            ));
            out(&s);
        }
    }
    let failing = findings
        .iter()
        .any(|f| f.severity == Severity::Error || (strict && f.severity == Severity::Warning));
    if failing { EXIT_FINDINGS } else { EXIT_OK }
}
