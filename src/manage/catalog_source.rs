//! `olmctl catalog add|list|remove` (kubectl-operator `catalog add|list|remove`,
//! `internal/pkg/action/catalog_add.go`, `catalog_list.go`, `catalog_remove.go`): a
//! CatalogSource of an index image, and the rows of the CatalogSources of a namespace.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::text;

/// The index image label a display name defaults to (`catalog_add.go :: alphaDisplayNameLabel`).
pub const DISPLAY_NAME_LABEL: &str = "alpha.operators.operatorframework.io.index.display-name.v1";
/// The index image label a publisher defaults to (`catalog_add.go :: alphaPublisherLabel`).
pub const PUBLISHER_LABEL: &str = "alpha.operators.operatorframework.io.index.publisher.v1";

/// `catalog add`'s CatalogSource (`internal/pkg/catalogsource/catalogsource.go :: Build`):
/// `sourceType: grpc`, the image, the display name and publisher (empty ones omitted, as Go's
/// `omitempty` writes them).
pub fn catalog_source(
    name: &str,
    namespace: &str,
    image: &str,
    display_name: &str,
    publisher: &str,
) -> Value {
    let mut spec = json!({"sourceType": "grpc", "image": image});
    if !display_name.is_empty() {
        spec["displayName"] = json!(display_name);
    }
    if !publisher.is_empty() {
        spec["publisher"] = json!(publisher);
    }
    json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
           "metadata": {"name": name, "namespace": namespace}, "spec": spec})
}

/// The display name and publisher: the flags, else the index image's labels
/// (`CatalogAdd.setDefaults`).
pub fn defaults(
    display_name: Option<&str>,
    publisher: Option<&str>,
    labels: &BTreeMap<String, String>,
) -> (String, String) {
    let pick = |flag: Option<&str>, label: &str| {
        flag.filter(|f| !f.is_empty())
            .map(str::to_string)
            .or_else(|| labels.get(label).cloned())
            .unwrap_or_default()
    };
    (
        pick(display_name, DISPLAY_NAME_LABEL),
        pick(publisher, PUBLISHER_LABEL),
    )
}

/// Whether the CatalogSource's registry is served (`waitForCatalogSourceReady`:
/// `status.connectionState.lastObservedState == READY`).
pub fn ready(cs: &Value) -> bool {
    text(cs, "/status/connectionState/lastObservedState") == "READY"
}

/// One row of `catalog list` (`catalog_list.go`: NAME, NAMESPACE with `-A`, DISPLAY, TYPE,
/// PUBLISHER, AGE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The name.
    pub name: String,
    /// The namespace.
    pub namespace: String,
    /// `spec.displayName`.
    pub display: String,
    /// `spec.sourceType`.
    #[serde(rename = "type")]
    pub source_type: String,
    /// `spec.publisher`.
    pub publisher: String,
    /// `spec.image`.
    pub image: String,
    /// `status.connectionState.lastObservedState`.
    pub state: String,
    /// `creationTimestamp`.
    pub created: String,
}

/// The rows, in the API's order (namespace, then name).
pub fn rows(sources: &[Value]) -> Vec<Row> {
    sources
        .iter()
        .map(|cs| Row {
            name: text(cs, "/metadata/name").into(),
            namespace: text(cs, "/metadata/namespace").into(),
            display: text(cs, "/spec/displayName").into(),
            source_type: text(cs, "/spec/sourceType").into(),
            publisher: text(cs, "/spec/publisher").into(),
            image: text(cs, "/spec/image").into(),
            state: text(cs, "/status/connectionState/lastObservedState").into(),
            created: text(cs, "/metadata/creationTimestamp").into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_image_labels_which_win_over_nothing() {
        let labels = BTreeMap::from([
            (DISPLAY_NAME_LABEL.to_string(), "From Label".to_string()),
            (PUBLISHER_LABEL.to_string(), "Label Inc".to_string()),
        ]);
        assert_eq!(
            defaults(Some("Mine"), None, &labels),
            ("Mine".into(), "Label Inc".into())
        );
        assert_eq!(
            defaults(None, None, &BTreeMap::new()),
            (String::new(), String::new())
        );
    }

    #[test]
    fn a_catalog_source_is_grpc_with_empty_fields_left_out() {
        let cs = catalog_source("c", "olm", "quay.io/x/i:1", "", "Acme");
        assert_eq!(
            cs["spec"],
            json!({"sourceType": "grpc", "image": "quay.io/x/i:1", "publisher": "Acme"})
        );
    }
}
