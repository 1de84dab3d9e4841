//! Which ClusterCatalog OLM v1 resolves a step of the gate from, when the extension selects
//! several and their contents are known one by one (the operator fetches each).
//!
//! operator-controller's `resolve/catalog.go :: CatalogResolver.Resolve` resolves each
//! selected catalog on its own: the package's bundles in the selected channels, in the version
//! range (the gate's exact pin), and, under `CatalogProvided`, direct successors of the
//! installed bundle in *that catalog's* channels (`filter.SuccessorsOf`). Each catalog with a
//! match offers its best bundle. Then:
//!
//! - a deprecated offer (an `olm.bundle` entry of the package's `olm.deprecations` in its
//!   catalog, `isDeprecated`) is dropped when another offer is not deprecated;
//! - the highest `spec.priority` wins, but only when the top two differ: two offers at the
//!   same highest priority fail the resolution (`resolutionError`: "found bundles for package
//!   ... in multiple catalogs with the same priority [...]"), and so does no offer at all.
//!
//! A pin the resolver would refuse strands the extension (`Progressing` retries with that
//! error), so the gate does not move the pin there; with one catalog, or only the merged
//! content known (`gate evaluate --catalog`), nothing is decided here.

use std::collections::BTreeMap;
use std::sync::Arc;

use semver::Version;

use super::successors::{Step, pin_of, successors};
use crate::fbc::decl::{Bundle, DeclarativeConfig};

/// The content of each ClusterCatalog the caller fetched, by catalog name.
pub type Contents = BTreeMap<String, Arc<DeclarativeConfig>>;

/// One selected ClusterCatalog: its name, `spec.priority` (0 when unset) and content.
#[derive(Debug, Clone, Copy)]
pub struct Source<'c> {
    /// `metadata.name`.
    pub name: &'c str,
    /// `spec.priority`.
    pub priority: i64,
    /// The catalog's content.
    pub content: &'c DeclarativeConfig,
}

/// What a ClusterExtension asks the resolver for, apart from the version.
#[derive(Debug, Clone, Copy)]
pub struct Query<'q> {
    /// `spec.source.catalog.packageName`.
    pub package: &'q str,
    /// `spec.source.catalog.channels` (none: all).
    pub channels: &'q [String],
    /// `upgradeConstraintPolicy: SelfCertified` (no successor filter).
    pub self_certified: bool,
    /// `status.install.bundle.name`.
    pub installed_name: &'q str,
    /// `status.install.bundle.version` as written there.
    pub installed_raw: &'q str,
    /// That version, parsed.
    pub installed: &'q Version,
}

/// The selected catalogs of one extension, each with the direct successors of the installed
/// bundle found once ([`successors`]), to resolve any of the gate's candidate steps.
pub struct Resolver<'c, 'q> {
    query: Query<'q>,
    /// (catalog, priority, content, its successors best first); empty with fewer than two.
    catalogs: Vec<(Source<'c>, Vec<Step>)>,
}

impl<'c, 'q> Resolver<'c, 'q> {
    /// Finds each catalog's successors; a catalog without the package or a match offers
    /// nothing (as `isFBCEmpty` and an empty filter result skip it). With fewer than two
    /// catalogs nothing is found: the caller's merged content is then what OLM v1 sees.
    pub fn new(sources: Vec<Source<'c>>, query: Query<'q>) -> Self {
        let catalogs = if sources.len() < 2 {
            Vec::new()
        } else {
            sources
                .into_iter()
                .filter_map(|s| {
                    let found = successors(
                        s.content,
                        query.package,
                        query.channels,
                        query.self_certified,
                        query.installed_name,
                        query.installed,
                    )
                    .ok()?;
                    Some((s, found))
                })
                .collect()
        };
        Resolver { query, catalogs }
    }

    /// The bundle OLM v1 would install for a pin to `step`'s version: from the catalog that
    /// wins as `CatalogResolver.Resolve` decides, or `Ok(None)` when fewer than two catalogs
    /// are known. `Err` is the resolver's own message when it would refuse the pin.
    pub fn resolve(&self, step: &Step) -> Result<Option<&'c Bundle>, String> {
        if self.catalogs.is_empty() {
            return Ok(None);
        }
        struct Offer<'c> {
            catalog: &'c str,
            priority: i64,
            bundle: &'c Bundle,
            deprecated: bool,
        }
        let q = &self.query;
        let mut offers: Vec<Offer<'c>> = Vec::new();
        for (s, found) in &self.catalogs {
            // The best of this catalog's matches: `successors` lists them best first.
            let Some(best) = found
                .iter()
                .find(|f| f.version.cmp_precedence(&step.version).is_eq())
            else {
                continue;
            };
            let Some(bundle) = s
                .content
                .bundles
                .iter()
                .find(|b| b.package == q.package && b.name == best.bundle)
            else {
                continue;
            };
            offers.push(Offer {
                catalog: s.name,
                priority: s.priority,
                bundle,
                // Deprecated by this catalog's `olm.deprecations` (`isDeprecated`).
                deprecated: best.deprecated,
            });
        }
        if offers.iter().any(|o| !o.deprecated) {
            offers.retain(|o| !o.deprecated);
        }
        // Highest priority first (`sort.Slice` there; names break ties here for a stable
        // order).
        offers.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.catalog.cmp(b.catalog)));
        if offers.len() > 1 && offers[0].priority != offers[1].priority {
            offers.truncate(1);
        }
        if offers.len() == 1 {
            return Ok(Some(offers[0].bundle));
        }
        let matched: Vec<&str> = offers.iter().map(|o| o.catalog).collect();
        Err(resolution_error(q, &pin_of(&step.version), &matched))
    }
}

/// `resolutionError.Error()`: Go's `%v` of a string slice is `[a b]`; the catalogs are sorted.
fn resolution_error(q: &Query<'_>, version: &str, matched: &[&str]) -> String {
    let mut s = format!(
        "error upgrading from currently installed version {:?}: ",
        q.installed_raw
    );
    if matched.len() > 1 {
        s.push_str(&format!("found bundles for package {:?} ", q.package));
    } else {
        s.push_str(&format!("no bundles found for package {:?} ", q.package));
    }
    if !version.is_empty() {
        s.push_str(&format!("matching version {version:?} "));
    }
    if !q.channels.is_empty() {
        s.push_str(&format!("in channels [{}] ", q.channels.join(" ")));
    }
    let mut names = matched.to_vec();
    names.sort_unstable();
    if names.len() > 1 {
        s.push_str(&format!(
            "in multiple catalogs with the same priority [{}] ",
            names.join(" ")
        ));
    }
    s.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::super::fixture::catalog_of;
    use super::*;
    use serde_json::{Value as J, json};

    /// Package `p` with images at `host`: 1.0.0 <- 1.1.0 in channel `stable` (without the
    /// edge when `edge` is false; 1.1.0 deprecated when `deprecate`).
    fn content(host: &str, deprecate: bool, edge: bool) -> DeclarativeConfig {
        let entry = if edge {
            json!({"name": "p.v1.1.0", "replaces": "p.v1.0.0"})
        } else {
            json!({"name": "p.v1.1.0"})
        };
        let bundle = |v: &str| {
            json!({"schema": "olm.bundle", "name": format!("p.v{v}"), "package": "p",
                "image": format!("{host}/p:{v}"),
                "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": v}}]})
        };
        let mut blobs: Vec<J> = vec![
            json!({"schema": "olm.package", "name": "p", "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "package": "p", "name": "stable",
                "entries": [{"name": "p.v1.0.0"}, entry]}),
            bundle("1.0.0"),
            bundle("1.1.0"),
        ];
        if deprecate {
            blobs.push(
                json!({"schema": "olm.deprecations", "package": "p", "entries": [
                {"reference": {"schema": "olm.bundle", "name": "p.v1.1.0"}, "message": "no"}]}),
            );
        }
        catalog_of(&blobs)
    }

    fn other_package() -> DeclarativeConfig {
        catalog_of(&[
            json!({"schema": "olm.package", "name": "q", "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "package": "q", "name": "stable", "entries": [{"name": "q.v1.0.0"}]}),
            json!({"schema": "olm.bundle", "name": "q.v1.0.0", "package": "q", "image": "example.com/q:1.0.0",
                "properties": [{"type": "olm.package", "value": {"packageName": "q", "version": "1.0.0"}}]}),
        ])
    }

    fn step() -> Step {
        Step {
            bundle: "p.v1.1.0".into(),
            version: Version::new(1, 1, 0),
            edge: None,
            channel: "stable".into(),
            deprecated: false,
        }
    }

    fn run(sources: &[(&str, i64, &DeclarativeConfig)]) -> Result<Option<String>, String> {
        let installed = Version::new(1, 0, 0);
        let channels = vec!["stable".to_string()];
        let q = Query {
            package: "p",
            channels: &channels,
            self_certified: false,
            installed_name: "p.v1.0.0",
            installed_raw: "1.0.0",
            installed: &installed,
        };
        let sources: Vec<Source<'_>> = sources
            .iter()
            .map(|&(name, priority, content)| Source {
                name,
                priority,
                content,
            })
            .collect();
        Resolver::new(sources, q)
            .resolve(&step())
            .map(|b| b.map(|b| b.image.clone()))
    }

    #[test]
    fn one_catalog_decides_nothing() {
        let c = content("a.example", false, true);
        assert_eq!(run(&[("a", 0, &c)]), Ok(None));
        assert_eq!(run(&[]), Ok(None));
    }

    #[test]
    fn the_same_highest_priority_is_refused_with_the_resolvers_message() {
        let (a, b) = (
            content("a.example", false, true),
            content("b.example", false, true),
        );
        assert_eq!(
            run(&[("zeta", -100, &a), ("alpha", -100, &b)]),
            Err("error upgrading from currently installed version \"1.0.0\": found bundles for package \"p\" matching version \"1.1.0\" in channels [stable] in multiple catalogs with the same priority [alpha zeta]".into())
        );
        // A third catalog below them is listed too: `Resolve` only narrows when the top two
        // differ.
        let c = content("c.example", false, true);
        assert!(
            run(&[("zeta", 5, &a), ("alpha", 5, &b), ("low", 0, &c)])
                .expect_err("ambiguous")
                .ends_with("in multiple catalogs with the same priority [alpha low zeta]")
        );
    }

    #[test]
    fn a_higher_priority_wins_and_a_catalog_without_a_match_does_not_count() {
        let (a, b) = (
            content("a.example", false, true),
            content("b.example", false, true),
        );
        assert_eq!(
            run(&[("a", 0, &a), ("b", 10, &b)]),
            Ok(Some("b.example/p:1.1.0".into()))
        );
        assert_eq!(
            run(&[("a", 10, &a), ("b", -10, &b)]),
            Ok(Some("a.example/p:1.1.0".into()))
        );
        // Without the edge in `b`, 1.1.0 is no successor there: `a` alone offers it, at a
        // lower priority.
        let no_edge = content("b.example", false, false);
        assert_eq!(
            run(&[("a", 0, &a), ("b", 10, &no_edge)]),
            Ok(Some("a.example/p:1.1.0".into()))
        );
        // A catalog without the package does not count.
        let q = other_package();
        assert_eq!(
            run(&[("a", 0, &a), ("q", 0, &q)]),
            Ok(Some("a.example/p:1.1.0".into()))
        );
        // No catalog offers it on its own: the resolver finds nothing.
        let no_edge_a = content("a.example", false, false);
        assert_eq!(
            run(&[("a", 0, &no_edge_a), ("b", 0, &no_edge)]),
            Err("error upgrading from currently installed version \"1.0.0\": no bundles found for package \"p\" matching version \"1.1.0\" in channels [stable]".into())
        );
    }

    #[test]
    fn a_deprecated_offer_yields_to_one_that_is_not_whatever_the_priority() {
        let (dep, ok) = (
            content("dep.example", true, true),
            content("ok.example", false, true),
        );
        // The deprecated one has the higher priority and still loses.
        assert_eq!(
            run(&[("dep", 100, &dep), ("ok", 0, &ok)]),
            Ok(Some("ok.example/p:1.1.0".into()))
        );
        // Both deprecated: the priority decides between them again.
        let dep2 = content("dep2.example", true, true);
        assert_eq!(
            run(&[("dep", 0, &dep), ("dep2", 100, &dep2)]),
            Ok(Some("dep2.example/p:1.1.0".into()))
        );
        assert!(run(&[("dep", 0, &dep), ("dep2", 0, &dep2)]).is_err());
    }
}
