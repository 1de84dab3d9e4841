//! Printing what commands found and did: findings (text with a summary, or JSON) and their exit
//! status, delivered images, and the news of image operations on stderr (a progress bar for
//! large uploads when stderr is a terminal).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use olmctl::diag::{Finding, Severity, render_json, render_summary, render_text};
use olmctl::fbc::load::Loaded;
use olmctl::oci::deliver::Delivered;
use olmctl::oci::events::{Events, Sink};
use olmctl::oci::registry::PushReport;
use olmctl::text::esc;
use serde_json::json;

use crate::term::{EXIT_FINDINGS, EXIT_OK, Output, Report, out, use_color};

/// Prints a catalog's findings and returns the exit status: 1 when any is an error.
pub fn catalog_findings(findings: &[Finding], loaded: &Loaded, report: Report) -> u8 {
    findings_of(findings, &loaded.summary(), report, false)
}

/// The directory a CI system names files from: `$var` when set (absolute), else the current
/// directory.
fn base_dir(var: &str) -> Option<std::path::PathBuf> {
    std::env::var_os(var)
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::current_dir().ok())
}

/// Prints findings in `report`'s format (text ends with a summary line ending in `(what)`)
/// and returns the exit status: 1 when an error-level finding exists (or, with `strict`, a
/// warning), else 0.
pub fn findings_of(findings: &[Finding], what: &str, report: Report, strict: bool) -> u8 {
    let summary = olmctl::diag::Summary::of(findings);
    let summary_line = || {
        format!(
            "{}: {} ({})\n",
            if summary.errors == 0 { "ok" } else { "failed" },
            render_summary(&summary),
            esc(what),
        )
    };
    match report {
        Report::Json => out(&render_json(findings)),
        Report::Text => {
            let mut s = render_text(findings, use_color());
            s.push_str(&summary_line());
            out(&s);
        }
        Report::Sarif => {
            let cwd = std::env::current_dir().ok();
            out(&olmctl::sarif::render(findings, cwd.as_deref()));
        }
        Report::Github => {
            let base = base_dir("GITHUB_WORKSPACE");
            let mut s = olmctl::github::render(findings, base.as_deref());
            s.push_str(&summary_line());
            out(&s);
        }
        Report::Codeclimate => {
            let base = base_dir("CI_PROJECT_DIR");
            out(&olmctl::codeclimate::render(findings, base.as_deref()));
        }
    }
    exit_status(findings, strict)
}

/// 1 when an error-level finding exists (or, with `strict`, a warning), else 0.
pub fn exit_status(findings: &[Finding], strict: bool) -> u8 {
    let failing = findings
        .iter()
        .any(|f| f.severity == Severity::Error || (strict && f.severity == Severity::Warning));
    if failing { EXIT_FINDINGS } else { EXIT_OK }
}

fn push_json(report: &PushReport) -> serde_json::Value {
    json!({
        "uploaded": report.uploaded,
        "existing": report.existing,
        "mounted": report.mounted,
        "copied": report.copied,
        "bytesUploaded": report.bytes,
        "manifests": report.manifests,
        "retries": report.retries,
    })
}

/// Prints a delivered image: its pinned reference (text), or a JSON document with `extra`'s
/// fields added.
pub fn delivered(d: &Delivered, output: Output, extra: serde_json::Value) {
    match output {
        Output::Text => out(&format!("{}\n", esc(&d.pinned))),
        Output::Json => {
            let mut v = json!({
                "reference": d.reference,
                "digest": d.digest,
                "mediaType": d.media_type,
                "size": d.size,
                "pushed": d.pushed,
                "layout": d.layout.as_ref().map(|p| p.display().to_string()),
                "push": d.push.as_ref().map(push_json),
            });
            if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
                for (k, x) in e {
                    o.insert(k.clone(), x.clone());
                }
            }
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            ));
        }
    }
}

/// Image operations' news on stderr: notes as lines, warnings as `warning: ...`; steps and a
/// progress bar per large upload only when stderr is a terminal.
pub struct Stderr {
    bars: Mutex<HashMap<String, ProgressBar>>,
    terminal: bool,
}

/// The events sink of the command line.
pub fn stderr_events() -> Sink {
    Arc::new(Stderr {
        bars: Mutex::new(HashMap::new()),
        terminal: std::io::stderr().is_terminal(),
    })
}

// The library's lines carry paths, names and registry text: escaped here, the one place
// they reach the terminal.
impl Events for Stderr {
    fn note(&self, line: &str) {
        eprintln!("{}", olmctl::text::escape(line));
    }

    fn warn(&self, line: &str) {
        eprintln!("warning: {}", olmctl::text::escape(line));
    }

    fn step(&self, line: &str) {
        if self.terminal {
            eprintln!("{}", olmctl::text::escape(line));
        }
    }

    fn upload_started(&self, blob: &str, total: u64) {
        if !self.terminal {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "  {prefix}  {binary_bytes:>9} / {binary_total_bytes}  {binary_bytes_per_sec:>11}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_prefix(blob.to_string());
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(blob.to_string(), bar);
        }
    }

    fn upload_progress(&self, blob: &str, done: u64) {
        if let Ok(bars) = self.bars.lock()
            && let Some(bar) = bars.get(blob)
        {
            bar.set_position(done);
        }
    }

    fn upload_finished(&self, blob: &str, ok: bool) {
        if let Ok(mut bars) = self.bars.lock()
            && let Some(bar) = bars.remove(blob)
        {
            if ok {
                bar.finish();
            } else {
                bar.abandon();
            }
        }
    }
}
