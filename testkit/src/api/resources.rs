//! The resources the API serves: the built-in kinds the tests and the product touch, and the
//! resources of every established CustomResourceDefinition in the store. A path to anything
//! else is a 404, as on a real cluster (a client must create a CRD before its resources).
//!
//! Discovery documents (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`) are built from
//! this registry in the legacy (non-aggregated) shape, which client-go's discovery client and
//! kubectl read when the server answers plain `application/json` (cluster.md R8.1;
//! client-go `discovery_client.go :: downloadLegacy, downloadAPIs`).

use serde_json::{Value, json};

/// One version of a custom resource.
#[derive(Debug, Clone)]
pub struct CrdVersion {
    /// The version name.
    pub name: String,
    /// `served`.
    pub served: bool,
    /// `storage`.
    pub storage: bool,
    /// `schema.openAPIV3Schema` (or `Value::Null`).
    pub schema: Value,
    /// `subresources.status` is set.
    pub status: bool,
    /// `deprecated`.
    pub deprecated: bool,
    /// `deprecationWarning`, or the default warning.
    pub warning: Option<String>,
}

/// What the API keeps of a CRD to serve its resources.
#[derive(Debug, Clone)]
pub struct Crd {
    /// `metadata.name`.
    pub name: String,
    /// Every version, in spec order.
    pub versions: Vec<CrdVersion>,
    /// `spec.conversion` (or null).
    pub conversion: Value,
    /// `spec.preserveUnknownFields`.
    pub preserve_unknown_fields: bool,
    /// Being deleted (`metadata.deletionTimestamp` set).
    pub terminating: bool,
}

impl Crd {
    /// The storage version.
    pub fn storage(&self) -> Option<&CrdVersion> {
        self.versions.iter().find(|v| v.storage)
    }

    /// A served version by name.
    pub fn served(&self, name: &str) -> Option<&CrdVersion> {
        self.versions.iter().find(|v| v.name == name && v.served)
    }
}

/// A resource type.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The API group ("" for core).
    pub group: String,
    /// The served versions (one for built-ins).
    pub versions: Vec<String>,
    /// The plural (the path segment).
    pub plural: String,
    /// The singular.
    pub singular: String,
    /// The kind.
    pub kind: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Short names (`kubectl get sub`).
    pub short_names: Vec<String>,
    /// Categories (`kubectl get olm`).
    pub categories: Vec<String>,
    /// The verbs discovery lists.
    pub verbs: Vec<&'static str>,
    /// Has a status subresource.
    pub status: bool,
    /// The CRD behind it, for custom resources.
    pub crd: Option<Crd>,
}

impl Resource {
    /// `plural.group`, or `plural` for the core group (apimachinery
    /// `GroupResource.String`).
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }
}

const ALL: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn builtin(
    group: &str,
    version: &str,
    plural: &str,
    kind: &str,
    namespaced: bool,
    status: bool,
    short: &[&str],
) -> Resource {
    let singular = kind.to_ascii_lowercase();
    Resource {
        group: group.into(),
        versions: vec![version.into()],
        plural: plural.into(),
        singular,
        kind: kind.into(),
        namespaced,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        categories: Vec::new(),
        verbs: ALL.to_vec(),
        status,
        crd: None,
    }
}

/// The built-in resources this double serves (a subset of Kubernetes 1.30: the kinds OLM, the
/// operator, `olmctl install` and kubectl touch in the tests).
pub fn builtins() -> Vec<Resource> {
    let mut v = vec![
        builtin("", "v1", "namespaces", "Namespace", false, true, &["ns"]),
        builtin("", "v1", "configmaps", "ConfigMap", true, false, &["cm"]),
        builtin("", "v1", "secrets", "Secret", true, false, &[]),
        builtin("", "v1", "services", "Service", true, true, &["svc"]),
        builtin(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            true,
            false,
            &["sa"],
        ),
        builtin("", "v1", "pods", "Pod", true, true, &["po"]),
        builtin("", "v1", "events", "Event", true, false, &["ev"]),
        builtin(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            true,
            true,
            &["deploy"],
        ),
        builtin(
            "apps",
            "v1",
            "replicasets",
            "ReplicaSet",
            true,
            true,
            &["rs"],
        ),
        builtin(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            true,
            false,
            &[],
        ),
        builtin(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            true,
            false,
            &["ev"],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "Role",
            true,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            true,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
            false,
            &[],
        ),
        builtin(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            false,
            true,
            &["crd", "crds"],
        ),
    ];
    for (plural, kind) in [
        (
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
        ),
        (
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
        ),
    ] {
        v.push(builtin(
            "admissionregistration.k8s.io",
            "v1",
            plural,
            kind,
            false,
            false,
            &[],
        ));
    }
    for (plural, kind) in [
        ("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
        ("selfsubjectrulesreviews", "SelfSubjectRulesReview"),
    ] {
        let mut r = builtin(
            "authorization.k8s.io",
            "v1",
            plural,
            kind,
            false,
            false,
            &[],
        );
        r.verbs = vec!["create"];
        v.push(r);
    }
    v
}

/// The resource a stored CRD object defines, when its spec is usable.
pub fn from_crd(crd: &Value) -> Option<Resource> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let list = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let versions: Vec<CrdVersion> = spec["versions"]
        .as_array()?
        .iter()
        .map(|v| CrdVersion {
            name: s(&v["name"]),
            served: v["served"].as_bool().unwrap_or(false),
            storage: v["storage"].as_bool().unwrap_or(false),
            schema: v["schema"]["openAPIV3Schema"].clone(),
            status: v["subresources"]["status"].is_object(),
            deprecated: v["deprecated"].as_bool().unwrap_or(false),
            warning: v["deprecationWarning"].as_str().map(str::to_string),
        })
        .collect();
    let plural = s(&names["plural"]);
    if plural.is_empty() || versions.is_empty() {
        return None;
    }
    let status = versions.iter().any(|v| v.status);
    Some(Resource {
        group: s(&spec["group"]),
        versions: versions
            .iter()
            .filter(|v| v.served)
            .map(|v| v.name.clone())
            .collect(),
        singular: match s(&names["singular"]) {
            x if x.is_empty() => s(&names["kind"]).to_ascii_lowercase(),
            x => x,
        },
        kind: s(&names["kind"]),
        namespaced: spec["scope"] == "Namespaced",
        short_names: list(&names["shortNames"]),
        categories: list(&names["categories"]),
        verbs: ALL.to_vec(),
        status,
        plural,
        crd: Some(Crd {
            name: s(&crd["metadata"]["name"]),
            versions,
            conversion: spec["conversion"].clone(),
            preserve_unknown_fields: spec["preserveUnknownFields"].as_bool().unwrap_or(false),
            terminating: crd["metadata"]["deletionTimestamp"].is_string(),
        }),
    })
}

/// `/api`: the legacy group's versions (`APIVersions`).
pub fn api_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
           "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
}

/// `/apis`: every group but the core one (`APIGroupList`), groups in first-seen order.
pub fn api_groups(resources: &[Resource]) -> Value {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in resources.iter().filter(|r| !r.group.is_empty()) {
        let at = match groups.iter().position(|(g, _)| *g == r.group) {
            Some(i) => i,
            None => {
                groups.push((r.group.clone(), Vec::new()));
                groups.len() - 1
            }
        };
        for v in &r.versions {
            if !groups[at].1.contains(v) {
                groups[at].1.push(v.clone());
            }
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .filter(|(_, vs)| !vs.is_empty())
        .map(|(g, vs)| {
            // The preferred version: the CRD's highest priority served version; for the
            // groups here, the first listed (kube-aggregator sorts by version priority).
            let mut sorted = vs.clone();
            sorted.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
            let gv = |v: &String| json!({"groupVersion": format!("{g}/{v}"), "version": v});
            json!({"name": g, "versions": sorted.iter().map(gv).collect::<Vec<_>>(),
                   "preferredVersion": gv(&sorted[0])})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// Kubernetes version priority (apimachinery `version.CompareKubeAwareVersionStrings`): GA >
/// beta > alpha, then the higher major, then the higher minor; other names last.
pub fn version_priority(v: &str) -> (u8, u64, u64) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<u64>() else {
        return (0, 0, 0);
    };
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        return (3, major, 0);
    }
    for (kind, rank) in [("beta", 2), ("alpha", 1)] {
        if let Some(n) = tail.strip_prefix(kind)
            && let Ok(minor) = n.parse::<u64>()
        {
            return (rank, major, minor);
        }
    }
    (0, 0, 0)
}

/// `/api/v1` or `/apis/<group>/<version>` (`APIResourceList`).
pub fn resource_list(resources: &[Resource], group: &str, version: &str) -> Option<Value> {
    let mut out = Vec::new();
    let mut any = false;
    for r in resources
        .iter()
        .filter(|r| r.group == group && r.versions.iter().any(|v| v == version))
    {
        any = true;
        let mut e = json!({
            "name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
            "kind": r.kind, "verbs": r.verbs,
        });
        if !r.short_names.is_empty() {
            e["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            e["categories"] = json!(r.categories);
        }
        out.push(e);
        if r.status {
            out.push(
                json!({"name": format!("{}/status", r.plural), "singularName": "",
                            "namespaced": r.namespaced, "kind": r.kind,
                            "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    any.then(|| json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_priority_orders_as_kubernetes() {
        let mut v = vec!["v1alpha1", "v1", "v2beta1", "v1beta2", "foo", "v10", "v2"];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(
            v,
            ["v10", "v2", "v1", "v2beta1", "v1beta2", "v1alpha1", "foo"]
        );
    }

    #[test]
    fn a_crd_becomes_a_resource() {
        let crd = json!({"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
        "versions": [
            {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
            {"name": "v1alpha1", "served": false, "storage": false}
        ]}});
        let r = from_crd(&crd).expect("resource");
        assert_eq!(
            (
                r.group_resource(),
                r.singular.as_str(),
                r.versions.clone(),
                r.status
            ),
            (
                "widgets.example.com".to_string(),
                "widget",
                vec!["v1".to_string()],
                true
            )
        );
        let list = resource_list(std::slice::from_ref(&r), "example.com", "v1").expect("list");
        assert_eq!(list["resources"][1]["name"], "widgets/status");
        assert!(resource_list(&[r], "example.com", "v1alpha1").is_none());
    }
}
