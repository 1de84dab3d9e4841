//! A CustomResourceDefinition read from a bundle, with `apiextensions.k8s.io/v1beta1` and `v1`
//! normalised to one shape: the per-version fields the API server knows (`served`, `storage`,
//! `deprecated`, `deprecationWarning`, schema), the names, the scope and the conversion settings.
//!
//! v1beta1 rules applied (as the API server converts v1beta1 to its internal form): a lone
//! `spec.version` becomes one served storage version; the top-level `spec.validation` schema
//! applies to every version that has none of its own; `conversion.strategy` defaults to `None`
//! and `conversionReviewVersions` to `[v1beta1]` (v1 has no default).

use std::path::Path;
use std::sync::Arc;

use crate::bundle::load::{BundleDir, field, kind_of, list_at, pos_at, str_at};
use crate::fbc::node::{Node, Pos, Value};

/// One `spec.versions[]` entry.
#[derive(Debug, Clone)]
pub struct CrdVersion<'a> {
    /// `name`.
    pub name: &'a str,
    /// Where the version is declared.
    pub pos: Pos,
    /// `served`.
    pub served: bool,
    /// `storage`.
    pub storage: bool,
    /// `deprecated`.
    pub deprecated: bool,
    /// `deprecationWarning`, when set, with its position.
    pub deprecation_warning: Option<(&'a str, Pos)>,
    /// The `openAPIV3Schema` that applies to this version (its own, or v1beta1's top-level one).
    pub schema: Option<&'a Node>,
}

/// A CRD as the upgrade checks see it.
#[derive(Debug, Clone)]
pub struct Crd<'a> {
    /// `metadata.name` (`<plural>.<group>`).
    pub name: &'a str,
    /// The manifest file.
    pub file: Arc<Path>,
    /// The whole document.
    pub doc: &'a Node,
    /// `apiVersion` of the manifest (`apiextensions.k8s.io/v1` or `.../v1beta1`).
    pub api_version: &'a str,
    /// `spec.group`.
    pub group: &'a str,
    /// `spec.scope`.
    pub scope: &'a str,
    /// `spec.names.{kind, plural, singular, listKind}`, in that order ("" when absent).
    pub names: [(&'static str, &'a str); 4],
    /// The versions, in declaration order.
    pub versions: Vec<CrdVersion<'a>>,
    /// `spec.conversion.strategy` (default `None`).
    pub strategy: &'a str,
    /// The conversion review versions with their positions.
    pub review_versions: Vec<(&'a str, Pos)>,
}

impl<'a> Crd<'a> {
    /// Reads `doc` if it is a CustomResourceDefinition.
    pub fn read(file: &Arc<Path>, doc: &'a Node) -> Option<Crd<'a>> {
        if kind_of(doc) != Some("CustomResourceDefinition") {
            return None;
        }
        let api_version = str_at(doc, &["apiVersion"]).unwrap_or("");
        let v1beta1 = api_version == "apiextensions.k8s.io/v1beta1";
        let top_schema = if v1beta1 {
            field(doc, &["spec", "validation", "openAPIV3Schema"]).filter(|n| is_map(n))
        } else {
            None
        };
        let mut versions: Vec<CrdVersion<'a>> = list_at(doc, &["spec", "versions"])
            .iter()
            .map(|v| CrdVersion {
                name: str_at(v, &["name"]).unwrap_or(""),
                pos: pos_at(v, &["name"]),
                served: is_true(v, "served"),
                storage: is_true(v, "storage"),
                deprecated: is_true(v, "deprecated"),
                deprecation_warning: field(v, &["deprecationWarning"])
                    .and_then(|n| n.as_str().map(|s| (s, n.pos))),
                schema: field(v, &["schema", "openAPIV3Schema"])
                    .filter(|n| is_map(n))
                    .or(top_schema),
            })
            .collect();
        if v1beta1
            && versions.is_empty()
            && let Some(n) = field(doc, &["spec", "version"])
            && let Some(name) = n.as_str().filter(|s| !s.is_empty())
        {
            versions.push(CrdVersion {
                name,
                pos: n.pos,
                served: true,
                storage: true,
                deprecated: false,
                deprecation_warning: None,
                schema: top_schema,
            });
        }
        let conv = field(doc, &["spec", "conversion"]);
        let strategy = conv
            .and_then(|c| str_at(c, &["strategy"]))
            .unwrap_or("None");
        let list = conv.and_then(|c| {
            field(c, &["webhook", "conversionReviewVersions"])
                .or_else(|| field(c, &["conversionReviewVersions"]))
        });
        let mut review_versions: Vec<(&str, Pos)> = match list.map(|n| &n.value) {
            Some(Value::Seq(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(|s| (s, i.pos)))
                .collect(),
            _ => Vec::new(),
        };
        if v1beta1 && strategy == "Webhook" && list.is_none() {
            review_versions.push(("v1beta1", pos_at(doc, &["spec", "conversion"])));
        }
        Some(Crd {
            name: str_at(doc, &["metadata", "name"]).unwrap_or(""),
            file: file.clone(),
            doc,
            api_version,
            group: str_at(doc, &["spec", "group"]).unwrap_or(""),
            scope: str_at(doc, &["spec", "scope"]).unwrap_or(""),
            names: ["kind", "plural", "singular", "listKind"]
                .map(|k| (k, str_at(doc, &["spec", "names", k]).unwrap_or(""))),
            versions,
            strategy,
            review_versions,
        })
    }

    /// The version named `name`.
    pub fn version(&self, name: &str) -> Option<&CrdVersion<'a>> {
        self.versions.iter().find(|v| v.name == name)
    }

    /// The storage versions (exactly one in a valid CRD).
    pub fn storage(&self) -> impl Iterator<Item = &CrdVersion<'a>> {
        self.versions.iter().filter(|v| v.storage)
    }

    /// The served versions.
    pub fn served(&self) -> impl Iterator<Item = &CrdVersion<'a>> {
        self.versions.iter().filter(|v| v.served)
    }

    /// Whether conversion is done by a webhook.
    pub fn webhook_conversion(&self) -> bool {
        self.strategy == "Webhook"
    }

    /// Where the CRD document starts.
    pub fn pos(&self) -> Pos {
        self.doc.pos
    }
}

/// Every CRD of a bundle (first document of each manifest file, as opm reads bundles), by name.
/// A CRD repeated under the same name keeps its first occurrence; a CRD without a name is left
/// out (bundle validation reports it).
pub fn bundle_crds(b: &BundleDir) -> Vec<Crd<'_>> {
    let mut out: Vec<Crd<'_>> = Vec::new();
    for (file, doc) in b.first_docs() {
        if let Some(c) = Crd::read(file, doc)
            && !c.name.is_empty()
            && !out.iter().any(|x| x.name == c.name)
        {
            out.push(c);
        }
    }
    out.sort_by(|a, b| a.name.cmp(b.name));
    out
}

/// The CRD names a CSV's ConversionWebhook definitions list in `conversionCRDs` (OLM rewrites
/// those CRDs' `spec.conversion` to point at the webhook).
pub fn csv_conversion_crds(csv: &Node) -> Vec<&str> {
    list_at(csv, &["spec", "webhookdefinitions"])
        .iter()
        .filter(|w| str_at(w, &["type"]) == Some("ConversionWebhook"))
        .flat_map(|w| {
            list_at(w, &["conversionCRDs"])
                .iter()
                .filter_map(Node::as_str)
        })
        .collect()
}

fn is_true(n: &Node, key: &str) -> bool {
    matches!(field(n, &[key]).map(|v| &v.value), Some(Value::Bool(true)))
}

fn is_map(n: &Node) -> bool {
    matches!(n.value, Value::Map(_))
}

/// Kubernetes version priority of CRD version names (discovery order; crdify pairs served
/// versions in this order): "kube-like" names (`vN`, `vNbetaM`, `vNalphaM`) first, GA before
/// beta before alpha, then higher major, then higher minor; other names after them, sorted
/// lexically. Returns the ordering of `a` relative to `b` (Less = `a` has higher priority).
pub fn compare_version_priority(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn parse(s: &str) -> Option<(u8, u64, u64)> {
        let rest = s.strip_prefix('v')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((2, major, 0));
        }
        let (level, num) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else {
            return None;
        };
        if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some((level, major, num.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Node {
        let mut docs = Vec::new();
        crate::fbc::yaml::parse_documents(text, |d| docs.push(d)).expect("yaml");
        docs.remove(0)
    }

    #[test]
    fn v1beta1_top_level_version_and_schema() {
        let d = doc(
            "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: as.x.io}\nspec:\n  group: x.io\n  scope: Namespaced\n  version: v1\n  names: {kind: A, plural: as}\n  validation:\n    openAPIV3Schema: {type: object}\n  conversion: {strategy: Webhook}\n",
        );
        let f: Arc<Path> = Arc::from(Path::new("c.yaml"));
        let c = Crd::read(&f, &d).expect("crd");
        assert_eq!(c.versions.len(), 1);
        let v = &c.versions[0];
        assert!(v.served && v.storage && v.schema.is_some());
        assert_eq!(c.names[0], ("kind", "A"));
        assert!(c.webhook_conversion());
        assert_eq!(
            c.review_versions.iter().map(|x| x.0).collect::<Vec<_>>(),
            ["v1beta1"]
        );
    }

    #[test]
    fn v1_versions_keep_their_flags() {
        let d = doc(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: as.x.io}\nspec:\n  group: x.io\n  scope: Cluster\n  names: {kind: A, plural: as}\n  versions:\n  - {name: v1alpha1, served: true, storage: false, deprecated: true, deprecationWarning: old}\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n",
        );
        let f: Arc<Path> = Arc::from(Path::new("c.yaml"));
        let c = Crd::read(&f, &d).expect("crd");
        assert_eq!(c.storage().map(|v| v.name).collect::<Vec<_>>(), ["v1"]);
        let a = c.version("v1alpha1").expect("v1alpha1");
        assert!(a.deprecated && a.schema.is_none());
        assert_eq!(a.deprecation_warning.map(|x| x.0), Some("old"));
        assert_eq!(c.strategy, "None");
        assert!(c.review_versions.is_empty());
    }

    #[test]
    fn priority_order_matches_kubernetes() {
        let mut v = vec![
            "foo10",
            "v1",
            "v11alpha2",
            "v10beta3",
            "v2",
            "foo1",
            "v12alpha1",
            "v3beta1",
            "v10",
            "v11beta2",
        ];
        v.sort_by(|a, b| compare_version_priority(a, b));
        assert_eq!(
            v,
            [
                "v10",
                "v2",
                "v1",
                "v11beta2",
                "v10beta3",
                "v3beta1",
                "v12alpha1",
                "v11alpha2",
                "foo1",
                "foo10"
            ]
        );
    }
}
