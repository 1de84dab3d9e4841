//! Bundle validation codes: `BND` for the bundle format and cross-object rules, `CSV` for the
//! ClusterServiceVersion. Codes are never renumbered; retired codes are not reused.

use crate::diag::Severity::{Error, Warning};

codes! {
    UNREADABLE = "BND001", Error, "A manifest or metadata file cannot be read or parsed (opm skips it silently).";
    MANIFESTS_LAYOUT = "BND002", Error, "manifests/ holds a subdirectory or hidden file; bundle loaders reject or skip it.";
    UNSUPPORTED_KIND = "BND003", Error, "A manifest's kind is not one of the 22 kinds a registry+v1 bundle may carry.";
    CSV_COUNT = "BND004", Error, "The bundle has no ClusterServiceVersion, or more than one.";
    ANNOTATIONS = "BND005", Error, "metadata/annotations.yaml is missing, or a required bundle annotation is missing or empty.";
    DEFAULT_CHANNEL = "BND006", Warning, "The default channel annotation names a channel the bundle is not in.";
    OWNED_CRD_MISSING = "BND007", Error, "A CRD the CSV owns is not in the bundle.";
    CRD_NOT_OWNED = "BND008", Error, "A CRD in the bundle is not owned by the CSV.";
    DUPLICATE_CRD = "BND009", Error, "The same CRD group/version/kind appears twice in the bundle.";
    SHADOWED_SERVICE_ACCOUNT = "BND010", Error, "A ServiceAccount manifest has the name of a service account the CSV's deployments use.";
    RELEASE_NAME = "BND011", Error, "With spec.release set, the CSV name must be <package>-v<version>-<release>.";
    RELATED_IMAGE = "BND012", Error, "A relatedImages entry has an empty or invalid image pull spec.";
    EXTRA_DOCUMENT = "BND013", Warning, "A manifest file holds several YAML documents; OLM reads only the first, the others are dropped.";
    NOT_AN_OBJECT = "BND014", Error, "A manifest document is not a Kubernetes object (apiVersion, kind and metadata.name).";
    INVALID_NAME = "CSV001", Error, "metadata.name or spec.replaces is not a valid DNS-1123 subdomain and label value.";
    NO_EXAMPLES = "CSV002", Warning, "The CSV has no alm-examples annotation (or both alm-examples and olm.examples).";
    BAD_EXAMPLES = "CSV003", Error, "alm-examples is not a JSON list of objects.";
    EXAMPLE_NOT_PROVIDED = "CSV004", Error, "An alm-examples object's group/version/kind is not an API the CSV provides.";
    API_WITHOUT_EXAMPLE = "CSV005", Warning, "A provided API has no alm-examples object.";
    INSTALL_MODES = "CSV006", Error, "installModes is empty, repeats a type, uses an unknown type, or supports none.";
    CONVERSION_INSTALL_MODES = "CSV007", Error, "conversionCRDs are declared but the CSV does not support exactly AllNamespaces.";
    MIN_KUBE_MISSING = "CSV008", Warning, "spec.minKubeVersion is not set.";
    MIN_KUBE_INVALID = "CSV009", Error, "spec.minKubeVersion is not a strict semantic version (e.g. 1.25.0).";
    REQUIRED_FIELD = "CSV010", Error, "A field the CSV must have is missing (apiVersion, kind, metadata.name, spec.displayName, spec.install, ...).";
    ANNOTATION_CASE = "CSV011", Error, "A reserved OLM annotation key has the wrong case.";
    PROPERTIES_ANNOTATION = "CSV012", Warning, "The olm.properties annotation is deprecated; use metadata/properties.yaml.";
    VERSION = "CSV013", Error, "spec.version is missing or not a semantic version.";
    INSTALL_STRATEGY = "CSV014", Error, "spec.install.strategy is not `deployment`, or it lists no deployments.";
    CRD_DESCRIPTION_NAME = "CSV015", Error, "An owned or required CRD name is not <plural>.<group>.";
    WEBHOOK_DEPLOYMENT = "CSV016", Error, "A webhook definition names a deployment the CSV does not install (OLM fails the CSV at runtime).";
    SKIP_RANGE = "CSV017", Error, "The olm.skipRange annotation does not parse; OLM v0 ignores it silently.";
    VERSION_NAME_MISMATCH = "CSV018", Warning, "metadata.name does not contain spec.version; tools and people expect <package>.v<version>.";
}
