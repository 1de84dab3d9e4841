//! Whether a kind is namespaced, as the API server serves it: what decides whether a request
//! for an object carries a namespace, whatever the object's `metadata.namespace` says (the API
//! server ignores the field for a cluster-scoped resource; operator-controller's renderer sets
//! it on webhook configurations).
//!
//! The built-in kinds are Kubernetes 1.34's (`kubectl api-resources`); a CRD the objects
//! include gives its own kinds' scope; a few add-on CRDs bundles ship objects of have theirs
//! (cert-manager, Prometheus Operator, the OpenShift console, the VPA).

use std::collections::HashMap;

use serde_json::Value;

/// The API groups Kubernetes serves itself: a kind of these not in [`CLUSTER_SCOPED`] is
/// namespaced.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

/// The cluster-scoped kinds of the built-in groups, and of the add-on groups below.
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "ComponentStatus"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "TokenReview"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("cert-manager.io", "ClusterIssuer"),
];

/// Add-on groups whose scopes are known: every kind of the group namespaced unless
/// [`CLUSTER_SCOPED`] names it (`true`), or every kind cluster-scoped (`false`).
const ADD_ON_GROUPS: &[(&str, bool)] = &[
    ("cert-manager.io", true),
    ("acme.cert-manager.io", true),
    ("monitoring.coreos.com", true),
    ("autoscaling.k8s.io", true),
    ("console.openshift.io", false),
];

/// The scopes of the kinds of a set of objects.
#[derive(Debug, Default)]
pub struct Scopes {
    /// (group, kind) → namespaced, from the CRDs among the objects.
    crds: HashMap<(String, String), bool>,
}

impl Scopes {
    /// The scopes the CRDs among `objects` define.
    pub fn of(objects: &[Value]) -> Scopes {
        let mut crds = HashMap::new();
        for o in objects {
            if o["kind"] == "CustomResourceDefinition" {
                let spec = &o["spec"];
                if let (Some(g), Some(k), Some(scope)) = (
                    spec["group"].as_str(),
                    spec["names"]["kind"].as_str(),
                    spec["scope"].as_str(),
                ) {
                    crds.insert((g.to_string(), k.to_string()), scope == "Namespaced");
                }
            }
        }
        Scopes { crds }
    }

    /// Adds `other`'s CRDs (they win).
    pub fn extend(&mut self, other: Scopes) {
        self.crds.extend(other.crds);
    }

    /// Whether kind `kind` of API group `group` is namespaced, when known.
    pub fn namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        if let Some(n) = self.crds.get(&(group.to_string(), kind.to_string())) {
            return Some(*n);
        }
        if CLUSTER_SCOPED.contains(&(group, kind)) {
            return Some(false);
        }
        if BUILT_IN_GROUPS.contains(&group) {
            return Some(true);
        }
        ADD_ON_GROUPS
            .iter()
            .find(|(g, _)| *g == group)
            .map(|(_, namespaced)| *namespaced)
    }

    /// The namespace a request about `object` carries: its own for a namespaced kind, none for
    /// a cluster-scoped one; for a kind of unknown scope, what the object says.
    pub fn request_namespace<'a>(&self, object: &'a Value) -> &'a str {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let kind = object["kind"].as_str().unwrap_or_default();
        match self.namespaced(group, kind) {
            Some(false) => "",
            _ => object["metadata"]["namespace"].as_str().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_scope_is_the_resources_not_the_objects() {
        let crd = json!({"kind": "CustomResourceDefinition", "spec": {"group": "example.com",
            "names": {"kind": "Widget"}, "scope": "Cluster"}});
        let s = Scopes::of(std::slice::from_ref(&crd));
        let obj = |api: &str, kind: &str| json!({"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "ops"}});
        for (api, kind, ns) in [
            (
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                "",
            ),
            (
                "admissionregistration.k8s.io/v1",
                "MutatingWebhookConfiguration",
                "",
            ),
            ("rbac.authorization.k8s.io/v1", "ClusterRole", ""),
            ("scheduling.k8s.io/v1", "PriorityClass", ""),
            ("console.openshift.io/v1", "ConsoleYAMLSample", ""),
            ("example.com/v1", "Widget", ""),
            ("v1", "ConfigMap", "ops"),
            ("apps/v1", "Deployment", "ops"),
            ("policy/v1", "PodDisruptionBudget", "ops"),
            ("cert-manager.io/v1", "Issuer", "ops"),
            ("monitoring.coreos.com/v1", "ServiceMonitor", "ops"),
            ("autoscaling.k8s.io/v1", "VerticalPodAutoscaler", "ops"),
            // Unknown: as the object says.
            ("other.io/v1", "Thing", "ops"),
        ] {
            assert_eq!(s.request_namespace(&obj(api, kind)), ns, "{kind}");
        }
        assert_eq!(s.namespaced("other.io", "Thing"), None);
    }
}
