//! The cluster objects `olmctl gate evaluate -f` reads: YAML files of Kubernetes objects (one
//! per document, or `kind: List` dumps as `kubectl get -o yaml` writes them). The gate keeps
//! Subscriptions, InstallPlans, ClusterServiceVersions, CustomResourceDefinitions, ConfigMaps,
//! and OLM v1's ClusterExtensions and ClusterCatalogs, and ignores every other kind; a document that is not a Kubernetes object is an
//! error at its file and line.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::bundle::load::str_at;
use crate::fbc::node::{Node, Pos, Value};

/// One object and where it came from. Clones share the object (a controller keeps objects
/// across reconciles and builds [`Objects`] from them without copying).
#[derive(Debug, Clone)]
pub struct Object {
    /// The file.
    pub file: Arc<Path>,
    /// The object.
    pub node: Arc<Node>,
    /// For an unpacked-bundle ConfigMap: its decoded files, decoded once however many steps
    /// of however many plans refer to it ([`super::manifests::bundle_objects`]).
    pub(super) bundle: Arc<OnceLock<Result<Vec<Node>, String>>>,
}

impl Object {
    /// An object read from `file` (a path, or a name such as `cluster/InstallPlan/ns/name`).
    pub fn new(file: Arc<Path>, node: Node) -> Object {
        Object {
            file,
            node: Arc::new(node),
            bundle: Arc::default(),
        }
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        str_at(&self.node, &["metadata", "name"]).unwrap_or_default()
    }

    /// `metadata.namespace` ("" for cluster-scoped objects).
    pub fn namespace(&self) -> &str {
        str_at(&self.node, &["metadata", "namespace"]).unwrap_or_default()
    }

    /// A string at `path`.
    pub fn str(&self, path: &[&str]) -> Option<&str> {
        str_at(&self.node, path)
    }
}

/// The objects the gate reads, each list in input order.
#[derive(Debug, Default, Clone)]
pub struct Objects {
    /// `operators.coreos.com` Subscriptions.
    pub subscriptions: Vec<Object>,
    /// `operators.coreos.com` InstallPlans.
    pub install_plans: Vec<Object>,
    /// `operators.coreos.com` ClusterServiceVersions.
    pub csvs: Vec<Object>,
    /// `apiextensions.k8s.io` CustomResourceDefinitions.
    pub crds: Vec<Object>,
    /// Core ConfigMaps.
    pub config_maps: Vec<Object>,
    /// `olm.operatorframework.io` ClusterExtensions (OLM v1).
    pub cluster_extensions: Vec<Object>,
    /// `olm.operatorframework.io` ClusterCatalogs (OLM v1; their `status.lastUnpacked`).
    pub cluster_catalogs: Vec<Object>,
    /// How many objects of other kinds were ignored.
    pub ignored: usize,
    /// What is left of this evaluation's budget for decoding unpacked bundles.
    pub inflate: Arc<super::budget::InflateBudget>,
}

/// An input error: file, place, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectError {
    /// The file.
    pub file: std::path::PathBuf,
    /// Where.
    pub pos: Pos,
    /// What.
    pub message: String,
}

impl std::fmt::Display for ObjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.pos.line,
            self.pos.col,
            self.message
        )
    }
}

impl Objects {
    /// Adds the objects of one file's text.
    pub fn add_text(&mut self, file: &Path, text: &str) -> Result<(), ObjectError> {
        let arc: Arc<Path> = Arc::from(file);
        each_object(file, text, &mut |group, kind, n| {
            let list = match (group, kind) {
                ("operators.coreos.com", "Subscription") => &mut self.subscriptions,
                ("operators.coreos.com", "InstallPlan") => &mut self.install_plans,
                ("operators.coreos.com", "ClusterServiceVersion") => &mut self.csvs,
                ("apiextensions.k8s.io", "CustomResourceDefinition") => &mut self.crds,
                ("", "ConfigMap") => &mut self.config_maps,
                ("olm.operatorframework.io", "ClusterExtension") => &mut self.cluster_extensions,
                ("olm.operatorframework.io", "ClusterCatalog") => &mut self.cluster_catalogs,
                _ => {
                    self.ignored += 1;
                    return;
                }
            };
            list.push(Object::new(arc.clone(), n));
        })
    }
}

/// Calls `f` with (API group, kind, object) for every Kubernetes object of one file's text:
/// each document, the `items` of a `kind: ...List` opened; a document that is not an object
/// with apiVersion and kind is an error at its place.
pub fn each_object(
    file: &Path,
    text: &str,
    f: &mut dyn FnMut(&str, &str, Node),
) -> Result<(), ObjectError> {
    let at = |pos: Pos, message: String| ObjectError {
        file: file.to_path_buf(),
        pos,
        message,
    };
    let mut docs = Vec::new();
    crate::fbc::yaml::parse_documents(text, |n| docs.push(n))
        .map_err(|e| at(Pos::new(e.line, e.column), e.message))?;
    for d in docs {
        object(d, &at, f)?;
    }
    Ok(())
}

fn object(
    n: Node,
    at: &dyn Fn(Pos, String) -> ObjectError,
    f: &mut dyn FnMut(&str, &str, Node),
) -> Result<(), ObjectError> {
    if !matches!(n.value, Value::Map(_)) {
        return Err(at(
            n.pos,
            format!(
                "not a Kubernetes object: a {} where an object with apiVersion and kind belongs",
                n.kind()
            ),
        ));
    }
    let (Some(api), Some(kind)) = (str_at(&n, &["apiVersion"]), str_at(&n, &["kind"])) else {
        return Err(at(
            n.pos,
            "not a Kubernetes object: apiVersion and kind are required".into(),
        ));
    };
    let group = api.rsplit_once('/').map_or("", |(g, _)| g).to_string();
    let kind = kind.to_string();
    if kind.ends_with("List") && crate::bundle::load::field(&n, &["items"]).is_some() {
        let items = match crate::bundle::load::field(&n, &["items"]).map(|i| &i.value) {
            Some(Value::Seq(items)) => items.clone(),
            _ => Vec::new(),
        };
        for i in items {
            object(i, at, f)?;
        }
        return Ok(());
    }
    f(&group, &kind, n);
    Ok(())
}

/// The example cluster state of `shared/fixtures/olm/objects`, for tests.
#[cfg(test)]
pub(crate) fn example_objects() -> Objects {
    let dir = super::fixture::example_dir();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("objects")
        .map(|e| e.expect("e").path())
        .collect();
    files.sort();
    let mut o = Objects::default();
    for f in files {
        o.add_text(&f, &std::fs::read_to_string(&f).expect("read"))
            .expect("objects");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_example_cluster_state() {
        let o = example_objects();
        assert_eq!(o.subscriptions.len(), 1);
        assert_eq!(o.install_plans.len(), 1);
        assert_eq!(o.csvs.len(), 2);
        assert_eq!(o.crds.len(), 1);
        assert_eq!(o.config_maps.len(), 2);
        assert_eq!(o.ignored, 2, "the CatalogSource and the OperatorGroup");
        assert_eq!(
            o.install_plans[0].str(&["status", "phase"]),
            Some("RequiresApproval")
        );
    }

    #[test]
    fn lists_and_refusals() {
        let mut o = Objects::default();
        let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: ns}\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n";
        o.add_text(Path::new("dump.yaml"), list).expect("list");
        assert_eq!((o.config_maps.len(), o.ignored), (1, 1));
        assert_eq!(
            (o.config_maps[0].name(), o.config_maps[0].namespace()),
            ("a", "ns")
        );
        let e = o
            .add_text(Path::new("x.yaml"), "---\nkind: ConfigMap\n")
            .expect_err("no apiVersion");
        assert_eq!((e.pos.line, e.pos.col), (2, 1));
        assert!(
            e.to_string()
                .starts_with("x.yaml:2:1: not a Kubernetes object"),
            "{e}"
        );
        let e = o
            .add_text(Path::new("x.yaml"), "a: 1\n---\n- 1\n")
            .expect_err("a list");
        assert_eq!(e.pos.line, 1, "{e}");
        let e = o
            .add_text(Path::new("x.yaml"), "apiVersion: v1\nkind: [\n")
            .expect_err("broken");
        assert!(e.to_string().starts_with("x.yaml:"), "{e}");
    }
}
