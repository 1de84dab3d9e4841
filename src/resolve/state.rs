//! The cluster objects OLM's resolver reads for a namespace (`step_resolver.go`,
//! `source_csvs.go`): Subscriptions, ClusterServiceVersions, OperatorGroups and CatalogSources,
//! the fields it uses taken from the objects as JSON.

use serde_json::Value;

/// `operators.coreos.com/v1alpha1` Subscription.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscription {
    pub name: String,
    pub namespace: String,
    /// `spec.name`.
    pub package: String,
    /// `spec.channel` ("" for the default, and in the resolver for every channel).
    pub channel: String,
    /// `spec.source`.
    pub catalog: String,
    /// `spec.sourceNamespace`.
    pub catalog_namespace: String,
    /// `spec.startingCSV`.
    pub starting_csv: String,
    /// `spec.installPlanApproval`.
    pub approval: String,
    /// `status.installedCSV`.
    pub installed_csv: String,
    /// `status.currentCSV`.
    pub current_csv: String,
    /// `status.state` (`UpgradePending`, `AtLatestKnown`, ...).
    pub state: String,
    /// Whether `status.installPlanRef` is set.
    pub has_install_plan: bool,
}

/// An owned or required API of a CSV: (name, group, version, kind) as
/// `newEntryFromV1Alpha1CSV` reads `customresourcedefinitions` and `apiservicedefinitions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsvApi {
    /// For a CRD its name `plural.group`; for an APIService its `name` (the plural).
    pub name: String,
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// `operators.coreos.com/v1alpha1` ClusterServiceVersion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csv {
    pub name: String,
    pub namespace: String,
    /// `spec.version` as written.
    pub version: String,
    /// `spec.replaces`.
    pub replaces: String,
    /// Owned CRDs, then owned APIServices.
    pub owned_crds: Vec<CsvApi>,
    pub owned_apis: Vec<CsvApi>,
    pub required_crds: Vec<CsvApi>,
    pub required_apis: Vec<CsvApi>,
    /// The `operatorframework.io/properties` annotation.
    pub properties: Option<String>,
    /// `IsCopied()`: a copy OLM made into a target namespace.
    pub copied: bool,
    /// `status.phase`.
    pub phase: String,
}

/// `operators.coreos.com/v1` OperatorGroup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorGroup {
    pub name: String,
    pub namespace: String,
    /// `olm.operatorframework.io/exclude-global-namespace-resolution: "true"`.
    pub exclude_global: bool,
}

/// `operators.coreos.com/v1alpha1` CatalogSource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogSource {
    pub name: String,
    pub namespace: String,
    /// `spec.priority` (0 when absent).
    pub priority: i64,
    /// `spec.image`.
    pub image: String,
}

/// The objects of a cluster (or of files standing for one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterState {
    pub subscriptions: Vec<Subscription>,
    pub csvs: Vec<Csv>,
    pub operator_groups: Vec<OperatorGroup>,
    pub catalog_sources: Vec<CatalogSource>,
}

fn s(v: &Value, path: &[&str]) -> String {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(n) => cur = n,
            None => return String::new(),
        }
    }
    cur.as_str().unwrap_or_default().to_string()
}

fn apis(v: &Value, path: &[&str], crd: bool) -> Vec<CsvApi> {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(n) => cur = n,
            None => return Vec::new(),
        }
    }
    cur.as_array()
        .map(|items| {
            items
                .iter()
                .map(|d| CsvApi {
                    name: s(d, &["name"]),
                    group: if crd { String::new() } else { s(d, &["group"]) },
                    version: s(d, &["version"]),
                    kind: s(d, &["kind"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

impl ClusterState {
    /// The Subscriptions of `namespace`, in input order.
    pub fn subscriptions_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Subscription> {
        self.subscriptions
            .iter()
            .filter(move |s| s.namespace == namespace)
    }

    /// The state after `o` is created or, when an object of its kind, namespace and name is
    /// there, updated: the old one is replaced, except that a Subscription keeps its status
    /// (an update of the spec leaves OLM's status as it was). Returns whether it was kept.
    pub fn apply(&mut self, o: &Value) -> bool {
        let name = s(o, &["metadata", "name"]);
        let namespace = s(o, &["metadata", "namespace"]);
        let same = |n: &str, ns: &str| n == name && ns == namespace;
        let mut kept_status = None;
        match s(o, &["kind"]).as_str() {
            "Subscription" => {
                if let Some(i) = self
                    .subscriptions
                    .iter()
                    .position(|x| same(&x.name, &x.namespace))
                {
                    kept_status = Some(self.subscriptions.remove(i));
                }
            }
            "ClusterServiceVersion" => self.csvs.retain(|x| !same(&x.name, &x.namespace)),
            "OperatorGroup" => self
                .operator_groups
                .retain(|x| !same(&x.name, &x.namespace)),
            "CatalogSource" => self
                .catalog_sources
                .retain(|x| !same(&x.name, &x.namespace)),
            _ => {}
        }
        let kept = self.add(o);
        if let (true, Some(old), Some(new)) = (kept, kept_status, self.subscriptions.last_mut()) {
            new.installed_csv = old.installed_csv;
            new.current_csv = old.current_csv;
            new.state = old.state;
            new.has_install_plan = old.has_install_plan;
        }
        kept
    }

    /// Adds an object (a Kubernetes object as JSON); other kinds are ignored. Returns
    /// whether it was kept.
    pub fn add(&mut self, o: &Value) -> bool {
        let api = s(o, &["apiVersion"]);
        let group = api.rsplit_once('/').map_or("", |(g, _)| g);
        if group != "operators.coreos.com" {
            return false;
        }
        let name = s(o, &["metadata", "name"]);
        let namespace = s(o, &["metadata", "namespace"]);
        match s(o, &["kind"]).as_str() {
            "Subscription" => self.subscriptions.push(Subscription {
                name,
                namespace,
                package: s(o, &["spec", "name"]),
                channel: s(o, &["spec", "channel"]),
                catalog: s(o, &["spec", "source"]),
                catalog_namespace: s(o, &["spec", "sourceNamespace"]),
                starting_csv: s(o, &["spec", "startingCSV"]),
                approval: s(o, &["spec", "installPlanApproval"]),
                installed_csv: s(o, &["status", "installedCSV"]),
                current_csv: s(o, &["status", "currentCSV"]),
                state: s(o, &["status", "state"]),
                has_install_plan: o.pointer("/status/installPlanRef").is_some_and(|r| !r.is_null()),
            }),
            "ClusterServiceVersion" => {
                let copied = s(o, &["status", "reason"]) == "Copied"
                    || o.pointer("/metadata/labels/olm.copiedFrom").is_some();
                self.csvs.push(Csv {
                    name,
                    namespace,
                    version: match o.pointer("/spec/version") {
                        Some(Value::String(v)) => v.clone(),
                        _ => String::new(),
                    },
                    replaces: s(o, &["spec", "replaces"]),
                    owned_crds: apis(o, &["spec", "customresourcedefinitions", "owned"], true),
                    owned_apis: apis(o, &["spec", "apiservicedefinitions", "owned"], false),
                    required_crds: apis(
                        o,
                        &["spec", "customresourcedefinitions", "required"],
                        true,
                    ),
                    required_apis: apis(o, &["spec", "apiservicedefinitions", "required"], false),
                    properties: o
                        .pointer("/metadata/annotations/operatorframework.io~1properties")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    copied,
                    phase: s(o, &["status", "phase"]),
                })
            }
            "OperatorGroup" => self.operator_groups.push(OperatorGroup {
                name,
                namespace,
                exclude_global: o
                    .pointer(
                        "/metadata/annotations/olm.operatorframework.io~1exclude-global-namespace-resolution",
                    )
                    .and_then(Value::as_str)
                    == Some("true"),
            }),
            "CatalogSource" => self.catalog_sources.push(CatalogSource {
                name,
                namespace,
                priority: o
                    .pointer("/spec/priority")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                image: s(o, &["spec", "image"]),
            }),
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn apply_replaces_an_object_of_the_same_name_and_a_subscription_keeps_its_status() {
        let mut st = ClusterState::default();
        st.add(
            &json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": "db", "namespace": "team"},
            "spec": {"name": "db", "channel": "stable", "source": "c", "sourceNamespace": "olm"},
            "status": {"installedCSV": "db.v1", "currentCSV": "db.v1", "state": "AtLatestKnown"}}),
        );
        st.add(
            &json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
            "metadata": {"name": "og", "namespace": "team"}}),
        );
        assert!(
            st.apply(&json!({"apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription", "metadata": {"name": "db", "namespace": "team"},
            "spec": {"name": "db", "channel": "fast", "source": "c", "sourceNamespace": "olm"}}))
        );
        assert!(st.apply(&json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
            "metadata": {"name": "og", "namespace": "team",
                "annotations": {"olm.operatorframework.io/exclude-global-namespace-resolution": "true"}}})));
        assert_eq!(st.subscriptions.len(), 1);
        let sub = &st.subscriptions[0];
        assert_eq!(
            (
                sub.channel.as_str(),
                sub.installed_csv.as_str(),
                sub.state.as_str()
            ),
            ("fast", "db.v1", "AtLatestKnown")
        );
        assert_eq!(st.operator_groups.len(), 1);
        assert!(st.operator_groups[0].exclude_global);
        // Another name is another object; other groups are not kept.
        assert!(
            st.apply(&json!({"apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription", "metadata": {"name": "db", "namespace": "other"},
            "spec": {"name": "db"}}))
        );
        assert_eq!(st.subscriptions.len(), 2);
        assert!(!st.apply(&json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "team"}})));
    }
}
