//! Baselines: the findings a catalog's maintainers have accepted, so that only new ones fail a
//! run (as ruff's `--add-noqa`/baseline, cargo-deny's and SARIF's `baselineState` work).
//!
//! A finding is known by a fingerprint that survives edits elsewhere in the file: its code,
//! the file's path relative to a base directory, the catalog object it concerns (package,
//! channel, bundle), the field and its message with line and column numbers taken out. Line
//! numbers themselves are never part of it, so moving a blob keeps its findings known. A
//! baseline is a multiset: a fingerprint recorded twice accepts two such findings, a third one
//! is new.
//!
//! The file is JSON, written sorted so that it diffs well under review:
//! `{"version": 1, "findings": [{"fingerprint", "code", "file", "message"}, ...]}`; only
//! `fingerprint` is read back, the rest is for the people who review it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diag::{Finding, relative_path};

/// A baseline file that cannot be read.
#[derive(Debug)]
pub enum BaselineError {
    /// The file cannot be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a baseline.
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
}

impl std::fmt::Display for BaselineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BaselineError::Read { path, source } => write!(f, "{}: {source}", path.display()),
            BaselineError::Parse { path, source } => write!(
                f,
                "{}: not an olmctl baseline ({source}); write one with --write-baseline",
                path.display()
            ),
        }
    }
}

impl std::error::Error for BaselineError {}

/// The message with what changes when lines move taken out: `:12:3` and `line 12` lose their
/// numbers, runs of white space become one space.
fn normalise(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let chars: Vec<char> = message.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_line = out.ends_with("line ") || out.ends_with("lines ");
        if (c == ':' || after_line)
            && chars
                .get(i + usize::from(c == ':'))
                .is_some_and(char::is_ascii_digit)
        {
            if c == ':' {
                out.push(':');
                i += 1;
            }
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            out.push('N');
            continue;
        }
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out.trim().to_string()
}

/// The finding's fingerprint (hex, 32 digits): see the module's description. `base` is the
/// directory file paths are taken relative to.
pub fn fingerprint(f: &Finding, base: Option<&Path>) -> String {
    let file = f
        .location
        .as_ref()
        .map(|l| relative_path(&l.file, base))
        .unwrap_or_default();
    let s = &f.subject;
    let mut h = Sha256::new();
    for part in [
        f.code,
        &file,
        s.package.as_deref().unwrap_or(""),
        s.channel.as_deref().unwrap_or(""),
        s.bundle.as_deref().unwrap_or(""),
        f.path.as_deref().unwrap_or(""),
        &normalise(&f.message),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[derive(Serialize, Deserialize)]
struct Entry {
    fingerprint: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    code: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    file: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    message: String,
}

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    findings: Vec<Entry>,
}

/// Accepted findings: fingerprint → how many.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Baseline {
    counts: BTreeMap<String, usize>,
}

impl Baseline {
    /// The baseline that accepts `findings` (file paths relative to `base`).
    pub fn of(findings: &[Finding], base: Option<&Path>) -> Self {
        let mut counts = BTreeMap::new();
        for f in findings {
            *counts.entry(fingerprint(f, base)).or_insert(0) += 1;
        }
        Baseline { counts }
    }

    /// Reads a baseline file.
    pub fn read(path: &Path) -> Result<Self, BaselineError> {
        let text = std::fs::read(path).map_err(|source| BaselineError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let file: File = serde_json::from_slice(&text).map_err(|source| BaselineError::Parse {
            path: path.to_path_buf(),
            source,
        })?;
        let mut counts = BTreeMap::new();
        for e in file.findings {
            *counts.entry(e.fingerprint).or_insert(0) += 1;
        }
        Ok(Baseline { counts })
    }

    /// How many findings it accepts.
    pub fn len(&self) -> usize {
        self.counts.values().sum()
    }

    /// Whether it accepts nothing.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// For each of `findings` (in order), whether the baseline accepts it: each recorded
    /// fingerprint accepts as many findings as it was recorded for, the first ones in order.
    pub fn known(&self, findings: &[Finding], base: Option<&Path>) -> Vec<bool> {
        let mut left = self.counts.clone();
        findings
            .iter()
            .map(|f| match left.get_mut(&fingerprint(f, base)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            })
            .collect()
    }
}

/// The baseline file accepting `findings`, sorted by file, code, message and fingerprint.
pub fn render(findings: &[Finding], base: Option<&Path>) -> String {
    let mut entries: Vec<Entry> = findings
        .iter()
        .map(|f| Entry {
            fingerprint: fingerprint(f, base),
            code: f.code.to_string(),
            file: f
                .location
                .as_ref()
                .map(|l| relative_path(&l.file, base))
                .unwrap_or_default(),
            message: f.message.clone(),
        })
        .collect();
    entries.sort_by(|a, b| {
        (&a.file, &a.code, &a.message, &a.fingerprint).cmp(&(
            &b.file,
            &b.code,
            &b.message,
            &b.fingerprint,
        ))
    });
    let file = File {
        version: 1,
        findings: entries,
    };
    let mut s = serde_json::to_string_pretty(&file).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Location, Subject};
    use std::sync::Arc;

    fn finding(line: u32, message: &str) -> Finding {
        Finding::new(&crate::checks::upgrades::STRANDED, message)
            .at(Some(Location::new(
                Arc::from(Path::new("/w/cat/p/catalog.yaml")),
                line,
                3,
            )))
            .about(Subject::entry("p", "stable", "p.v1.0.0"))
    }

    #[test]
    fn fingerprints_survive_line_moves_and_tell_findings_apart() {
        let base = Some(Path::new("/w"));
        let a = finding(10, "p.v1.0.0 stops at p.v1.0.0 (catalog.yaml:10:3)");
        let moved = finding(40, "p.v1.0.0  stops at p.v1.0.0 (catalog.yaml:40:3)");
        assert_eq!(fingerprint(&a, base), fingerprint(&moved, base));
        let other = finding(10, "p.v1.0.1 stops at p.v1.0.1");
        assert_ne!(fingerprint(&a, base), fingerprint(&other, base));
        // The same file named from elsewhere keeps its fingerprint relative to the base.
        assert_eq!(normalise("see line 12,  and :4:5"), "see line N, and :N:N");
    }

    #[test]
    fn a_baseline_accepts_as_many_findings_as_it_recorded() {
        let base = Some(Path::new("/w"));
        let f = vec![finding(1, "m"), finding(2, "m"), finding(3, "n")];
        let text = render(&f[..1], base);
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("b.json");
        std::fs::write(&p, &text).expect("write");
        let b = Baseline::read(&p).expect("read");
        assert_eq!(b.len(), 1);
        assert_eq!(b.known(&f, base), vec![true, false, false]);
        assert_eq!(Baseline::of(&f, base).known(&f, base), vec![true; 3]);
        std::fs::write(&p, "{\"not\": 1}").expect("write");
        let e = Baseline::read(&p).expect_err("not a baseline").to_string();
        assert!(e.contains("not an olmctl baseline"), "{e}");
    }
}
