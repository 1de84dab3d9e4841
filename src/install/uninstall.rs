//! What `olmctl uninstall` deletes, in phases; each phase's objects are gone before the next
//! starts (operator.md §2, §4):
//!
//! 1. the Subscription (so OLM resolves nothing more for the package);
//! 2. with `--delete-crds`: every custom resource of the CRDs the package's CSVs own, in every
//!    namespace, while the operator still runs, so that a finalizer it puts on them is served;
//! 3. every CSV of the package in the namespace (a failed upgrade leaves two; OLM's garbage
//!    collection then removes the Deployments, RBAC and Services they own);
//! 4. with `--delete-crds`: the CRDs, which have no custom resource left;
//! 5. with `--delete-catalog-source`: the CatalogSource, when `olmctl install` created it;
//!    without it too when `install --bundle` created it (a one-bundle catalog).
//!
//! Without `--delete-crds`, custom resources that carry finalizers are named in a warning:
//! once the operator is gone nothing removes those finalizers, and they block the deletion
//! of their namespaces and CRDs. Pure: the caller reads the objects and deletes what this
//! lists.

use std::collections::BTreeSet;

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
    /// Also delete the package's own CRDs (and with them every custom resource): see
    /// [`Uninstall::deletable_crds`].
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
    /// The namespace's InstallPlans: their steps say which objects each CSV's bundle shipped
    /// (with `--delete-crds`).
    pub install_plans: Vec<Value>,
    /// Every CSV of the cluster, copied CSVs left out (with `--delete-crds`): a CRD that
    /// another one owns or requires stays.
    pub cluster_csvs: Vec<Value>,
    /// The CRDs the package's CSVs own, as the cluster has them (with `--delete-crds`): one
    /// another installer manages (Helm) stays.
    pub crds: Vec<Value>,
    /// The installed bundle's own CRD manifests, read from the bundle in the catalog, when no
    /// InstallPlan step is left to say what it shipped ([`Uninstall::needs_bundle`]).
    pub bundle_crds: Option<BundleCrds>,
}

/// The CRDs an installed bundle ships, as read from its image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleCrds {
    /// Where they were read: `bundle IMAGE (catalog IMAGE)`.
    pub from: String,
    /// The names of its `CustomResourceDefinition` manifests.
    pub names: BTreeSet<String>,
}

impl BundleCrds {
    /// The CRD manifests of `bundle` (as opm reads a bundle: each manifest's first document
    /// of kind `CustomResourceDefinition`), read from `from`.
    pub fn of(bundle: &crate::bundle::load::BundleDir, from: String) -> BundleCrds {
        use crate::bundle::load::{kind_of, str_at};
        let names = bundle
            .first_docs()
            .filter(|(_, d)| kind_of(d) == Some("CustomResourceDefinition"))
            .filter_map(|(_, d)| str_at(d, &["metadata", "name"]))
            .map(str::to_string)
            .collect();
        BundleCrds { from, names }
    }
}

/// The image of the catalog's bundle `csv` of `package` (the `olm.bundle` of that name), the
/// one OLM unpacked to install it (`resolver.NewStepsFromBundle`).
pub fn bundle_image<'a>(
    cfg: &'a crate::fbc::decl::DeclarativeConfig,
    package: &str,
    csv: &str,
) -> Option<&'a str> {
    cfg.bundles
        .iter()
        .find(|b| b.package == package && b.name == csv)
        .map(|b| b.image.as_str())
}

/// A CRD one of the package's CSVs owns that `--delete-crds` leaves alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptCrd {
    /// The name, as the CSV gives it.
    pub name: String,
    /// Why it stays.
    pub why: String,
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
    /// Checks the names as the API server checks them ([`crate::names`]): the namespace is a
    /// label, the Subscription's name a subdomain. Errors name the flag.
    pub fn check(&self) -> Result<(), String> {
        use crate::names::{Rule, check};
        check(Rule::Label, "--namespace", &self.namespace).map_err(|e| e.to_string())?;
        let what = if self.subscription.is_some() {
            "--subscription"
        } else {
            "the package name (the Subscription's name)"
        };
        check(Rule::Subdomain, what, self.subscription_name()).map_err(|e| e.to_string())
    }

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

    /// The CRDs `--delete-crds` deletes, of those the package's CSVs own ([`Self::owned_crds`]):
    /// only a CRD the installed bundle itself ships and no other CSV of the cluster owns or
    /// requires. A CSV's `owned` list is the bundle author's claim, not proof: a CSV may claim
    /// another operator's CRD (`certificates.cert-manager.io`), or a name that is no CRD name
    /// at all. What the bundle shipped is what OLM applied for it: the steps of the namespace's
    /// InstallPlans that resolve one of the package's CSVs (OLM's `resolver.NewStepsFromBundle`
    /// makes a step of every object of the bundle it unpacked from the catalog); when OLM has
    /// deleted them all (it keeps a namespace's newest five), the bundle's CRD manifests read
    /// from the catalog by the caller ([`Found::bundle_crds`]). The rest is kept, each with
    /// why; both lists sorted.
    pub fn deletable_crds(&self, found: &Found) -> (Vec<String>, Vec<KeptCrd>) {
        let csvs = self.package_csvs(found.subscription.as_ref(), &found.csvs);
        let ours: BTreeSet<&str> = csvs.iter().map(|c| s(c, "/metadata/name")).collect();
        let steps = Self::plan_steps(found, &csvs);
        // A step OLM carried out: `Created`, or `Present` when the CRD was there and OLM
        // updated it (an upgrade's CRD steps are all `Present`); catalog/operator.go ::
        // ExecutePlan. Without steps, the bundle read from the catalog, if it was.
        let from_bundle = found.bundle_crds.as_ref().filter(|_| steps.is_empty());
        let shipped: BTreeSet<&str> = match from_bundle {
            Some(b) => b.names.iter().map(String::as_str).collect(),
            None => steps
                .iter()
                .filter(|step| {
                    s(step, "/resource/kind") == "CustomResourceDefinition"
                        && matches!(s(step, "/status"), "Created" | "Present")
                })
                .map(|step| s(step, "/resource/name"))
                .collect(),
        };
        let crd_of = |name: &str| found.crds.iter().find(|c| s(c, "/metadata/name") == name);
        let (mut delete, mut kept) = (Vec::new(), Vec::new());
        for name in Self::owned_crds(&csvs) {
            let keep = |why: String| KeptCrd {
                name: name.clone(),
                why,
            };
            if let Err(e) = crate::names::check(crate::names::Rule::Subdomain, "the name", &name) {
                kept.push(keep(format!("not a CRD name ({e})")));
                continue;
            }
            let csv_list = ours.iter().copied().collect::<Vec<_>>().join(", ");
            if let Some(b) = from_bundle {
                if !shipped.contains(name.as_str()) {
                    kept.push(keep(format!(
                        "the package's bundle does not ship it: {} has no CRD manifest of that name",
                        b.from
                    )));
                    continue;
                }
            } else if steps.is_empty() {
                // OLM deletes all but the newest InstallPlans of a namespace (catalog/
                // operator.go :: gcInstallPlans, maxInstallPlanCount 5): nothing says what the
                // bundle shipped, so nothing is taken on the CSV's word.
                kept.push(keep(format!(
                    "no InstallPlan of namespace {} is left for {csv_list} (OLM keeps only a namespace's newest) and the bundle could not be read from the catalog, so nothing shows that the package's bundle shipped it; if it is the package's own, delete it with kubectl delete crd {name}",
                    self.namespace
                )));
                continue;
            } else if !shipped.contains(name.as_str()) {
                kept.push(keep(format!(
                    "the package's bundle does not ship it: no InstallPlan of namespace {} created or updated it for {csv_list}",
                    self.namespace
                )));
                continue;
            }
            // Another installer's marks: OLM takes over a CRD a bundle ships that is already
            // there (a Present step), whoever made it.
            if let Some(crd) = crd_of(&name) {
                let release = (
                    s(crd, "/metadata/annotations/meta.helm.sh~1release-namespace"),
                    s(crd, "/metadata/annotations/meta.helm.sh~1release-name"),
                );
                let manager = s(crd, "/metadata/labels/app.kubernetes.io~1managed-by");
                if !release.1.is_empty() {
                    kept.push(keep(format!(
                        "Helm's release {}/{} manages it (meta.helm.sh/release-name)",
                        release.0, release.1
                    )));
                    continue;
                }
                if !manager.is_empty() && !manager.eq_ignore_ascii_case("olm") {
                    kept.push(keep(format!(
                        "{manager} manages it (app.kubernetes.io/managed-by)"
                    )));
                    continue;
                }
            }
            let others: Vec<String> = found
                .cluster_csvs
                .iter()
                .filter(|c| {
                    !(s(c, "/metadata/namespace") == self.namespace
                        && ours.contains(s(c, "/metadata/name")))
                })
                .filter_map(|c| {
                    let how = ["owned", "required"].into_iter().find(|list| {
                        c.pointer(&format!("/spec/customresourcedefinitions/{list}"))
                            .and_then(Value::as_array)
                            .is_some_and(|a| a.iter().any(|d| s(d, "/name") == name))
                    })?;
                    Some(format!(
                        "{} {}/{}",
                        if how == "owned" {
                            "owned by"
                        } else {
                            "required by"
                        },
                        s(c, "/metadata/namespace"),
                        s(c, "/metadata/name")
                    ))
                })
                .collect();
            if !others.is_empty() {
                kept.push(keep(format!("also {}", others.join(", "))));
                continue;
            }
            delete.push(name);
        }
        (delete, kept)
    }

    /// The steps of the namespace's InstallPlans that resolve one of the package's `csvs`.
    fn plan_steps<'a>(found: &'a Found, csvs: &[&Value]) -> Vec<&'a Value> {
        let ours: BTreeSet<&str> = csvs.iter().map(|c| s(c, "/metadata/name")).collect();
        found
            .install_plans
            .iter()
            .filter_map(|p| p.pointer("/status/plan").and_then(Value::as_array))
            .flatten()
            .filter(|step| ours.contains(s(step, "/resolving")))
            .collect()
    }

    /// Whether `--delete-crds` must read the installed bundle from the catalog
    /// ([`Found::bundle_crds`]): no InstallPlan step is left to say what it shipped, and one
    /// of the package's CSVs owns a CRD.
    pub fn needs_bundle(&self, found: &Found) -> bool {
        let csvs = self.package_csvs(found.subscription.as_ref(), &found.csvs);
        self.delete_crds
            && Self::plan_steps(found, &csvs).is_empty()
            && !Self::owned_crds(&csvs).is_empty()
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
        let (crds, kept) = if self.delete_crds {
            self.deletable_crds(found)
        } else {
            (Self::owned_crds(&csvs), Vec::new())
        };
        let ours = |crd: &Value| crds.iter().any(|n| n == s(crd, "/metadata/name"));
        if self.delete_crds {
            for k in &kept {
                notes.push(format!("CRD {} kept: {}", k.name, k.why));
            }
            let mut crs = Vec::new();
            for (crd, items) in found.custom_resources.iter().filter(|(c, _)| ours(c)) {
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
            for (_, items) in found.custom_resources.iter().filter(|(c, _)| ours(c)) {
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
        // The one-bundle catalog `install --bundle` made serves nothing else: it goes with the
        // Subscription, as operator-sdk's `cleanup` deletes the CatalogSource `run bundle` made
        // (internal/olm/operator/uninstall.go, `Uninstall.Run`).
        let one_bundle = found.catalog_source.as_ref().is_some_and(|cs| {
            s(cs, "/spec/publisher") == PUBLISHER
                && cs
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(super::one_bundle::BUNDLE_ANNOTATION))
                    .is_some()
        });
        if self.delete_catalog_source || one_bundle {
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
            install_plans: vec![plan(
                "p.v1.1.0",
                &["widgets.example.com", "gadgets.example.com"],
            )],
            cluster_csvs: Vec::new(),
            crds: Vec::new(),
            bundle_crds: None,
        }
    }

    #[test]
    fn without_install_plans_the_bundle_read_from_the_catalog_decides() {
        let u = Uninstall {
            package: "p".into(),
            subscription: None,
            namespace: "operators".into(),
            delete_crds: true,
            delete_catalog_source: false,
        };
        let mut f = found();
        for c in &mut f.csvs[..2] {
            c["spec"]["customresourcedefinitions"]["owned"] =
                json!([{"name": "widgets.example.com"}, {"name": "certificates.cert-manager.io"}]);
        }
        // Steps are there: they decide, whatever was read.
        f.bundle_crds = Some(BundleCrds {
            from: "bundle b (catalog c)".into(),
            names: ["certificates.cert-manager.io".to_string()].into(),
        });
        assert!(!u.needs_bundle(&f));
        assert_eq!(u.deletable_crds(&f).0, ["widgets.example.com"]);
        // None left: the bundle's manifests.
        f.install_plans.clear();
        assert!(u.needs_bundle(&f));
        f.bundle_crds = Some(BundleCrds {
            from: "bundle b (catalog c)".into(),
            names: ["widgets.example.com".to_string()].into(),
        });
        let (delete, kept) = u.deletable_crds(&f);
        assert_eq!(delete, ["widgets.example.com"]);
        assert_eq!(
            kept,
            [KeptCrd {
                name: "certificates.cert-manager.io".into(),
                why: "the package's bundle does not ship it: bundle b (catalog c) has no CRD manifest of that name".into()
            }]
        );
        // Nothing read: nothing deleted.
        f.bundle_crds = None;
        let (delete, kept) = u.deletable_crds(&f);
        assert!(delete.is_empty());
        assert!(
            kept.iter()
                .all(|k| k.why.contains("could not be read from the catalog"))
        );
    }

    /// An InstallPlan that created these CRDs for `csv` (and its CSV).
    fn plan(csv: &str, crds: &[&str]) -> Value {
        plan_with(csv, crds, "Created")
    }

    /// An InstallPlan whose CRD steps for `csv` ended `status`.
    fn plan_with(csv: &str, crds: &[&str], status: &str) -> Value {
        let mut steps = vec![json!({"resolving": csv, "status": "Created", "resource": {
            "kind": "ClusterServiceVersion", "name": csv}})];
        for c in crds {
            steps.push(json!({"resolving": csv, "status": status, "resource": {
                "kind": "CustomResourceDefinition", "name": c}}));
        }
        json!({"status": {"plan": steps}})
    }

    #[test]
    fn crds_are_kept_without_an_installplan_that_carried_them_out_or_when_helm_manages_them() {
        let mut f = found();
        f.csvs = vec![json!({"metadata": {"name": "p.v1.1.0"},
            "spec": {"customresourcedefinitions": {"owned": [
                {"name": "widgets.example.com"}, {"name": "gadgets.example.com"},
                {"name": "gizmos.example.com"}, {"name": "helmed.example.com"}]}}})];
        // Gone: OLM collected the plans.
        f.install_plans = Vec::new();
        let (delete, kept) = u(true, false).deletable_crds(&f);
        assert!(delete.is_empty());
        assert_eq!(kept.len(), 4);
        assert!(kept[0].why.starts_with("no InstallPlan of namespace operators is left for p.v1.1.0 (OLM keeps only a namespace's newest)"), "{}", kept[0].why);
        assert!(
            kept[0]
                .why
                .ends_with("delete it with kubectl delete crd gadgets.example.com")
        );
        // An upgrade's steps are Present (OLM updated what was there); a step never carried
        // out proves nothing; Helm's CRD stays even when the bundle shipped it too.
        f.install_plans = vec![
            plan_with(
                "p.v1.1.0",
                &["widgets.example.com", "helmed.example.com"],
                "Present",
            ),
            plan_with("p.v1.1.0", &["gadgets.example.com"], "Unknown"),
        ];
        f.crds = vec![
            json!({"metadata": {"name": "widgets.example.com", "labels": {"app.kubernetes.io/managed-by": "olm"}}}),
            json!({"metadata": {"name": "helmed.example.com", "labels": {"app.kubernetes.io/managed-by": "Helm"},
                "annotations": {"meta.helm.sh/release-name": "cm", "meta.helm.sh/release-namespace": "tools"}}}),
        ];
        let (delete, kept) = u(true, false).deletable_crds(&f);
        assert_eq!(delete, ["widgets.example.com"]);
        let why: Vec<(&str, &str)> = kept
            .iter()
            .map(|k| (k.name.as_str(), k.why.as_str()))
            .collect();
        assert_eq!(
            why,
            [
                (
                    "gadgets.example.com",
                    "the package's bundle does not ship it: no InstallPlan of namespace operators created or updated it for p.v1.1.0"
                ),
                (
                    "gizmos.example.com",
                    "the package's bundle does not ship it: no InstallPlan of namespace operators created or updated it for p.v1.1.0"
                ),
                (
                    "helmed.example.com",
                    "Helm's release tools/cm manages it (meta.helm.sh/release-name)"
                ),
            ]
        );
        f.crds[1]["metadata"]["annotations"] = json!({});
        let (_, kept) = u(true, false).deletable_crds(&f);
        assert_eq!(
            kept[2].why,
            "Helm manages it (app.kubernetes.io/managed-by)"
        );
    }

    #[test]
    fn only_crds_the_bundle_ships_and_nobody_else_uses_are_deleted() {
        let mut f = found();
        let claims = [
            "widgets.example.com",
            "certificates.cert-manager.io",
            "../../../../api/v1/namespaces/kube-system/secrets/x",
            "a?b=c#d",
            "shared.example.com",
            "needed.example.com",
            "unshipped.example.com",
        ];
        let owned: Vec<Value> = claims.iter().map(|n| json!({"name": n})).collect();
        f.csvs = vec![json!({"metadata": {"name": "p.v1.1.0"},
            "spec": {"customresourcedefinitions": {"owned": owned}}})];
        // The InstallPlan created what the bundle shipped; a step of another CSV counts for
        // nothing, and neither does cert-manager's CRD that the plan did not create.
        f.install_plans = vec![
            plan(
                "p.v1.1.0",
                &[
                    "widgets.example.com",
                    "shared.example.com",
                    "needed.example.com",
                ],
            ),
            plan("other.v1", &["unshipped.example.com"]),
        ];
        f.cluster_csvs = vec![
            json!({"metadata": {"name": "p.v1.1.0", "namespace": "operators"},
                "spec": {"customresourcedefinitions": {"owned": [{"name": "widgets.example.com"}]}}}),
            json!({"metadata": {"name": "cert-manager.v1", "namespace": "cert-manager"},
                "spec": {"customresourcedefinitions": {"owned": [{"name": "certificates.cert-manager.io"}]}}}),
            // The same package in another namespace owns it too.
            json!({"metadata": {"name": "p.v1.1.0", "namespace": "team-b"},
                "spec": {"customresourcedefinitions": {"owned": [{"name": "shared.example.com"}]}}}),
            json!({"metadata": {"name": "user.v2", "namespace": "apps"},
                "spec": {"customresourcedefinitions": {"required": [{"name": "needed.example.com"}]}}}),
        ];
        let (delete, kept) = u(true, false).deletable_crds(&f);
        assert_eq!(delete, ["widgets.example.com"]);
        let why: Vec<(&str, &str)> = kept
            .iter()
            .map(|k| (k.name.as_str(), k.why.as_str()))
            .collect();
        assert_eq!(
            why,
            [
                (
                    "../../../../api/v1/namespaces/kube-system/secrets/x",
                    "not a CRD name (the name \"../../../../api/v1/namespaces/kube-system/secrets/x\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))"
                ),
                (
                    "a?b=c#d",
                    "not a CRD name (the name \"a?b=c#d\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))"
                ),
                (
                    "certificates.cert-manager.io",
                    "the package's bundle does not ship it: no InstallPlan of namespace operators created or updated it for p.v1.1.0"
                ),
                ("needed.example.com", "also required by apps/user.v2"),
                ("shared.example.com", "also owned by team-b/p.v1.1.0"),
                (
                    "unshipped.example.com",
                    "the package's bundle does not ship it: no InstallPlan of namespace operators created or updated it for p.v1.1.0"
                ),
            ]
        );
        // The plan deletes the one CRD, and only its custom resources.
        f.custom_resources = vec![
            (
                json!({"metadata": {"name": "widgets.example.com"}, "spec": {"names": {"plural": "widgets"}}}),
                vec![
                    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "apps"}}),
                ],
            ),
            (
                json!({"metadata": {"name": "certificates.cert-manager.io"}, "spec": {"names": {"plural": "certificates"}}}),
                vec![
                    json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c", "namespace": "kube-system"}}),
                ],
            ),
        ];
        let (phases, notes) = u(true, false).plan(&f);
        assert_eq!(
            described(&phases),
            [
                vec!["Subscription operators/p"],
                vec!["Widget apps/w"],
                vec!["ClusterServiceVersion operators/p.v1.1.0"],
                vec!["CustomResourceDefinition widgets.example.com"],
            ]
        );
        assert_eq!(notes.len(), 6, "{notes:?}");
        assert!(
            notes
                .iter()
                .all(|n| n.starts_with("CRD ") && n.contains(" kept: ")),
            "{notes:?}"
        );
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
    fn a_one_bundle_catalog_goes_without_the_flag_and_only_it() {
        let mut f = found();
        let cs = |annotations: Value| {
            json!({"metadata": {"name": "p-catalog", "namespace": "olm", "annotations": annotations},
            "spec": {"publisher": PUBLISHER}})
        };
        f.catalog_source = Some(cs(
            json!({super::super::one_bundle::BUNDLE_ANNOTATION: "reg/p-bundle:v1.0.0"}),
        ));
        let (phases, notes) = u(false, false).plan(&f);
        assert_eq!(
            described(&phases).last().unwrap(),
            &vec!["CatalogSource olm/p-catalog"]
        );
        assert!(
            notes.iter().all(|n| !n.contains("CatalogSource")),
            "{notes:?}"
        );
        // One `install --catalog` made stays without --delete-catalog-source.
        f.catalog_source = Some(cs(json!({})));
        let (phases, _) = u(false, false).plan(&f);
        assert!(
            phases.iter().flatten().all(|d| d.kind != "CatalogSource"),
            "{phases:?}"
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
