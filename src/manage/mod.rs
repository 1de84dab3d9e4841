//! Managing what OLM v0 offers and installed, as kubectl-operator does
//! (github.com/operator-framework/kubectl-operator, `internal/cmd` and `internal/pkg/action`):
//! the packages the cluster's catalogs offer ([`available`], [`describe`]), upgrading a
//! Subscription ([`upgrade`]), the custom resources of an installed operator ([`operands`])
//! and CatalogSources ([`catalog_source`]). [`age`] is the AGE column of their tables.
//!
//! Pure: the caller reads and writes the objects (a cluster, a test double); these functions
//! decide and shape rows, and never print.

pub mod age;
pub mod available;
pub mod catalog_source;
pub mod describe;
pub mod operands;
pub mod upgrade;

use serde_json::Value;

/// The string at a JSON pointer, or `""`.
pub(crate) fn text<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}
