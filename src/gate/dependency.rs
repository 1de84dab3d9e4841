//! A plan's new dependencies: the packages an InstallPlan installs that its namespace did not
//! have, and the requirement of the plan that asked for each.
//!
//! OLM's `step_resolver.go::ResolveSteps` adds a Subscription step (named
//! `<package>-<channel>-<catalog>-<catalog namespace>`, with the resolved CSV as startingCSV)
//! for every operator of the resolution that no Subscription of the namespace matches: a
//! dependency its resolver pulled in. The step is what tells a new package from an upgrade.

use crate::bundle::load::{list_at, str_at};
use crate::fbc::node::Node;

/// A package the plan installs through a Subscription step of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDependency {
    /// The CSV the step resolves (`resolving`).
    pub csv: String,
    /// The Subscription OLM creates (`resource.name`).
    pub subscription: String,
    /// Its `spec.name`, when the manifest is there to read.
    pub package: Option<String>,
    /// Its `spec.channel`.
    pub channel: Option<String>,
    /// `NAMESPACE/NAME` of its catalog (`resource.sourceNamespace`/`sourceName`, else the
    /// manifest's `spec.sourceNamespace`/`spec.source`).
    pub catalog: Option<String>,
    /// What in the plan asked for the package: `olm.package.required` properties of the
    /// plan's other CSVs naming it, as `CSV (olm.package.required PACKAGE RANGE)`.
    pub required_by: Vec<String>,
}

impl NewDependency {
    /// One sentence: what is installed, from where, and why.
    pub fn describe(&self, plan: &str, namespace: &str) -> String {
        let package = self.package.as_deref().unwrap_or("(unknown)");
        let mut from = Vec::new();
        if let Some(c) = &self.channel {
            from.push(format!("channel {c}"));
        }
        if let Some(c) = &self.catalog {
            from.push(format!("catalog {c}"));
        }
        let from = if from.is_empty() {
            String::new()
        } else {
            format!(", {}", from.join(", "))
        };
        let why = if self.required_by.is_empty() {
            "OLM pulled it in to satisfy a requirement of the plan".to_string()
        } else {
            format!("required by {}", self.required_by.join(", "))
        };
        format!(
            "InstallPlan {plan} installs {} of package {package}, which no Subscription of namespace {namespace} had ({why}); OLM creates Subscription {}{from}",
            self.csv, self.subscription
        )
    }
}

/// The plan's new dependencies: one per Subscription step, in step order.
pub fn new_dependencies(plan: &Node) -> Vec<NewDependency> {
    let steps = list_at(plan, &["status", "plan"]);
    let required = package_requirements(steps);
    steps
        .iter()
        .filter(|s| str_at(s, &["resource", "kind"]) == Some("Subscription"))
        .filter_map(|s| {
            let csv = str_at(s, &["resolving"])?.to_string();
            let manifest = manifest(s);
            let spec = |k: &str| {
                manifest
                    .as_ref()
                    .and_then(|m| str_at(m, &["spec", k]))
                    .filter(|v| !v.is_empty())
                    .map(str::to_string)
            };
            let package = spec("name");
            let catalog = match (
                str_at(s, &["resource", "sourceNamespace"]).filter(|v| !v.is_empty()),
                str_at(s, &["resource", "sourceName"]).filter(|v| !v.is_empty()),
            ) {
                (Some(ns), Some(n)) => Some(format!("{ns}/{n}")),
                _ => match (spec("sourceNamespace"), spec("source")) {
                    (Some(ns), Some(n)) => Some(format!("{ns}/{n}")),
                    _ => None,
                },
            };
            let required_by = required
                .iter()
                .filter(|(by, p, _)| Some(p) == package.as_ref() && *by != csv)
                .map(|(by, p, range)| format!("{by} (olm.package.required {p} {range})"))
                .collect();
            Some(NewDependency {
                subscription: str_at(s, &["resource", "name"])
                    .unwrap_or_default()
                    .to_string(),
                csv,
                package,
                channel: spec("channel"),
                catalog,
                required_by,
            })
        })
        .collect()
}

/// The step's manifest, parsed (inline, or the reference to an unpacked bundle).
fn manifest(step: &Node) -> Option<Node> {
    let text = str_at(step, &["resource", "manifest"])?;
    let mut parsed = None;
    crate::fbc::json::parse_object_stream(text, |n| {
        parsed.get_or_insert(n);
    })
    .ok()?;
    parsed
}

/// `(csv, package, versionRange)` of every `olm.package.required` property the plan's CSV steps
/// carry (OLM writes the bundle's properties into a reference manifest's `properties`), each
/// once, in step order.
fn package_requirements(steps: &[Node]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for s in steps {
        if str_at(s, &["resource", "kind"]) != Some("ClusterServiceVersion") {
            continue;
        }
        let Some(csv) = str_at(s, &["resolving"]) else {
            continue;
        };
        let Some(props) = manifest(s)
            .as_ref()
            .and_then(|m| str_at(m, &["properties"]).map(str::to_string))
        else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&props) else {
            continue;
        };
        for p in v["properties"].as_array().into_iter().flatten() {
            if p["type"] != "olm.package.required" {
                continue;
            }
            let (Some(name), range) = (
                p["value"]["packageName"].as_str(),
                p["value"]["versionRange"].as_str().unwrap_or(""),
            ) else {
                continue;
            };
            let r = (csv.to_string(), name.to_string(), range.to_string());
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Node {
        crate::gate::objects::example_objects().install_plans[0]
            .node
            .as_ref()
            .clone()
    }

    #[test]
    fn the_example_plans_dependency_and_what_asked_for_it() {
        let deps = new_dependencies(&plan());
        assert_eq!(
            deps,
            [NewDependency {
                csv: "acme-metrics-operator.v0.3.1".into(),
                subscription: "acme-metrics-operator-stable-acme-catalog-olm".into(),
                package: Some("acme-metrics-operator".into()),
                channel: Some("stable".into()),
                catalog: Some("olm/acme-catalog".into()),
                required_by: vec![
                    "acme-db-operator.v1.5.0 (olm.package.required acme-metrics-operator >=0.3.0 <0.4.0)"
                        .into()
                ],
            }]
        );
        assert_eq!(
            deps[0].describe("install-7xk2p", "acme-system"),
            "InstallPlan install-7xk2p installs acme-metrics-operator.v0.3.1 of package acme-metrics-operator, which no Subscription of namespace acme-system had (required by acme-db-operator.v1.5.0 (olm.package.required acme-metrics-operator >=0.3.0 <0.4.0)); OLM creates Subscription acme-metrics-operator-stable-acme-catalog-olm, channel stable, catalog olm/acme-catalog"
        );
    }

    #[test]
    fn a_step_without_a_manifest_still_names_its_csv_and_subscription() {
        let text = "status:\n  plan:\n  - resolving: b.v1\n    resource: {kind: Subscription, name: b-stable-c-olm, manifest: ''}\n";
        let n = crate::fbc::yaml::first_document(text)
            .expect("YAML")
            .expect("a document");
        let deps = new_dependencies(&n);
        assert_eq!(deps.len(), 1);
        assert_eq!(
            deps[0].describe("p", "ns"),
            "InstallPlan p installs b.v1 of package (unknown), which no Subscription of namespace ns had (OLM pulled it in to satisfy a requirement of the plan); OLM creates Subscription b-stable-c-olm"
        );
    }
}
