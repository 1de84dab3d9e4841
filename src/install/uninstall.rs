//! What `olmctl uninstall` deletes, in order (operator.md §2, §4): the Subscription first (so
//! OLM resolves nothing more for it), then the CSV it installed (OLM removes the operator's
//! Deployments, RBAC and Services it owns), then, when asked, the CRDs the CSV owns (which
//! deletes every custom resource of them) and the CatalogSource `olmctl install` created. Pure:
//! the caller reads the objects and deletes what this lists.

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

    /// The deletions in order, and notes about what is left alone. `csv` is the Subscription's
    /// installed CSV, `catalog_source` the CatalogSource it uses (both as read, if found).
    pub fn plan(
        &self,
        csv: Option<&Value>,
        catalog_source: Option<&Value>,
    ) -> (Vec<Deletion>, Vec<String>) {
        let mut out = vec![Deletion::olm(
            "Subscription",
            "subscriptions",
            &self.namespace,
            self.subscription_name(),
        )];
        let mut notes = Vec::new();
        if let Some(csv) = csv {
            out.push(Deletion::olm(
                "ClusterServiceVersion",
                "clusterserviceversions",
                &self.namespace,
                s(csv, "/metadata/name"),
            ));
            let mut crds: Vec<&str> = csv
                .pointer("/spec/customresourcedefinitions/owned")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|c| s(c, "/name")).collect())
                .unwrap_or_default();
            crds.retain(|n| !n.is_empty());
            crds.sort_unstable();
            crds.dedup();
            if self.delete_crds {
                out.extend(crds.iter().map(|n| Deletion {
                    group: "apiextensions.k8s.io".into(),
                    version: "v1".into(),
                    kind: "CustomResourceDefinition".into(),
                    plural: "customresourcedefinitions".into(),
                    namespace: None,
                    name: n.to_string(),
                }));
            } else if !crds.is_empty() {
                notes.push(format!(
                    "CRDs kept (and their custom resources): {}; --delete-crds deletes them",
                    crds.join(", ")
                ));
            }
        }
        if self.delete_catalog_source {
            match catalog_source {
                Some(cs) if s(cs, "/spec/publisher") == PUBLISHER => out.push(Deletion::olm(
                    "CatalogSource",
                    "catalogsources",
                    s(cs, "/metadata/namespace"),
                    s(cs, "/metadata/name"),
                )),
                Some(cs) => notes.push(format!(
                    "CatalogSource {}/{} kept: olmctl install did not create it (spec.publisher is not {PUBLISHER:?})",
                    s(cs, "/metadata/namespace"),
                    s(cs, "/metadata/name")
                )),
                None => notes.push("the Subscription's CatalogSource is gone already".into()),
            }
        }
        (out, notes)
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

    fn csv() -> Value {
        json!({"metadata": {"name": "p.v1.0.0"}, "spec": {"customresourcedefinitions": {"owned": [
            {"name": "widgets.example.com", "version": "v1"},
            {"name": "gadgets.example.com", "version": "v1"},
            {"name": "widgets.example.com", "version": "v1alpha1"}]}}})
    }

    #[test]
    fn subscription_then_csv_and_crds_kept_by_default() {
        let sub = json!({"status": {"installedCSV": "p.v1.0.0", "currentCSV": "p.v1.1.0"}});
        assert_eq!(Uninstall::csv_name(&sub).as_deref(), Some("p.v1.0.0"));
        let (d, notes) = u(false, false).plan(Some(&csv()), None);
        let names: Vec<String> = d.iter().map(Deletion::describe).collect();
        assert_eq!(
            names,
            [
                "Subscription operators/p",
                "ClusterServiceVersion operators/p.v1.0.0"
            ]
        );
        assert_eq!(
            notes,
            [
                "CRDs kept (and their custom resources): gadgets.example.com, widgets.example.com; --delete-crds deletes them"
            ]
        );
    }

    #[test]
    fn crds_and_our_catalog_source_when_asked() {
        let sub = json!({"status": {"currentCSV": "p.v1.0.0"}});
        assert_eq!(Uninstall::csv_name(&sub).as_deref(), Some("p.v1.0.0"));
        let cs = json!({"metadata": {"name": "p-catalog", "namespace": "olm"},
            "spec": {"publisher": PUBLISHER}});
        let (d, notes) = u(true, true).plan(Some(&csv()), Some(&cs));
        let names: Vec<String> = d.iter().map(Deletion::describe).collect();
        assert_eq!(
            names,
            [
                "Subscription operators/p",
                "ClusterServiceVersion operators/p.v1.0.0",
                "CustomResourceDefinition gadgets.example.com",
                "CustomResourceDefinition widgets.example.com",
                "CatalogSource olm/p-catalog"
            ]
        );
        assert!(notes.is_empty());
        // Someone else's catalog stays.
        let other = json!({"metadata": {"name": "operatorhubio-catalog", "namespace": "olm"},
            "spec": {"publisher": "OperatorHub.io"}});
        let (d, notes) = u(false, true).plan(None, Some(&other));
        assert_eq!(d.len(), 1);
        assert!(notes[0].contains("kept"), "{notes:?}");
    }
}
