//! `olmctl bundle validate`: the registry+v1 format, the bundle's cross-object rules and the
//! ClusterServiceVersion, each rule a small unit with a stable code. Findings point at the file,
//! line and column and carry the JSON path of the field.
//!
//! Rules follow operator-framework/api's validators and operator-registry's bundle checks,
//! without their known holes (duplicate installModes are detected, findings carry JSON paths
//! rather than Go field names), plus what OLM only finds at runtime.

pub mod codes;
mod csv;
mod format;

use std::path::Path;
use std::sync::Arc;

pub use codes::CODES;

use crate::bundle::load::{BundleDir, str_at};
use crate::checks::Code;
use crate::diag::{Finding, Location, Subject, sort_findings};
use crate::fbc::node::Pos;

/// Collects findings about one bundle.
pub(crate) struct Ctx<'a> {
    pub bundle: &'a BundleDir,
    pub subject: Subject,
    pub findings: Vec<Finding>,
}

impl Ctx<'_> {
    /// Records a finding of `code` at `file:pos`, about the field `path` (if any).
    pub fn push(
        &mut self,
        code: &'static Code,
        message: impl Into<String>,
        file: &Path,
        pos: Pos,
        path: Option<&str>,
    ) -> &mut Finding {
        let mut f = Finding::new(code, message)
            .at(Some(Location::new(Arc::from(file), pos.line, pos.col)))
            .about(self.subject.clone());
        if let Some(p) = path {
            f = f.field(p);
        }
        self.findings.push(f);
        let n = self.findings.len();
        &mut self.findings[n - 1]
    }
}

/// Validates one bundle directory (already read).
pub fn validate(b: &BundleDir) -> Vec<Finding> {
    let package = b
        .annotation(crate::bundle::load::keys::PACKAGE)
        .unwrap_or("")
        .to_string();
    let name = b
        .csv()
        .and_then(|(_, c)| str_at(c, &["metadata", "name"]))
        .unwrap_or("")
        .to_string();
    let subject = Subject {
        package: (!package.is_empty()).then_some(package),
        channel: None,
        bundle: (!name.is_empty()).then_some(name),
    };
    let mut cx = Ctx {
        bundle: b,
        subject,
        findings: Vec::new(),
    };
    format::check(&mut cx);
    if let Some((file, csv)) = b.csv() {
        csv::check(&mut cx, file, csv);
    }
    let mut f = cx.findings;
    sort_findings(&mut f);
    f
}

/// DNS-1123 subdomain that is also a valid label value: at most 63 characters of lowercase
/// letters, digits, `-` and `.`, starting and ending with a letter or digit. The messages are
/// the Kubernetes validation messages.
pub(crate) fn name_problems(n: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if n.len() > 63 {
        out.push("must be no more than 63 characters");
    }
    let ok_chars = n
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let ends = n
        .chars()
        .next()
        .zip(n.chars().last())
        .is_some_and(|(a, b)| a.is_ascii_alphanumeric() && b.is_ascii_alphanumeric());
    if !ok_chars || !ends || n.split('.').any(str::is_empty) {
        out.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character");
    }
    out
}
