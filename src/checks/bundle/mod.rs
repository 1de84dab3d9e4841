//! `olmctl bundle validate`: the registry+v1 format, the bundle's cross-object rules and the
//! ClusterServiceVersion, each rule a small unit with a stable code. Findings point at the file,
//! line and column and carry the JSON path of the field.
//!
//! Rules follow operator-framework/api's validators and operator-registry's bundle checks,
//! without their known holes (duplicate installModes are detected, findings carry JSON paths
//! rather than Go field names), plus what OLM only finds at runtime.

pub mod apis;
pub mod codes;
pub mod community;
pub mod crd;
mod csv;
mod format;
pub mod hub;
pub mod multiarch;
pub mod objects;
pub mod practices;
pub mod runtime;
pub mod size;
pub mod typed;

use std::path::Path;
use std::sync::Arc;

use crate::bundle::load::{BundleDir, str_at};
use crate::diag::Code;
use crate::diag::{Finding, Location, Subject, sort_findings};
use crate::fbc::node::Pos;

/// The validation suites: `--select` takes these names (or single codes). Each suite is the
/// set of codes with its prefix.
pub const SUITES: [(&str, &str, &str); 11] = [
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
    (
        "objects",
        "OBJ",
        "optional: PodDisruptionBudgets, PriorityClasses and RBAC rules (api's object validator)",
    ),
    (
        "community",
        "COM",
        "optional: community-operators rules for APIs removed in 1.22 (olm.maxOpenShiftVersion, com.redhat.openshift.versions)",
    ),
    (
        "multiarch",
        "ARC",
        "optional: every image's platforms, read from its registry, against the CSV's arch/os labels and node affinity",
    ),
    ("all", "", "every suite but the optional ones"),
];

/// Prefixes of the optional suites: they run only when named (`--select objects`,
/// `--select-optional name=objects`), never by default or with `all`.
pub const OPTIONAL: [&str; 3] = ["OBJ", "COM", "ARC"];

/// operator-sdk's `--select-optional` label selectors, as suite names or codes.
pub fn selector(s: &str) -> Option<&'static [&'static str]> {
    let (k, v) = s.split_once('=')?;
    Some(match (k.trim(), v.trim()) {
        ("suite", "operatorframework") => &["operatorhub", "deprecated-apis", "good-practices"],
        ("name", "operatorhub" | "operatorhubv2") => &["operatorhub"],
        ("name", "capabilities") => &["HUB011"],
        ("name", "categories") => &["HUB012"],
        ("name", "alpha-deprecated-apis") => &["deprecated-apis"],
        ("name", "good-practices") => &["good-practices"],
        ("name", "community") => &["community"],
        ("name", "objects") => &["objects"],
        ("name", "multiarch") => &["multiarch"],
        _ => return None,
    })
}

/// Every bundle code, sorted.
pub fn codes() -> Vec<&'static Code> {
    let mut v: Vec<&'static Code> = codes::CODES.to_vec();
    for group in [
        crd::CODES,
        apis::CODES,
        hub::CODES,
        practices::CODES,
        runtime::CODES,
        objects::CODES,
        community::CODES,
        multiarch::CODES,
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
    /// Where `k8s_version` comes from, as messages name it (`--openshift-version 4.21 is
    /// Kubernetes 1.34`); default `--k8s-version`.
    pub k8s_version_from: Option<String>,
    /// Suite names or codes (`--select`); empty means every default suite. operator-sdk's
    /// selectors (`suite=operatorframework`, `name=community`) are accepted too.
    pub select: Vec<String>,
    /// Suites or codes run besides the selection (`--select-optional`), typically optional ones.
    pub optional: Vec<String>,
    /// Custom OperatorHub categories (`--categories-file`, `OPERATOR_BUNDLE_CATEGORIES`): they
    /// replace the standard set, as in operator-framework/api.
    pub categories: Option<hub::CustomCategories>,
    /// The community suite's `index-path` (a bundle.Dockerfile): its path and text.
    pub index_file: Option<(std::path::PathBuf, String)>,
    /// The multiarch suite's input: each image's platforms, read from the registry by the
    /// caller (the suite is skipped without it).
    pub image_platforms: Option<std::sync::Arc<multiarch::ImagePlatforms>>,
}

fn prefix_of(code: &str) -> &str {
    code.trim_end_matches(|c: char| c.is_ascii_digit())
}

impl Options {
    /// Checks the `select` and `optional` entries (suite names, codes, operator-sdk selectors)
    /// and replaces selectors by what they name.
    pub fn check_select(&mut self) -> Result<(), String> {
        let known = codes();
        for list in [&mut self.select, &mut self.optional] {
            let mut out = Vec::new();
            for s in list.iter() {
                if let Some(names) = selector(s) {
                    out.extend(names.iter().map(|n| n.to_string()));
                    continue;
                }
                let ok = SUITES.iter().any(|(n, _, _)| n.eq_ignore_ascii_case(s))
                    || known.iter().any(|c| c.code.eq_ignore_ascii_case(s));
                if !ok {
                    let names: Vec<&str> = SUITES.iter().map(|(n, _, _)| *n).collect();
                    return Err(format!(
                        "--select {s}: not a suite ({}), a bundle code (see `olmctl codes`), or an operator-sdk selector (suite=operatorframework, name=community, name=multiarch, name=objects, name=operatorhubv2, name=capabilities, name=categories, name=alpha-deprecated-apis, name=good-practices)",
                        names.join(", ")
                    ));
                }
                out.push(s.clone());
            }
            *list = out;
        }
        Ok(())
    }

    /// Whether an entry of `list` names `code` (by itself or by its suite; `all` names every
    /// default suite's codes).
    fn names(list: &[String], code: &str) -> bool {
        let prefix = prefix_of(code);
        list.iter().any(|s| {
            s.eq_ignore_ascii_case(code)
                || (s.eq_ignore_ascii_case("all") && !OPTIONAL.contains(&prefix))
                || SUITES
                    .iter()
                    .any(|(n, p, _)| n.eq_ignore_ascii_case(s) && *p == prefix)
        })
    }

    /// Whether an entry of `list` names a code of the suite `prefix`.
    fn names_suite(list: &[String], prefix: &str) -> bool {
        list.iter().any(|s| {
            (s.eq_ignore_ascii_case("all") && !OPTIONAL.contains(&prefix))
                || (prefix_of(s).eq_ignore_ascii_case(prefix) && s.len() > prefix.len())
                || SUITES
                    .iter()
                    .any(|(n, p, _)| n.eq_ignore_ascii_case(s) && *p == prefix)
        })
    }

    /// Whether any code of the suite `prefix` is wanted.
    pub fn runs(&self, prefix: &str) -> bool {
        (self.select.is_empty() && !OPTIONAL.contains(&prefix))
            || Self::names_suite(&self.select, prefix)
            || Self::names_suite(&self.optional, prefix)
    }

    /// Whether findings with `code` are wanted.
    pub fn selects(&self, code: &str) -> bool {
        (self.select.is_empty() && !OPTIONAL.contains(&prefix_of(code)))
            || Self::names(&self.select, code)
            || Self::names(&self.optional, code)
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

/// The CSV rules, when the bundle has a CSV.
fn csv_suite(cx: &mut Ctx<'_>) {
    if let Some((file, csv)) = cx.bundle.csv() {
        csv::check(cx, file, csv);
    }
}

/// Validates one bundle directory (already read) with every suite.
pub fn validate(b: &BundleDir) -> Vec<Finding> {
    validate_with(b, &Options::default())
}

/// Validates one bundle directory (already read).
pub fn validate_with(b: &BundleDir, opts: &Options) -> Vec<Finding> {
    // The checks judge the CSV and the annotations as Go decodes them: numbers and booleans in
    // string fields are their text ([`typed`]). Only a bundle that has such a scalar is copied.
    let retyped;
    let csv = b
        .csv()
        .and_then(|(path, csv)| Some((path.clone(), typed::as_go_reads(csv)?)));
    let annotations = b
        .annotations
        .as_ref()
        .and_then(|a| typed::map_of_strings(&a.node));
    let b = if csv.is_some() || annotations.is_some() {
        let mut copy = b.clone();
        if let Some((path, csv)) = csv
            && let Some(m) = copy.manifests.iter_mut().find(|m| m.path == path)
            && let Some(first) = m.docs.first_mut()
        {
            *first = csv;
        }
        if let (Some(node), Some(a)) = (annotations, copy.annotations.as_mut()) {
            a.node = node;
        }
        retyped = copy;
        &retyped
    } else {
        b
    };
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
    // A module runs when the selection names a code it may emit: its suites' codes, plus the
    // codes of other suites it emits (the CSV rules emit BND011 and BND012). The sweep test
    // (every code under every selection naming it) keeps these lists honest.
    let modules: [(SuiteCheck, &[&str], &[&str]); 11] = [
        (format::check, &["BND"], &[]),
        (size::check, &["BND"], &[]),
        (csv_suite, &["CSV"], &["BND011", "BND012"]),
        (crd::check, &["CRD"], &[]),
        (apis::check, &["API"], &[]),
        (hub::check, &["HUB"], &[]),
        (practices::check, &["GP"], &[]),
        (runtime::check, &["OLM"], &[]),
        (objects::check, &["OBJ"], &[]),
        (community::check, &["COM"], &[]),
        (multiarch::check, &["ARC"], &[]),
    ];
    for (check, prefixes, extra) in modules {
        if prefixes.iter().any(|p| opts.runs(p)) || extra.iter().any(|c| opts.selects(c)) {
            check(&mut cx);
        }
    }
    let mut f = cx.findings;
    f.retain(|x| opts.selects(x.code));
    sort_findings(&mut f);
    f
}

/// Kubernetes `IsDNS1123Subdomain`: at most 253 characters, dot-separated labels of lowercase
/// letters, digits and `-`, each starting and ending with a letter or digit.
pub(crate) fn subdomain_problems(n: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if n.len() > 253 {
        out.push("must be no more than 253 characters");
    }
    if !crate::bundle::is_dns1123_subdomain_form(n) {
        out.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')");
    }
    out
}
