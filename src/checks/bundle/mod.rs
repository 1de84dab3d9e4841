//! `olmctl bundle validate`: the registry+v1 format, the bundle's cross-object rules and the
//! ClusterServiceVersion, each rule a small unit with a stable code. Findings point at the file,
//! line and column and carry the JSON path of the field.
//!
//! Rules follow operator-framework/api's validators and operator-registry's bundle checks,
//! without their known holes (duplicate installModes are detected, findings carry JSON paths
//! rather than Go field names), plus what OLM only finds at runtime.

pub mod apis;
pub mod codes;
pub mod crd;
mod csv;
mod format;
pub use format::SUPPORTED_KINDS;
pub mod hub;
pub mod practices;
pub mod runtime;
pub mod size;

use std::path::Path;
use std::sync::Arc;

use crate::bundle::load::{BundleDir, str_at};
use crate::checks::Code;
use crate::diag::{Finding, Location, Subject, sort_findings};
use crate::fbc::node::Pos;

/// The validation suites: `--select` takes these names (or single codes). Each suite is the
/// set of codes with its prefix.
pub const SUITES: [(&str, &str, &str); 8] = [
    (
        "bundle",
        "BND",
        "registry+v1 format and cross-object bundle rules",
    ),
    (
        "csv",
        "CSV",
        "ClusterServiceVersion rules (operator-framework/api CSV validator and more)",
    ),
    (
        "crd",
        "CRD",
        "CustomResourceDefinition rules as the API server applies them, with structural schemas",
    ),
    (
        "deprecated-apis",
        "API",
        "Kubernetes APIs removed in 1.16 to 1.32",
    ),
    (
        "operatorhub",
        "HUB",
        "OperatorHub metadata, capabilities and categories",
    ),
    ("good-practices", "GP", "operator-framework good practices"),
    (
        "olm",
        "OLM",
        "what OLM v0 only finds at install time and OLM v1's registry+v1 rules",
    ),
    ("all", "", "every suite"),
];

/// Every bundle code, sorted.
pub fn codes() -> Vec<&'static Code> {
    let mut v: Vec<&'static Code> = codes::CODES.to_vec();
    for group in [
        crd::CODES,
        apis::CODES,
        hub::CODES,
        practices::CODES,
        runtime::CODES,
        size::CODES,
    ] {
        v.extend(group.iter().copied());
    }
    v.sort_by_key(|c| c.code);
    v
}

/// What `bundle validate` is asked to do beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The Kubernetes version the bundle must run on (`--k8s-version`): APIs removed at or
    /// before it are errors.
    pub k8s_version: Option<semver::Version>,
    /// Suite names or codes (`--select`); empty means every suite.
    pub select: Vec<String>,
}

impl Options {
    /// Checks the `select` entries: each must be a suite name or a bundle code.
    pub fn check_select(&self) -> Result<(), String> {
        let known = codes();
        for s in &self.select {
            let ok = SUITES.iter().any(|(n, _, _)| n.eq_ignore_ascii_case(s))
                || known.iter().any(|c| c.code.eq_ignore_ascii_case(s));
            if !ok {
                let names: Vec<&str> = SUITES.iter().map(|(n, _, _)| *n).collect();
                return Err(format!(
                    "--select {s}: not a suite ({}) or a bundle code (see `olmctl codes`)",
                    names.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Whether any code with `prefix` (a suite) is wanted.
    pub fn runs(&self, prefix: &str) -> bool {
        self.select.is_empty()
            || self.select.iter().any(|s| {
                s.eq_ignore_ascii_case("all")
                    || (s.len() > prefix.len()
                        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
                        && s[prefix.len()..].bytes().all(|b| b.is_ascii_digit()))
                    || SUITES
                        .iter()
                        .any(|(n, p, _)| n.eq_ignore_ascii_case(s) && *p == prefix)
            })
    }

    /// Whether findings with `code` are wanted.
    pub fn selects(&self, code: &str) -> bool {
        if self.select.is_empty() {
            return true;
        }
        self.select.iter().any(|s| {
            s.eq_ignore_ascii_case(code)
                || s.eq_ignore_ascii_case("all")
                || SUITES.iter().any(|(n, prefix, _)| {
                    n.eq_ignore_ascii_case(s)
                        && code.starts_with(prefix)
                        && code[prefix.len()..].bytes().all(|b| b.is_ascii_digit())
                })
        })
    }
}

/// One suite's entry point.
type SuiteCheck = fn(&mut Ctx<'_>);

/// Collects findings about one bundle.
pub(crate) struct Ctx<'a> {
    pub bundle: &'a BundleDir,
    pub opts: &'a Options,
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

/// Validates one bundle directory (already read) with every suite.
pub fn validate(b: &BundleDir) -> Vec<Finding> {
    validate_with(b, &Options::default())
}

/// Validates one bundle directory (already read).
pub fn validate_with(b: &BundleDir, opts: &Options) -> Vec<Finding> {
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
        opts,
        subject,
        findings: Vec::new(),
    };
    // Suites nobody asked for are not run.
    if opts.runs("BND") {
        format::check(&mut cx);
        size::check(&mut cx);
    }
    if let Some((file, csv)) = b.csv()
        && opts.runs("CSV")
    {
        csv::check(&mut cx, file, csv);
    }
    let suites: [(&str, SuiteCheck); 5] = [
        ("CRD", crd::check),
        ("API", apis::check),
        ("HUB", hub::check),
        ("GP", practices::check),
        ("OLM", runtime::check),
    ];
    for (prefix, check) in suites {
        if opts.runs(prefix) {
            check(&mut cx);
        }
    }
    let mut f = cx.findings;
    f.retain(|x| opts.selects(x.code));
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

/// Kubernetes `IsDNS1123Subdomain`: at most 253 characters, dot-separated labels of lowercase
/// letters, digits and `-`, each starting and ending with a letter or digit.
pub(crate) fn subdomain_problems(n: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if n.len() > 253 {
        out.push("must be no more than 253 characters");
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if !n.split('.').all(label_ok) {
        out.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')");
    }
    out
}
