//! Printing what commands found and did: findings (text with a summary, or JSON) and their exit
//! status, delivered images, and the news of image operations on stderr (a progress bar for
//! large uploads when stderr is a terminal).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use olmctl::diag::{Finding, Severity, render_summary, render_text};
use olmctl::oci::deliver::Delivered;
use olmctl::oci::events::{Events, Sink};
use olmctl::oci::registry::PushReport;
use olmctl::text::esc;
use serde_json::json;

use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, Report, out, use_color};

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
    findings_known(findings, None, what, report, strict)
}

/// [`findings_of`] with the finding flags of the command line ([`FindingArgs`]): `--ignore`
/// leaves codes out, `--write-baseline` writes the findings as the baseline instead (exit 0),
/// `--baseline` shows the findings it accepts tagged `in baseline` and lets only the others
/// fail. `pre[i]` tags the findings the command knows of itself (check-upgrades: those of the
/// base catalog).
pub fn findings_with(
    findings: &[Finding],
    pre: Option<(&[bool], &str)>,
    args: &FindingArgs,
    what: &str,
    report: Report,
    strict: bool,
) -> u8 {
    let ignore = match olmctl::codes::Ignore::parse(&args.ignore) {
        Ok(i) => i,
        Err(e) => {
            crate::term::error(format_args!("--ignore {e}"));
            return EXIT_USAGE;
        }
    };
    let mut kept: Vec<Finding> = Vec::new();
    let mut tags: Vec<Option<&str>> = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        if ignore.keeps(f.code) {
            kept.push(f.clone());
            tags.push(
                pre.filter(|(k, _)| k.get(i).copied().unwrap_or(false))
                    .map(|p| p.1),
            );
        }
    }
    let cwd = std::env::current_dir().ok();
    if let Some(w) = &args.write_baseline {
        let target = match (w, &args.baseline) {
            (Some(w), _) => w.clone(),
            (None, Some(b)) => b.clone(),
            (None, None) => {
                crate::term::error("--write-baseline needs a FILE, or --baseline FILE");
                return EXIT_USAGE;
            }
        };
        let text = olmctl::baseline::render(&kept, cwd.as_deref());
        if let Err(e) = std::fs::write(&target, text) {
            crate::term::error(format_args!(
                "--write-baseline {}: {e}",
                esc(target.display())
            ));
            return EXIT_USAGE;
        }
        out(&format!(
            "wrote {} finding{} to the baseline {} ({})\n",
            kept.len(),
            if kept.len() == 1 { "" } else { "s" },
            esc(target.display()),
            esc(what)
        ));
        return EXIT_OK;
    }
    if let Some(b) = &args.baseline {
        let base = match olmctl::baseline::Baseline::read(b) {
            Ok(x) => x,
            Err(e) => {
                crate::term::error(format_args!("--baseline {e}"));
                return EXIT_USAGE;
            }
        };
        // Findings the command knows already are not matched against the baseline.
        let unknown: Vec<Finding> = kept
            .iter()
            .zip(&tags)
            .filter(|(_, t)| t.is_none())
            .map(|(f, _)| f.clone())
            .collect();
        let mut hits = base.known(&unknown, cwd.as_deref()).into_iter();
        for t in tags.iter_mut().filter(|t| t.is_none()) {
            if hits.next().unwrap_or(false) {
                *t = Some("in baseline");
            }
        }
    }
    if tags.iter().all(Option::is_none) && pre.is_none() && args.baseline.is_none() {
        return findings_of(&kept, what, report, strict);
    }
    findings_known(&kept, Some(&tags), what, report, strict)
}

/// The flags every command that reports findings takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FindingArgs {
    /// Leave out findings whose code is or starts with CODE (comma-separated or repeated; a
    /// leading `!` is accepted, as in `--select '!CODE'`): `--ignore SCH012,SKW`.
    #[arg(long, value_delimiter = ',', value_name = "CODE")]
    pub ignore: Vec<String>,
    /// Findings accepted earlier (a file `--write-baseline` wrote): only findings not in it
    /// fail; those in it are shown tagged `in baseline`. Findings are matched by code, file path
    /// (relative to the current directory), object and message, not by line.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<std::path::PathBuf>,
    /// Write this run's findings (after --ignore) to FILE as the baseline, or to --baseline's
    /// FILE when FILE is left out, and exit 0.
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub write_baseline: Option<Option<std::path::PathBuf>>,
}

/// [`findings_of`] with known findings: they are shown tagged (text), marked `unchanged`
/// (JSON, SARIF), left out of GitHub annotations, counted apart in the summary line, and never
/// fail the run.
fn findings_known(
    findings: &[Finding],
    tags: Option<&[Option<&str>]>,
    what: &str,
    report: Report,
    strict: bool,
) -> u8 {
    let known: Option<Vec<bool>> = tags.map(|t| {
        (0..findings.len())
            .map(|i| t.get(i).copied().flatten().is_some())
            .collect()
    });
    let fresh = olmctl::diag::new_ones(findings, known.as_deref());
    let summary = olmctl::diag::Summary::of(&fresh);
    let summary_line = |text: bool| {
        // `, 3 pre-existing, 12 in baseline`
        let mut by_tag: std::collections::BTreeMap<&str, usize> = Default::default();
        for t in tags.unwrap_or_default().iter().flatten() {
            *by_tag.entry(t).or_insert(0) += 1;
        }
        let known_part: String = by_tag.iter().map(|(t, n)| format!(", {n} {t}")).collect();
        let by_code = if text {
            by_code_line(&fresh)
        } else {
            String::new()
        };
        by_code + &summary_line(&summary, &known_part, false, what)
    };
    match report {
        Report::Json => out(&olmctl::diag::render_json_known(findings, known.as_deref())),
        Report::Text => {
            let t = tags.unwrap_or_default();
            let mut s = olmctl::diag::render_text_known(findings, t, use_color());
            s.push_str(&summary_line(true));
            out(&s);
        }
        Report::Sarif => {
            let cwd = std::env::current_dir().ok();
            out(&olmctl::sarif::render_known(
                findings,
                known.as_deref(),
                cwd.as_deref(),
            ));
        }
        Report::Github => {
            let base = base_dir("GITHUB_WORKSPACE");
            let mut s = olmctl::github::render(&fresh, base.as_deref());
            s.push_str(&summary_line(false));
            out(&s);
        }
        Report::Codeclimate => {
            let base = base_dir("CI_PROJECT_DIR");
            out(&olmctl::codeclimate::render(&fresh, base.as_deref()));
        }
    }
    exit_status(&fresh, strict)
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
/// one document, printed at the end, and so is every format with `--baseline` or
/// `--write-baseline` (a finding is matched against the whole baseline). `--ignore` applies to
/// each input. A progress bar counts the inputs on stderr when [`crate::term::show_progress`].
pub struct Stream {
    report: Report,
    strict: bool,
    inputs: usize,
    bar: Option<ProgressBar>,
    ignore: olmctl::codes::Ignore,
    /// The finding flags, when a baseline makes the output one document.
    whole: Option<FindingArgs>,
    /// Every finding kept: for the per-code summary and the formats printed as one document.
    all: Vec<Finding>,
    /// Inputs that could not be read: the exit status is 2.
    unread: usize,
}

impl Stream {
    /// A stream of `inputs` inputs of `noun` (`bundle`: the bar reads `3/1112 bundles`) with
    /// the command line's finding flags; a bad `--ignore` is the error (printed: exit 2).
    pub fn new(
        report: Report,
        strict: bool,
        inputs: usize,
        noun: &str,
        args: &FindingArgs,
    ) -> Result<Self, u8> {
        let ignore = olmctl::codes::Ignore::parse(&args.ignore).map_err(|e| {
            crate::term::error(format_args!("--ignore {e}"));
            EXIT_USAGE
        })?;
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
        let whole =
            (args.baseline.is_some() || args.write_baseline.is_some()).then(|| args.clone());
        Ok(Stream {
            report,
            strict,
            inputs,
            bar,
            ignore,
            whole,
            all: Vec::new(),
            unread: 0,
        })
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

    /// Counts `findings` (those `--ignore` keeps), prints them in the streamed formats (then a
    /// summary line naming `line`, if any) and keeps them.
    fn record(&mut self, mut findings: Vec<Finding>, line: Option<&str>) {
        findings.retain(|f| self.ignore.keeps(f.code));
        let streamed = self.whole.is_none() && matches!(self.report, Report::Text | Report::Github);
        if streamed {
            let mut text = match self.report {
                Report::Github => {
                    olmctl::github::render(&findings, base_dir("GITHUB_WORKSPACE").as_deref())
                }
                _ => render_text(&findings, use_color()),
            };
            if let Some(name) = line {
                let s = olmctl::diag::Summary::of(&findings);
                text.push_str(&summary_line(&s, "", false, name));
            }
            if !text.is_empty() {
                self.print(&text);
            }
        }
        self.all.extend(findings);
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

    /// Prints the total (`what` names what was checked; text adds the per-code summary) or
    /// the whole document, and returns the exit status: 2 when an input could not be read,
    /// else 1 on errors (with `strict`, warnings) not in the baseline, else 0.
    pub fn finish(self, what: &str) -> u8 {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let code = match (&self.whole, self.report) {
            (None, Report::Text | Report::Github) => {
                let mut s = if self.report == Report::Text {
                    by_code_line(&self.all)
                } else {
                    String::new()
                };
                // `failed: 0 errors, 0 warnings, 0 info, 1 not read (2 bundles)`
                let unread = if self.unread > 0 {
                    format!(", {} not read", self.unread)
                } else {
                    String::new()
                };
                let summary = olmctl::diag::Summary::of(&self.all);
                s.push_str(&summary_line(&summary, &unread, self.unread > 0, what));
                out(&s);
                exit_status(&self.all, self.strict)
            }
            (None, _) => findings_of(&self.all, what, self.report, self.strict),
            (Some(args), _) => findings_with(&self.all, None, args, what, self.report, self.strict),
        };
        if self.unread > 0 { EXIT_USAGE } else { code }
    }
}

/// `ok: 0 errors, 1 warning, 0 info{extra} (what)`: `failed:` when there are errors or
/// `failed` says so; `extra` adds counts (`, 12 in baseline`, `, 1 not read`).
fn summary_line(summary: &olmctl::diag::Summary, extra: &str, failed: bool, what: &str) -> String {
    format!(
        "{}: {}{extra} ({})\n",
        if summary.errors == 0 && !failed {
            "ok"
        } else {
            "failed"
        },
        render_summary(summary),
        esc(what),
    )
}

/// `by code: SCH011 6, SCH004 4` before the summary of text output with more than one
/// finding; empty otherwise.
fn by_code_line(findings: &[Finding]) -> String {
    if findings.len() > 1 {
        format!("by code: {}\n", olmctl::diag::render_code_summary(findings))
    } else {
        String::new()
    }
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
