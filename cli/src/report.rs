//! Printing what commands found and did: findings (text with a summary, or JSON) and their exit
//! status, delivered images, and the news of image operations on stderr (a progress bar for
//! large uploads when stderr is a terminal).

use std::collections::HashMap;
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
    let summary_line = || summary_line(&summary, what);
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

/// Findings of many inputs (bundles, packages) printed as each input is checked, in input
/// order: text and GitHub output print an input's findings and a summary line of its own at
/// once (with more than one input) and the total at the end; JSON, SARIF and Code Climate are
/// one document, printed at the end. A progress bar counts the inputs on stderr when
/// [`crate::term::show_progress`].
pub struct Stream {
    report: Report,
    strict: bool,
    inputs: usize,
    bar: Option<ProgressBar>,
    summary: olmctl::diag::Summary,
    failing: bool,
    /// Every finding, for the formats printed as one document.
    kept: Vec<Finding>,
    /// Inputs that could not be read: the exit status is 2.
    unread: usize,
}

impl Stream {
    /// A stream of `inputs` inputs of `noun` (`bundle`: the bar reads `3/1112 bundles`).
    pub fn new(report: Report, strict: bool, inputs: usize, noun: &str) -> Self {
        let bar = (crate::term::show_progress() && inputs > 1).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(inputs as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{bar:30}} {{pos}}/{{len}} {noun}s  {{elapsed}}  {{wide_msg}}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.tick();
            bar
        });
        Stream {
            report,
            strict,
            inputs,
            bar,
            summary: olmctl::diag::Summary::default(),
            failing: false,
            kept: Vec::new(),
            unread: 0,
        }
    }

    /// Says on the progress bar which input is being checked.
    pub fn checking(&self, name: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(esc(name).to_string());
        }
    }

    /// Prints `s` to stdout without tearing the progress bar.
    fn print(&self, s: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| out(s)),
            None => out(s),
        }
    }

    /// One input's findings (`name` names it in its summary line), printed now in the
    /// streamed formats.
    pub fn done(&mut self, name: &str, findings: Vec<Finding>) {
        let line = (self.inputs > 1).then_some(name);
        self.record(findings, line);
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Counts `findings`, prints them in the streamed formats (then a summary line naming
    /// `line`, if any) or keeps them for the document.
    fn record(&mut self, findings: Vec<Finding>, line: Option<&str>) {
        let s = olmctl::diag::Summary::of(&findings);
        self.summary.errors += s.errors;
        self.summary.warnings += s.warnings;
        self.summary.infos += s.infos;
        self.failing |= exit_status(&findings, self.strict) != EXIT_OK;
        let mut text = match self.report {
            Report::Text => render_text(&findings, use_color()),
            Report::Github => {
                olmctl::github::render(&findings, base_dir("GITHUB_WORKSPACE").as_deref())
            }
            _ => {
                self.kept.extend(findings);
                return;
            }
        };
        if let Some(name) = line {
            text.push_str(&summary_line(&s, name));
        }
        if !text.is_empty() {
            self.print(&text);
        }
    }

    /// An input that could not be read: `error: ...` on stderr, the others go on.
    pub fn unread(&mut self, message: impl std::fmt::Display) {
        self.unread += 1;
        match &self.bar {
            Some(bar) => bar.suspend(|| crate::term::error(message)),
            None => crate::term::error(message),
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Findings that belong to no one input (catalog files that do not load, say).
    pub fn add(&mut self, findings: Vec<Finding>) {
        self.record(findings, None);
    }

    /// Prints the total (`what` names what was checked) or the whole document, and returns
    /// the exit status: 2 when an input could not be read, else 1 on errors (with `strict`,
    /// warnings), else 0.
    pub fn finish(self, what: &str) -> u8 {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        match self.report {
            Report::Text | Report::Github => out(&summary_line(&self.summary, what)),
            Report::Json => out(&render_json(&self.kept)),
            Report::Sarif => {
                let cwd = std::env::current_dir().ok();
                out(&olmctl::sarif::render(&self.kept, cwd.as_deref()));
            }
            Report::Codeclimate => {
                let base = base_dir("CI_PROJECT_DIR");
                out(&olmctl::codeclimate::render(&self.kept, base.as_deref()));
            }
        }
        if self.unread > 0 {
            crate::term::EXIT_USAGE
        } else if self.failing {
            EXIT_FINDINGS
        } else {
            EXIT_OK
        }
    }
}

/// `ok: 0 errors, 1 warning, 0 info (what)` (`failed:` when there are errors).
fn summary_line(summary: &olmctl::diag::Summary, what: &str) -> String {
    format!(
        "{}: {} ({})\n",
        if summary.errors == 0 { "ok" } else { "failed" },
        render_summary(summary),
        esc(what),
    )
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
        terminal: crate::term::show_progress(),
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
