//! What `olmctl uninstall` deletes, in phases; each phase's objects are gone before the next
//! starts (operator.md §2, §4):
//!
//! 1. the Subscription (so OLM resolves nothing more for the package);
//! 2. with `--delete-crds`: every custom resource of the CRDs the package's CSVs own, in every
//!    namespace, while the operator still runs, so that a finalizer it puts on them is served;
//! 3. every CSV of the package in the namespace (a failed upgrade leaves two; OLM's garbage
//!    collection then removes the Deployments, RBAC and Services they own);
//! 4. with `--delete-crds`: the CRDs, which have no custom resource left;
//! 5. with `--delete-catalog-source`: the CatalogSource, when `olmctl install` created it.
//!
//! Without `--delete-crds`, custom resources that carry finalizers are named in a warning:
//! once the operator is gone nothing removes those finalizers, and they block the deletion
//! of their namespaces and CRDs. Pure: the caller reads the objects and deletes what this
//! lists.

use serde_json::Value;

/// The options of `olmctl uninstall`.
#[derive(Debug, Clone)]
pub struct Uninstall {
    /// The package (and Subscription name, as `olmctl install` names it).
    pub package: String,
    /// The Subscription's name, when it is not the package's.
    pub subscription: Option<String>,
    /// The install namespace.
    pub namespace: String,
    /// Also delete the CRDs the CSV owns (and with them every custom resource).
    pub delete_crds: bool,
    /// Also delete the CatalogSource, when `olmctl install` created it.
    pub delete_catalog_source: bool,
}

/// One object to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deletion {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Resource plural.
    pub plural: String,
    /// Namespace, `None` when cluster-scoped.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl Deletion {
    fn olm(kind: &str, plural: &str, ns: &str, name: &str) -> Deletion {
        Deletion {
            group: "operators.coreos.com".into(),
            version: "v1alpha1".into(),
            kind: kind.into(),
            plural: plural.into(),
            namespace: Some(ns.into()),
            name: name.into(),
        }
    }

    /// `Kind namespace/name` (or `Kind name`).
    pub fn describe(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// The publisher `olmctl install` writes on the CatalogSources it creates.
pub const PUBLISHER: &str = "olmctl install";

fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// What the cluster has of the package, as read by the caller.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The Subscription.
    pub subscription: Option<Value>,
    /// Every CSV in the namespace (the caller lists them; [`Uninstall::package_csvs`]
    /// picks the package's).
    pub csvs: Vec<Value>,
    /// For each CRD the package's CSVs own (by name, as found): its custom resources.
    pub custom_resources: Vec<(Value, Vec<Value>)>,
    /// The Subscription's CatalogSource.
    pub catalog_source: Option<Value>,
}

/// One phase: delete these, then wait until they are gone.
pub type Phase = Vec<Deletion>;

fn group_version(api_version: &str) -> (String, String) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g.into(), v.into()),
        None => (String::new(), api_version.into()),
    }
}

impl Uninstall {
    /// The Subscription's name.
    pub fn subscription_name(&self) -> &str {
        self.subscription.as_deref().unwrap_or(&self.package)
    }

    /// The installed CSV's name, read from the Subscription.
    pub fn csv_name(sub: &Value) -> Option<String> {
        ["/status/installedCSV", "/status/currentCSV"]
            .iter()
            .map(|p| s(sub, p))
            .find(|n| !n.is_empty())
            .map(str::to_string)
    }

    /// The package's CSVs among `csvs` (one namespace's): those the Subscription names
    /// (`installedCSV`, `currentCSV`), those OLM labelled for the package
    /// (`operators.coreos.com/<package>.<namespace>`), and those whose
    /// `operatorframework.io/properties` name the package; never copied CSVs
    /// (`olm.copiedFrom`). Sorted by name.
    pub fn package_csvs<'a>(&self, sub: Option<&Value>, csvs: &'a [Value]) -> Vec<&'a Value> {
        let named: Vec<String> = sub
            .map(|sub| {
                ["/status/installedCSV", "/status/currentCSV"]
                    .iter()
                    .map(|p| s(sub, p).to_string())
                    .filter(|n| !n.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let label = format!("operators.coreos.com/{}.{}", self.package, self.namespace);
        let of_package = |c: &Value| {
            let props = s(c, "/metadata/annotations/operatorframework.io~1properties");
            serde_json::from_str::<Value>(props)
                .ok()
                .and_then(|p| p["properties"].as_array().cloned())
                .is_some_and(|ps| {
                    ps.iter().any(|p| {
                        p["type"] == "olm.package"
                            && p["value"]["packageName"] == self.package.as_str()
                    })
                })
        };
        let mut out: Vec<&Value> = csvs
            .iter()
            .filter(|c| c.pointer("/metadata/labels/olm.copiedFrom").is_none())
            .filter(|c| {
                named.iter().any(|n| n == s(c, "/metadata/name"))
                    || c.pointer("/metadata/labels")
                        .and_then(Value::as_object)
                        .is_some_and(|l| l.contains_key(&label))
                    || of_package(c)
            })
            .collect();
        out.sort_by_key(|c| s(c, "/metadata/name").to_string());
        out
    }

    /// The CRDs the package's CSVs own, by name, sorted.
    pub fn owned_crds(csvs: &[&Value]) -> Vec<String> {
        let mut crds: Vec<String> = csvs
            .iter()
            .flat_map(|c| {
                c.pointer("/spec/customresourcedefinitions/owned")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .map(|c| s(&c, "/name").to_string())
            .filter(|n| !n.is_empty())
            .collect();
        crds.sort_unstable();
        crds.dedup();
        crds
    }

    /// The phases, and notes and warnings about what is left alone.
    pub fn plan(&self, found: &Found) -> (Vec<Phase>, Vec<String>) {
        let mut phases: Vec<Phase> = vec![vec![Deletion::olm(
            "Subscription",
            "subscriptions",
            &self.namespace,
            self.subscription_name(),
        )]];
        let mut notes = Vec::new();
        let csvs = self.package_csvs(found.subscription.as_ref(), &found.csvs);
        let crds = Self::owned_crds(&csvs);
        if self.delete_crds {
            let mut crs = Vec::new();
            for (crd, items) in &found.custom_resources {
                let plural = s(crd, "/spec/names/plural");
                for i in items {
                    let (group, version) = group_version(s(i, "/apiVersion"));
                    let ns = s(i, "/metadata/namespace");
                    crs.push(Deletion {
                        group,
                        version,
                        kind: s(i, "/kind").into(),
                        plural: plural.into(),
                        namespace: (!ns.is_empty()).then(|| ns.to_string()),
                        name: s(i, "/metadata/name").into(),
                    });
                }
            }
            if !crs.is_empty() {
                phases.push(crs);
            }
        } else {
            for (_, items) in &found.custom_resources {
                for i in items {
                    let f: Vec<&str> = i
                        .pointer("/metadata/finalizers")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    if !f.is_empty() {
                        let ns = s(i, "/metadata/namespace");
                        let at = if ns.is_empty() {
                            s(i, "/metadata/name").to_string()
                        } else {
                            format!("{ns}/{}", s(i, "/metadata/name"))
                        };
                        notes.push(format!(
                            "warning: {} {at} keeps finalizer(s) {}: nothing removes them once the operator is gone, and they block the deletion of its namespace and CRD; delete it before uninstalling, or pass --delete-crds",
                            s(i, "/kind"),
                            f.join(", ")
                        ));
                    }
                }
            }
            if !crds.is_empty() {
                notes.push(format!(
                    "CRDs kept (and their custom resources): {}; --delete-crds deletes them",
                    crds.join(", ")
                ));
            }
        }
        let csv_phase: Phase = csvs
            .iter()
            .map(|c| {
                Deletion::olm(
                    "ClusterServiceVersion",
                    "clusterserviceversions",
                    &self.namespace,
                    s(c, "/metadata/name"),
                )
            })
            .collect();
        if !csv_phase.is_empty() {
            phases.push(csv_phase);
        }
        if self.delete_crds && !crds.is_empty() {
            phases.push(
                crds.iter()
                    .map(|n| Deletion {
                        group: "apiextensions.k8s.io".into(),
                        version: "v1".into(),
                        kind: "CustomResourceDefinition".into(),
                        plural: "customresourcedefinitions".into(),
                        namespace: None,
                        name: n.to_string(),
                    })
                    .collect(),
            );
        }
        if self.delete_catalog_source {
            match &found.catalog_source {
                Some(cs) if s(cs, "/spec/publisher") == PUBLISHER => phases.push(vec![
                    Deletion::olm(
                        "CatalogSource",
                        "catalogsources",
                        s(cs, "/metadata/namespace"),
                        s(cs, "/metadata/name"),
                    ),
                ]),
                Some(cs) => notes.push(format!(
                    "CatalogSource {}/{} kept: olmctl install did not create it (spec.publisher is not {PUBLISHER:?})",
                    s(cs, "/metadata/namespace"),
                    s(cs, "/metadata/name")
                )),
                None => notes.push("the Subscription's CatalogSource is gone already".into()),
            }
        }
        (phases, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn u(crds: bool, cs: bool) -> Uninstall {
        Uninstall {
            package: "p".into(),
            subscription: None,
            namespace: "operators".into(),
            delete_crds: crds,
            delete_catalog_source: cs,
        }
    }

    fn csv(name: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"operators.coreos.com/p.operators": ""}},
            "spec": {"customresourcedefinitions": {"owned": [
            {"name": "widgets.example.com", "version": "v1"},
            {"name": "gadgets.example.com", "version": "v1"},
            {"name": "widgets.example.com", "version": "v1alpha1"}]}}})
    }

    fn described(phases: &[Phase]) -> Vec<Vec<String>> {
        phases
            .iter()
            .map(|p| p.iter().map(Deletion::describe).collect())
            .collect()
    }

    fn found() -> Found {
        let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "apps", "finalizers": ["example.com/cleanup"]}});
        Found {
            subscription: Some(
                json!({"status": {"installedCSV": "p.v1.0.0", "currentCSV": "p.v1.1.0"}}),
            ),
            // A failed upgrade: both CSVs are there; another package's CSV and a copied CSV
            // are not the package's.
            csvs: vec![
                csv("p.v1.0.0"),
                csv("p.v1.1.0"),
                json!({"metadata": {"name": "other.v1"}}),
                json!({"metadata": {"name": "p.v0.9.0", "labels": {"olm.copiedFrom": "x", "operators.coreos.com/p.operators": ""}}}),
            ],
            custom_resources: vec![(
                json!({"metadata": {"name": "widgets.example.com"}, "spec": {"names": {"plural": "widgets"}}}),
                vec![widget],
            )],
            catalog_source: None,
        }
    }

    #[test]
    fn every_csv_of_the_package_and_crds_kept_by_default_with_a_warning_for_finalizers() {
        let (phases, notes) = u(false, false).plan(&found());
        assert_eq!(
            described(&phases),
            [
                vec!["Subscription operators/p"],
                vec![
                    "ClusterServiceVersion operators/p.v1.0.0",
                    "ClusterServiceVersion operators/p.v1.1.0"
                ]
            ]
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("warning: Widget apps/w keeps finalizer(s) example.com/cleanup")
        );
        assert_eq!(
            notes[1],
            "CRDs kept (and their custom resources): gadgets.example.com, widgets.example.com; --delete-crds deletes them"
        );
    }

    #[test]
    fn custom_resources_go_while_the_operator_runs_then_csvs_then_crds_then_our_catalog() {
        let mut f = found();
        f.catalog_source = Some(
            json!({"metadata": {"name": "p-catalog", "namespace": "olm"},
            "spec": {"publisher": PUBLISHER}}),
        );
        let (phases, notes) = u(true, true).plan(&f);
        assert_eq!(
            described(&phases),
            [
                vec!["Subscription operators/p"],
                vec!["Widget apps/w"],
                vec![
                    "ClusterServiceVersion operators/p.v1.0.0",
                    "ClusterServiceVersion operators/p.v1.1.0"
                ],
                vec![
                    "CustomResourceDefinition gadgets.example.com",
                    "CustomResourceDefinition widgets.example.com"
                ],
                vec!["CatalogSource olm/p-catalog"]
            ]
        );
        assert_eq!(phases[1][0].plural, "widgets");
        assert_eq!(
            (phases[1][0].group.as_str(), phases[1][0].version.as_str()),
            ("example.com", "v1")
        );
        assert!(notes.is_empty());
        // Someone else's catalog stays.
        f.catalog_source = Some(
            json!({"metadata": {"name": "operatorhubio-catalog", "namespace": "olm"},
            "spec": {"publisher": "OperatorHub.io"}}),
        );
        let (phases, notes) = u(false, true).plan(&f);
        assert_eq!(phases.len(), 2);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("operatorhubio-catalog kept")),
            "{notes:?}"
        );
        let sub = json!({"status": {"currentCSV": "p.v1.0.0"}});
        assert_eq!(Uninstall::csv_name(&sub).as_deref(), Some("p.v1.0.0"));
    }
}
