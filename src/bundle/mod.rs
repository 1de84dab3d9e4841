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
