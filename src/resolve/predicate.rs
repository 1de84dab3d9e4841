//! Which entries a requirement or a Subscription admits: a port of OLM's
//! `resolver/cache/predicates.go`, each predicate's `Test` and its `String` (the text OLM
//! writes into `bundle X requires an operator ...`).

use std::fmt;

use semver::Version;

use super::entry::{Entry, SourceKey};
use crate::range::Range;

/// `cache.Predicate`.
#[derive(Debug, Clone)]
pub enum Predicate {
    /// `CSVNamePredicate`.
    CsvName(String),
    /// `ChannelPredicate` ("" admits every channel).
    Channel(String),
    /// `PkgPredicate`.
    Pkg(String),
    /// `VersionInRangePredicate`: the range and its text.
    VersionInRange(Range, String),
    /// `LabelPredicate`.
    Label(String),
    /// `CatalogPredicate`.
    Catalog(SourceKey),
    /// `ProvidingAPIPredicate`: group, version, kind.
    ProvidingApi(String, String, String),
    /// `SkipRangeIncludesPredicate`.
    SkipRangeIncludes(Version),
    /// `ReplacesPredicate`: replaces or skips the name.
    Replaces(String),
    /// `And`.
    And(Vec<Predicate>),
    /// `Or`.
    Or(Vec<Predicate>),
    /// `Not`: none of them.
    Not(Vec<Predicate>),
    /// `BooleanPredicate`.
    Bool(bool),
    /// `CreateCelPredicate`: the rule compiled, its text, and the failure message.
    Cel(super::cel::Program, String, String),
}

impl Predicate {
    /// `Test`.
    pub fn test(&self, o: &Entry) -> bool {
        match self {
            Predicate::CsvName(n) => o.name == *n,
            Predicate::Channel(c) => c.is_empty() || o.source.channel == *c,
            Predicate::Pkg(pkg) => packages(o).any(|(name, _)| name == pkg) || o.package() == pkg,
            Predicate::VersionInRange(r, _) => {
                packages(o).any(|(_, v)| Version::parse(v).is_ok_and(|v| r.contains(&v)))
                    || o.version.as_ref().is_some_and(|v| r.contains(v))
            }
            Predicate::Label(l) => o
                .properties
                .iter()
                .filter(|p| p.type_ == "olm.label")
                .any(|p| p.field("label") == Ok(l.as_str())),
            Predicate::Catalog(k) => o.source.catalog == *k,
            Predicate::ProvidingApi(g, v, k) => o
                .properties
                .iter()
                .filter(|p| p.type_ == "olm.gvk")
                .any(|p| {
                    matches!(
                        (p.field("group"), p.field("version"), p.field("kind")),
                        (Ok(pg), Ok(pv), Ok(pk)) if pg == g && pv == v && pk == k
                    )
                }),
            Predicate::SkipRangeIncludes(v) => o.skip_range.as_ref().is_some_and(|r| r.contains(v)),
            Predicate::Replaces(r) => o.replaces == *r || o.skips.iter().any(|s| s == r),
            Predicate::And(ps) => ps.iter().all(|p| p.test(o)),
            Predicate::Or(ps) => ps.iter().any(|p| p.test(o)),
            Predicate::Not(ps) => !ps.iter().any(|p| p.test(o)),
            Predicate::Bool(b) => *b,
            Predicate::Cel(program, _, _) => program.evaluate(&o.properties).unwrap_or(false),
        }
    }
}

/// The (packageName, version) of each `olm.package` property that decodes.
fn packages(o: &Entry) -> impl Iterator<Item = (&str, &str)> {
    o.properties
        .iter()
        .filter(|p| p.type_ == "olm.package")
        .filter_map(|p| Some((p.field("packageName").ok()?, p.field("version").ok()?)))
}

fn join(f: &mut fmt::Formatter<'_>, ps: &[Predicate], sep: &str) -> fmt::Result {
    for (i, p) in ps.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{p}")?;
    }
    Ok(())
}

impl fmt::Display for Predicate {
    /// `String()`, as OLM words each predicate (`Not` of one predicate prints it without a
    /// `not`, as OLM's does).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::CsvName(n) => write!(f, "with name: {n}"),
            Predicate::Channel(c) => write!(f, "with channel: {c}"),
            Predicate::Pkg(p) => write!(f, "with package: {p}"),
            Predicate::VersionInRange(_, s) => write!(f, "with version in range: {s}"),
            Predicate::Label(l) => write!(f, "with label: {l}"),
            Predicate::Catalog(k) => write!(f, "from catalog: {}/{}", k.namespace, k.name),
            Predicate::ProvidingApi(g, v, k) => {
                write!(
                    f,
                    "providing an API with group: {g}, version: {v}, kind: {k}"
                )
            }
            Predicate::SkipRangeIncludes(v) => write!(f, "skip range includes: {v}"),
            Predicate::Replaces(r) => write!(f, "replaces: {r}"),
            Predicate::And(ps) => join(f, ps, " and "),
            Predicate::Or(ps) => join(f, ps, " or "),
            Predicate::Not(ps) => join(f, ps, " and not "),
            Predicate::Bool(true) => f.write_str("predicate is true"),
            Predicate::Bool(false) => f.write_str("predicate is false"),
            Predicate::Cel(_, rule, message) => write!(
                f,
                "with constraint: {} and message: {}",
                crate::range::go_quote(rule),
                crate::range::go_quote(message)
            ),
        }
    }
}
