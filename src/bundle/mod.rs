//! registry+v1 bundles: reading bundle directories, rendering them into FBC, generating them
//! from plain manifests.

pub mod crd;
pub mod csv_types;
pub mod generate;
pub mod gotype;
pub mod load;
pub mod render;
pub mod tree;

/// The kinds operator-registry accepts in a registry+v1 bundle (`supported_resources.go`).
pub const SUPPORTED_KINDS: [&str; 22] = [
    "ClusterServiceVersion",
    "CustomResourceDefinition",
    "Secret",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ServiceAccount",
    "Service",
    "Role",
    "RoleBinding",
    "PrometheusRule",
    "ServiceMonitor",
    "PodDisruptionBudget",
    "PriorityClass",
    "VerticalPodAutoscaler",
    "ConsoleYAMLSample",
    "ConsoleQuickStart",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "ConsolePlugin",
    "NetworkPolicy",
    "PodMonitor",
];

/// Operator-registry's `IsSupported` (`pkg/lib/bundle/supported_resources.go`): for a kind of
/// [`SUPPORTED_KINDS`], whether it is namespaced (its map's value; it marks
/// VerticalPodAutoscaler cluster-scoped); `None` for any other kind.
pub fn kind_namespaced(kind: &str) -> Option<bool> {
    Some(match kind {
        "ClusterServiceVersion"
        | "Service"
        | "ServiceAccount"
        | "Role"
        | "RoleBinding"
        | "PrometheusRule"
        | "ServiceMonitor"
        | "Secret"
        | "ConfigMap"
        | "PodDisruptionBudget"
        | "NetworkPolicy"
        | "PodMonitor" => true,
        "CustomResourceDefinition"
        | "ClusterRole"
        | "ClusterRoleBinding"
        | "PriorityClass"
        | "VerticalPodAutoscaler"
        | "ConsoleYAMLSample"
        | "ConsoleQuickStart"
        | "ConsoleCLIDownload"
        | "ConsoleLink"
        | "ConsolePlugin" => false,
        _ => return None,
    })
}

/// The form of Kubernetes' `IsDNS1123Subdomain` (its length limit aside): dot-separated labels of
/// lowercase letters, digits and `-`, each non-empty and starting and ending with a letter or
/// digit.
pub fn is_dns1123_subdomain_form(n: &str) -> bool {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    n.split('.').all(label_ok)
}

/// DNS-1123 subdomain that is also a valid label value: at most 63 characters of lowercase
/// letters, digits, `-` and `.`, starting and ending with a letter or digit. The messages are
/// the Kubernetes validation messages.
pub fn name_problems(n: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if n.len() > 63 {
        out.push("must be no more than 63 characters");
    }
    let ok_chars = n
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let ends = n
        .chars()
        .next()
        .zip(n.chars().last())
        .is_some_and(|(a, b)| a.is_ascii_alphanumeric() && b.is_ascii_alphanumeric());
    if !ok_chars || !ends || n.split('.').any(str::is_empty) {
        out.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every supported kind has a scope, and nothing else does.
    #[test]
    fn supported_kinds_have_their_scope() {
        for k in SUPPORTED_KINDS {
            assert!(kind_namespaced(k).is_some(), "{k}");
        }
        assert_eq!(kind_namespaced("VerticalPodAutoscaler"), Some(false));
        assert_eq!(kind_namespaced("Secret"), Some(true));
        assert_eq!(kind_namespaced("Pod"), None);
        assert!(is_dns1123_subdomain_form("a-b.c"));
        assert!(!is_dns1123_subdomain_form("a..b"));
        assert!(!is_dns1123_subdomain_form("-a"));
    }
}
