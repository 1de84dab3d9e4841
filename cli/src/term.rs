//! The terminal side of every command: exit statuses, the output format flag, writing to
//! stdout and stderr, and the async runtime one command runs on.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use clap::ValueEnum;

/// Exit status: no error-level findings.
pub const EXIT_OK: u8 = 0;
/// Exit status: error-level findings.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit status: usage or I/O error.
pub const EXIT_USAGE: u8 = 2;

/// Text for people or JSON for machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Human-readable text.
    Text,
    /// One JSON document.
    Json,
}

/// How findings are printed: for people, for machines, or for a CI system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Report {
    /// Human-readable text, with a summary line.
    Text,
    /// One JSON document.
    Json,
    /// SARIF 2.1.0, for code-scanning UIs (GitHub's upload-sarif, GitLab, Azure DevOps).
    Sarif,
    /// GitHub Actions workflow commands (`::error file=F,line=L::message`), which become
    /// annotations without a SARIF upload; then the summary line. Paths relative to
    /// $GITHUB_WORKSPACE (else the current directory).
    Github,
    /// A Code Climate JSON report, GitLab's code quality format (`artifacts: reports:
    /// codequality:`). Paths relative to $CI_PROJECT_DIR (else the current directory).
    Codeclimate,
}

static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets `--quiet`: no progress on stderr.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether to show progress on stderr: it is a terminal and `--quiet` is not given.
pub fn show_progress() -> bool {
    !QUIET.load(Ordering::Relaxed) && std::io::stderr().is_terminal()
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
    eprintln!("error: {}", olmctl::text::esc(message));
}

/// Prints `warning: <message>` to stderr, escaped as [`error`] escapes.
pub fn warning(message: impl std::fmt::Display) {
    eprintln!("warning: {}", olmctl::text::esc(message));
}

/// A tokio runtime for one command.
pub fn runtime() -> Result<tokio::runtime::Runtime, u8> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            error(format_args!("cannot start the async runtime: {e}"));
            EXIT_USAGE
        })
}

/// A usage or I/O error printed, as exit status 2: `let x = match or_usage(r) { Ok(x) => x,
/// Err(c) => return c };`.
pub fn or_usage<T>(r: Result<T, String>) -> Result<T, u8> {
    r.map_err(|e| {
        error(e);
        EXIT_USAGE
    })
}

/// Rows as kubectl-operator's tables print them (Go's `tabwriter.NewWriter(w, 3, 4, 2, ' ', 0)`),
/// each cell escaped for the terminal: [`tabwrite`] with minimum width 3 and padding 2.
pub fn tab_table(lines: &[Vec<String>]) -> String {
    let lines: Vec<Vec<String>> = lines
        .iter()
        .map(|l| {
            l.iter()
                .map(|c| olmctl::text::escape(c).into_owned())
                .collect()
        })
        .collect();
    tabwrite(&lines, 3, 2)
}

/// Lines of cells aligned as Go's `text/tabwriter` aligns them with padding character ' ' and
/// no flags (`tabwriter.NewWriter(w, minwidth, 0, padding, ' ', 0)`, as opm and kubectl print
/// tables): every column but the last as wide as its widest cell plus `padding`, at least
/// `minwidth`, counted in characters; the last cell unpadded.
pub fn tabwrite(lines: &[Vec<String>], minwidth: usize, padding: usize) -> String {
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            let widest = lines
                .iter()
                .filter_map(|l| l.get(i).map(|c| c.chars().count()))
                .max();
            (widest.unwrap_or(0) + padding).max(minwidth)
        })
        .collect();
    let mut s = String::new();
    for l in lines {
        for (i, cell) in l.iter().enumerate() {
            s.push_str(cell);
            if i + 1 < l.len() {
                let pad = widths[i] - cell.chars().count();
                s.extend(std::iter::repeat_n(' ', pad));
            }
        }
        s.push('\n');
    }
    s
}
