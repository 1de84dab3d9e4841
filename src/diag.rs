//! Diagnostics: findings with a stable code, a severity, a location and the catalog object they
//! concern, rendered for people (rustc/cargo style) or as JSON for machines.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::text::esc;

/// Declares diagnostic codes: one `static` per code and a `CODES` table of the group. Each
/// module that reports findings declares its own; the list of all of them is assembled at the
/// top of the library (the `codes` module), never here.
macro_rules! codes {
    ($($name:ident = $code:literal, $sev:expr, $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub static $name: $crate::diag::Code = $crate::diag::Code {
                code: $code,
                severity: $sev,
                summary: $summary,
            };
        )*
        /// Every code of this group.
        pub static CODES: &[&$crate::diag::Code] = &[$(&$name),*];
    };
}

/// A diagnostic code.
#[derive(Debug, PartialEq, Eq)]
pub struct Code {
    /// Stable identifier such as `FBC001`.
    pub code: &'static str,
    /// Default severity.
    pub severity: Severity,
    /// One line: what the check looks for.
    pub summary: &'static str,
}

/// A set of codes, sorted by code: what `olmctl codes` lists and `olmctl explain` looks up.
#[derive(Debug, Default)]
pub struct Registry {
    codes: Vec<&'static Code>,
}

impl Registry {
    /// The registry of `codes` (the groups of every module that reports findings).
    pub fn new(codes: impl IntoIterator<Item = &'static Code>) -> Self {
        let mut codes: Vec<&'static Code> = codes.into_iter().collect();
        codes.sort_by_key(|c| c.code);
        Registry { codes }
    }

    /// Every code, sorted by code.
    pub fn all(&self) -> &[&'static Code] {
        &self.codes
    }

    /// Looks a code up (case-insensitively).
    pub fn find(&self, code: &str) -> Option<&'static Code> {
        self.codes
            .iter()
            .find(|c| c.code.eq_ignore_ascii_case(code))
            .copied()
    }
}

/// How bad a finding is. Ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never fails a run.
    Info,
    /// Accepted by OLM but likely a mistake.
    Warning,
    /// OLM (opm, the resolver or the catalog server) rejects this.
    Error,
}

impl Severity {
    /// The lowercase word used in text and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A place in a source file. Lines and columns are 1-based; 0 means unknown.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The file, as given on the command line joined with its path below the catalog root.
    pub file: Arc<Path>,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
}

impl Location {
    /// A location at `line:column` of `file`.
    pub fn new(file: Arc<Path>, line: u32, column: u32) -> Self {
        Location { file, line, column }
    }

    /// Renders `file:line:column` (omitting unknown parts).
    pub fn display(&self) -> String {
        let mut s = self.file.display().to_string();
        if self.line > 0 {
            let _ = write!(s, ":{}", self.line);
            if self.column > 0 {
                let _ = write!(s, ":{}", self.column);
            }
        }
        s
    }

    /// The file's path as CI systems name a file of the repository: [`relative_path`].
    pub fn relative_path(&self, base: Option<&Path>) -> String {
        relative_path(&self.file, base)
    }
}

/// The catalog object a finding is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Subject {
    /// Package name, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Channel name, if the finding concerns a channel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Bundle name, if the finding concerns a bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
}

impl Subject {
    /// A subject naming only a package.
    pub fn package(p: &str) -> Self {
        Subject {
            package: Some(p.to_string()),
            ..Subject::default()
        }
    }
    /// A subject naming a channel of a package.
    pub fn channel(p: &str, c: &str) -> Self {
        Subject {
            package: Some(p.to_string()),
            channel: Some(c.to_string()),
            bundle: None,
        }
    }
    /// A subject naming a bundle of a package.
    pub fn bundle(p: &str, b: &str) -> Self {
        Subject {
            package: Some(p.to_string()),
            channel: None,
            bundle: Some(b.to_string()),
        }
    }
    /// A subject naming a bundle as a channel entry.
    pub fn entry(p: &str, c: &str, b: &str) -> Self {
        Subject {
            package: Some(p.to_string()),
            channel: Some(c.to_string()),
            bundle: Some(b.to_string()),
        }
    }

    /// `package `p`, channel `c`, bundle `b`` (the parts known), or empty.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = &self.package {
            parts.push(format!("package `{p}`"));
        }
        if let Some(c) = &self.channel {
            parts.push(format!("channel `{c}`"));
        }
        if let Some(b) = &self.bundle {
            parts.push(format!("bundle `{b}`"));
        }
        parts.join(", ")
    }
}

/// The file's path relative to `base` when it lies below it (else as given), with `/`
/// separators and no leading `./`: how CI systems name a file of the repository. A relative
/// file is taken as relative to the current directory.
pub fn relative_path(file: &Path, base: Option<&Path>) -> String {
    let absolute = match (base, file.is_relative()) {
        (Some(b), true) if b.is_absolute() => {
            std::env::current_dir().ok().map(|d| lexical(&d.join(file)))
        }
        (Some(_), false) => Some(lexical(file)),
        _ => None,
    };
    let abs = absolute.as_deref().unwrap_or(file);
    let rel = base.and_then(|b| abs.strip_prefix(b).ok()).unwrap_or(file);
    let rel = rel.strip_prefix("./").unwrap_or(rel);
    let parts: Vec<String> = rel
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| match c {
            std::path::Component::RootDir => String::new(),
            c => c.as_os_str().to_string_lossy().into_owned(),
        })
        .collect();
    match parts.as_slice() {
        [first, rest @ ..] if first.is_empty() => format!("/{}", rest.join("/")),
        _ => parts.join("/"),
    }
}

/// `p` with `.` dropped and each `..` taking away the name before it, without asking the file
/// system (a path as a CI system compares it with its workspace).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable code such as `FBC045`.
    pub code: &'static str,
    /// Severity of this occurrence.
    pub severity: Severity,
    /// One-line description of what is wrong.
    pub message: String,
    /// Where it is, when known.
    pub location: Option<Location>,
    /// What it concerns.
    pub subject: Subject,
    /// JSON path of the field inside the object (e.g. `spec.installModes[2].type`), when the
    /// finding is about one field of a manifest.
    pub path: Option<String>,
    /// What to do about it, when there is something useful to say.
    pub help: Option<String>,
    /// What follows from it, one line each: the consequences a finding that reports a cause
    /// groups under it instead of reporting each on its own.
    pub notes: Vec<String>,
}

impl Finding {
    /// The message with what is known beside it, one item a line: the subject (package,
    /// channel, bundle), the field and the help; what CI annotations show.
    pub fn details(&self) -> String {
        let mut s = self.message.clone();
        let subject = self.subject.describe();
        if !subject.is_empty() {
            let _ = write!(s, "\n{subject}");
        }
        if let Some(p) = &self.path {
            let _ = write!(s, "\nfield: {p}");
        }
        for n in &self.notes {
            let _ = write!(s, "\nnote: {n}");
        }
        if let Some(h) = &self.help {
            let _ = write!(s, "\nhelp: {h}");
        }
        s
    }

    /// A new finding with the code's default severity.
    pub fn new(code: &'static Code, message: impl Into<String>) -> Self {
        Finding {
            code: code.code,
            severity: code.severity,
            message: message.into(),
            location: None,
            subject: Subject::default(),
            path: None,
            help: None,
            notes: Vec::new(),
        }
    }
    /// Sets the JSON path of the field concerned.
    pub fn field(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
    /// Sets the location.
    pub fn at(mut self, loc: Option<Location>) -> Self {
        self.location = loc;
        self
    }
    /// Sets the subject.
    pub fn about(mut self, s: Subject) -> Self {
        self.subject = s;
        self
    }
    /// Sets the help text.
    pub fn help(mut self, h: impl Into<String>) -> Self {
        self.help = Some(h.into());
        self
    }

    fn sort_key(&self) -> (Option<&Location>, &'static str, &Subject, &String) {
        (
            self.location.as_ref(),
            self.code,
            &self.subject,
            &self.message,
        )
    }
}

/// Sorts findings by file, line, column, code, subject and message, and removes exact duplicates,
/// so that output is stable whatever order checks ran in.
pub fn sort_findings(findings: &mut Vec<Finding>) {
    findings.sort_by(compare_findings);
    findings.dedup();
}

/// The order [`sort_findings`] sorts by.
pub fn compare_findings(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    a.sort_key().cmp(&b.sort_key())
}

/// Counts of findings per severity.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Error-level findings.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Informational findings.
    pub infos: usize,
}

impl Summary {
    /// Tallies `findings`.
    pub fn of(findings: &[Finding]) -> Self {
        let mut s = Summary::default();
        for f in findings {
            match f.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
        }
        s
    }
}

/// Renders findings like rustc diagnostics, control characters of messages, file names and
/// names escaped ([`crate::text::escape`]):
///
/// ```text
/// error[FBC045]: multiple channel heads found: a.v2, b.v3
///   --> catalog/foo/catalog.yaml:12:1
///    = package `foo`, channel `stable`
///    = help: ...
/// ```
pub fn render_text(findings: &[Finding], color: bool) -> String {
    render_text_known(findings, &[], color)
}

/// [`render_text`] with the findings a baseline accepts tagged after their code (`tags[i]` for
/// `findings[i]`; missing entries are new): `error[UPG001] (pre-existing): ...`.
pub fn render_text_known(findings: &[Finding], tags: &[Option<&str>], color: bool) -> String {
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        let tagged = match tags.get(i).copied().flatten() {
            Some(t) => format!(" ({t})"),
            None => String::new(),
        };
        let (c0, c1) = if color {
            match f.severity {
                Severity::Error => ("\x1b[1;31m", "\x1b[0m"),
                Severity::Warning => ("\x1b[1;33m", "\x1b[0m"),
                Severity::Info => ("\x1b[1;36m", "\x1b[0m"),
            }
        } else {
            ("", "")
        };
        let _ = writeln!(
            out,
            "{c0}{}[{}]{c1}{tagged}: {}",
            f.severity.as_str(),
            f.code,
            esc(&f.message)
        );
        if let Some(loc) = &f.location {
            let _ = writeln!(out, "  --> {}", esc(loc.display()));
        }
        let subject = f.subject.describe();
        if !subject.is_empty() {
            let _ = writeln!(out, "   = {}", esc(subject));
        }
        if let Some(p) = &f.path {
            let _ = writeln!(out, "   = field: {}", esc(p));
        }
        for n in &f.notes {
            let _ = writeln!(out, "   = note: {}", esc(n));
        }
        if let Some(h) = &f.help {
            let _ = writeln!(out, "   = help: {}", esc(h));
        }
        out.push('\n');
    }
    out
}

/// Per code, how many findings: `SCH012 795, SKW002 12` (by count, then code), for the end of
/// long reports.
pub fn render_code_summary<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> String {
    let mut v: Vec<(&str, usize)> = code_counts(findings).into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(c, n)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one-line summary printed after text findings.
pub fn render_summary(s: &Summary) -> String {
    format!(
        "{} error{}, {} warning{}, {} info",
        s.errors,
        if s.errors == 1 { "" } else { "s" },
        s.warnings,
        if s.warnings == 1 { "" } else { "s" },
        s.infos
    )
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    code: &'a str,
    severity: Severity,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u32>,
    #[serde(flatten)]
    subject: &'a Subject,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
    #[serde(rename = "baselineState", skip_serializing_if = "Option::is_none")]
    baseline_state: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    passed: bool,
    summary: JsonSummary,
    findings: Vec<JsonFinding<'a>>,
}

#[derive(Serialize)]
struct JsonSummary {
    #[serde(flatten)]
    counts: Summary,
    /// Per code, how many (new) findings.
    codes: std::collections::BTreeMap<&'static str, usize>,
    /// How many findings the baseline accepts (left out of the counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    unchanged: Option<usize>,
}

/// Renders findings as one JSON document: `{passed, summary, findings: [...]}`.
pub fn render_json(findings: &[Finding]) -> String {
    render_json_known(findings, None)
}

/// How many findings of each code, by code.
pub fn code_counts<'a>(
    findings: impl IntoIterator<Item = &'a Finding>,
) -> std::collections::BTreeMap<&'static str, usize> {
    let mut m = std::collections::BTreeMap::new();
    for f in findings {
        *m.entry(f.code).or_insert(0) += 1;
    }
    m
}

/// The findings a baseline does not accept (`known[i]` false or missing for `findings[i]`).
pub fn new_ones(findings: &[Finding], known: Option<&[bool]>) -> Vec<Finding> {
    let is_known = |i: usize| known.and_then(|k| k.get(i).copied()).unwrap_or(false);
    findings
        .iter()
        .enumerate()
        .filter(|(i, _)| !is_known(*i))
        .map(|(_, f)| f.clone())
        .collect()
}

/// [`render_json`] against a baseline: `known[i]` says whether the baseline accepts
/// `findings[i]`. Each finding then carries SARIF's `baselineState` (`new` or `unchanged`), the
/// summary counts the new ones and says how many are `unchanged`, and `passed` looks at the new
/// ones only.
pub fn render_json_known(findings: &[Finding], known: Option<&[bool]>) -> String {
    let is_known = |i: usize| known.and_then(|k| k.get(i).copied()).unwrap_or(false);
    let fresh = new_ones(findings, known);
    let counts = Summary::of(&fresh);
    let report = JsonReport {
        passed: counts.errors == 0,
        summary: JsonSummary {
            counts,
            codes: code_counts(&fresh),
            unchanged: known.map(|_| findings.len() - fresh.len()),
        },
        findings: findings
            .iter()
            .enumerate()
            .map(|(i, f)| JsonFinding {
                baseline_state: known.map(|_| if is_known(i) { "unchanged" } else { "new" }),
                code: f.code,
                severity: f.severity,
                message: &f.message,
                file: f.location.as_ref().map(|l| l.file.display().to_string()),
                line: f.location.as_ref().map(|l| l.line).filter(|l| *l > 0),
                column: f.location.as_ref().map(|l| l.column).filter(|c| *c > 0),
                subject: &f.subject,
                path: f.path.as_deref(),
                help: f.help.as_deref(),
                notes: &f.notes,
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&report).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

/// Joins a catalog root and a relative path for display.
pub fn display_path(root: &Path, rel: &Path) -> PathBuf {
    root.join(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_named_from_the_workspace() {
        let base = Some(Path::new("/w/repo"));
        assert_eq!(
            relative_path(Path::new("/w/repo/./a/../b/c.yaml"), base),
            "b/c.yaml"
        );
        assert_eq!(relative_path(Path::new("/etc/x.yaml"), base), "/etc/x.yaml");
        assert_eq!(relative_path(Path::new("./a/b.yaml"), None), "a/b.yaml");
        let cwd = std::env::current_dir().unwrap();
        let up = cwd.parent().unwrap().to_path_buf();
        let name = cwd.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            relative_path(Path::new(&format!("../{name}/x.yaml")), Some(&up)),
            format!("{name}/x.yaml")
        );
    }
}
