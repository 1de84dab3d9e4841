//! Reading a registry+v1 bundle directory: `manifests/` (top-level files only, every YAML or
//! JSON document with positions) and `metadata/` (annotations, dependencies, properties).
//!
//! Which file is which follows operator-registry's bundle parser (`pkg/registry/parse.go`):
//! metadata files are recognised by content, in name order; the first one with a non-empty
//! `annotations` block is the annotations file, likewise for `dependencies` and `properties`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fbc::decode::Obj;
use crate::fbc::node::{Node, Pos, Value};
use crate::input::tree::Tree;

/// Bundle annotation keys.
pub mod keys {
    /// Media type.
    pub const MEDIATYPE: &str = "operators.operatorframework.io.bundle.mediatype.v1";
    /// Manifests directory.
    pub const MANIFESTS: &str = "operators.operatorframework.io.bundle.manifests.v1";
    /// Metadata directory.
    pub const METADATA: &str = "operators.operatorframework.io.bundle.metadata.v1";
    /// Package name.
    pub const PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
    /// Channels (comma-separated).
    pub const CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
    /// Default channel.
    pub const DEFAULT_CHANNEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";
}

/// A failure to read a bundle, naming the file and position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleError {
    /// The file (or directory) concerned.
    pub path: PathBuf,
    /// Where in the file (line 0 when not about a position).
    pub pos: Pos,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pos.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.path.display(),
                self.pos.line,
                self.pos.col,
                self.message
            )
        } else {
            write!(f, "{}: {}", self.path.display(), self.message)
        }
    }
}

impl std::error::Error for BundleError {}

/// An error about `path` at `pos`.
pub fn err(path: &Path, pos: Pos, message: impl Into<String>) -> BundleError {
    BundleError {
        path: path.to_path_buf(),
        pos,
        message: message.into(),
    }
}

/// One file of `manifests/`.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Its path.
    pub path: Arc<Path>,
    /// Every non-empty document, in order.
    pub docs: Vec<Node>,
}

/// One metadata block (`annotations`, `dependencies` or `properties`) and where it came from.
#[derive(Debug, Clone)]
pub struct MetaFile {
    /// The file.
    pub path: Arc<Path>,
    /// The block's value.
    pub node: Node,
}

/// A bundle directory as read from disk.
#[derive(Debug, Clone)]
pub struct BundleDir {
    /// The directory (the one holding `manifests/` and `metadata/`).
    pub dir: PathBuf,
    /// Top-level files of `manifests/` in name order (dotfiles and directories skipped).
    pub manifests: Vec<Manifest>,
    /// Entries of `manifests/` that opm skips: subdirectories and dotfiles.
    pub skipped: Vec<PathBuf>,
    /// The `annotations` block.
    pub annotations: Option<MetaFile>,
    /// The `dependencies` block.
    pub dependencies: Option<MetaFile>,
    /// The `properties` block.
    pub properties: Option<MetaFile>,
    /// Files that could not be read or parsed (opm skips them with a warning).
    pub problems: Vec<BundleError>,
}

/// Parses one YAML or JSON file into its non-empty documents.
pub fn parse_file(path: &Path) -> Result<Vec<Node>, BundleError> {
    // A huge file whose first document is a list is read only in part: the list is refused by
    // its kind, so the YAML reader (which stops at a root list) decides on the part read.
    let read =
        crate::input::read_objects(path).map_err(|e| err(path, Pos::default(), e.to_string()))?;
    let text = String::from_utf8(read.bytes).map_err(|e| {
        let (line, col) = crate::input::utf8_error_pos(e.as_bytes(), e.utf8_error().valid_up_to());
        err(path, Pos::new(line, col), "not UTF-8 text".to_string())
    })?;
    let mut docs = Vec::new();
    let trimmed = text.trim_start();
    let r = if !read.truncated && (trimmed.starts_with('{') || trimmed.starts_with('[')) {
        crate::fbc::json::parse_object_stream(&text, |n| docs.push(n))
    } else {
        crate::fbc::yaml::parse_objects(&text, |n| docs.push(n))
    };
    r.map_err(|e| err(path, Pos::new(e.line, e.column), e.message))?;
    Ok(docs)
}

/// Finds the directory holding `manifests/` and `metadata/`: `dir` itself or `dir/bundle` (the
/// nested layout some community operators use).
pub fn bundle_root(dir: &Path) -> Option<PathBuf> {
    [dir.to_path_buf(), dir.join("bundle")]
        .into_iter()
        .find(|d| d.join("manifests").is_dir() && d.join("metadata").is_dir())
}

/// Bundle directories two levels below `root` (`<root>/<package>/<version>`, the layout of
/// operator repositories such as community-operators), sorted by path.
pub fn bundle_dirs_below(root: &Path) -> Result<Vec<PathBuf>, BundleError> {
    let mut out = Vec::new();
    for pkg in sorted_dir(root)?.into_iter().filter(|p| p.is_dir()) {
        out.extend(
            sorted_dir(&pkg)?
                .into_iter()
                .filter(|v| bundle_root(v).is_some()),
        );
    }
    Ok(out)
}

fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>, BundleError> {
    let rd = std::fs::read_dir(dir).map_err(|e| {
        err(
            dir,
            Pos::default(),
            format!("cannot read directory: {e} (a bundle needs manifests/ and metadata/)"),
        )
    })?;
    let mut out: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    out.sort();
    Ok(out)
}

/// The block `key` of a metadata document, if the document has a non-empty one.
fn block(doc: &Node, key: &str) -> Option<Node> {
    let mut issues = Vec::new();
    let obj = Obj::new(doc, "", &mut issues)?;
    let v = &obj.get(key)?.value;
    let non_empty = match &v.value {
        Value::Map(m) => !m.is_empty(),
        Value::Seq(s) => !s.is_empty(),
        _ => false,
    };
    non_empty.then(|| v.clone())
}

/// Reads the bundle in `dir` (or `dir/bundle`).
pub fn load_bundle(dir: &Path) -> Result<BundleDir, BundleError> {
    let root = bundle_root(dir).ok_or_else(|| {
        err(
            dir,
            Pos::default(),
            "not a bundle directory: expected manifests/ and metadata/ subdirectories",
        )
    })?;
    // Files are read only where they resolve inside the directory given (see
    // [`crate::input::tree`]): `manifests/` itself may be a link.
    let tree = Tree::new(dir).map_err(|e| err(dir, Pos::default(), e.to_string()))?;
    let parse = |p: &Path| {
        tree.check(p)
            .map_err(|e| err(p, Pos::default(), e.to_string()))
            .and_then(|()| parse_file(p))
    };
    let mut manifests = Vec::new();
    let mut skipped = Vec::new();
    let mut problems = Vec::new();
    for p in sorted_dir(&root.join("manifests"))? {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden || p.is_dir() {
            skipped.push(p);
            continue;
        }
        match parse(&p) {
            Ok(docs) => manifests.push(Manifest {
                path: Arc::from(p.as_path()),
                docs,
            }),
            Err(e) => problems.push(e),
        }
    }
    let mut b = BundleDir {
        dir: root.clone(),
        manifests,
        skipped,
        annotations: None,
        dependencies: None,
        properties: None,
        problems,
    };
    for p in sorted_dir(&root.join("metadata"))? {
        if p.is_dir() {
            continue;
        }
        let docs = match parse(&p) {
            Ok(d) => d,
            Err(e) => {
                b.problems.push(e);
                continue;
            }
        };
        let Some(doc) = docs.first() else { continue };
        let path: Arc<Path> = Arc::from(p.as_path());
        for (slot, key) in [
            (&mut b.annotations, "annotations"),
            (&mut b.dependencies, "dependencies"),
            (&mut b.properties, "properties"),
        ] {
            if slot.is_none()
                && let Some(node) = block(doc, key)
            {
                *slot = Some(MetaFile {
                    path: path.clone(),
                    node,
                });
            }
        }
    }
    Ok(b)
}

impl BundleDir {
    /// An annotation value (case-insensitive key match, as Go decodes the annotations struct).
    pub fn annotation(&self, key: &str) -> Option<&str> {
        let a = self.annotations.as_ref()?;
        let mut issues = Vec::new();
        Obj::new(&a.node, "annotations", &mut issues)?
            .get(key)?
            .value
            .as_str()
    }

    /// The first document of every manifest file (what opm's bundle parser reads), with its file.
    pub fn first_docs(&self) -> impl Iterator<Item = (&Arc<Path>, &Node)> {
        self.manifests
            .iter()
            .filter_map(|m| m.docs.first().map(|d| (&m.path, d)))
    }

    /// The ClusterServiceVersion opm uses: the first one in file order.
    pub fn csv(&self) -> Option<(&Arc<Path>, &Node)> {
        self.first_docs()
            .find(|(_, d)| kind_of(d) == Some("ClusterServiceVersion"))
    }
}

/// `kind` of a manifest.
pub fn kind_of(doc: &Node) -> Option<&str> {
    field(doc, &["kind"])?.as_str()
}

/// The node at `path` (exact keys, last duplicate wins), if every step is an object key.
pub fn field<'a>(doc: &'a Node, path: &[&str]) -> Option<&'a Node> {
    let mut cur = doc;
    for k in path {
        match &cur.value {
            Value::Map(entries) => cur = &entries.iter().rev().find(|e| e.key == *k)?.value,
            _ => return None,
        }
    }
    Some(cur)
}

/// Where the node at `path` is, or where `doc` is when the path is absent (for findings about
/// a missing or wrong field).
pub fn pos_at(doc: &Node, path: &[&str]) -> Pos {
    field(doc, path).map_or(doc.pos, |n| n.pos)
}

/// The string at `path`, if it is one.
pub fn str_at<'a>(doc: &'a Node, path: &[&str]) -> Option<&'a str> {
    field(doc, path)?.as_str()
}

/// The list at `path` (empty when absent or not a list).
pub fn list_at<'a>(doc: &'a Node, path: &[&str]) -> &'a [Node] {
    match field(doc, path).map(|n| &n.value) {
        Some(Value::Seq(v)) => v,
        _ => &[],
    }
}

/// What a CRD manifest provides: group, kind, plural and every version name with its position
/// (`spec.versions[].name`, plus `spec.version` of a v1beta1 CRD), as operator-registry's
/// `Bundle.ProvidedAPIs` reads them.
pub struct CrdVersions<'a> {
    /// `spec.group`.
    pub group: &'a str,
    /// `spec.names.kind`.
    pub kind: &'a str,
    /// `spec.names.plural`.
    pub plural: &'a str,
    /// Version names, without repeats, with where each is written.
    pub versions: Vec<(&'a str, Pos)>,
}

/// The versions of `doc` if it is a CustomResourceDefinition.
pub fn crd_versions(doc: &Node) -> Option<CrdVersions<'_>> {
    if kind_of(doc) != Some("CustomResourceDefinition") {
        return None;
    }
    let mut versions: Vec<(&str, Pos)> = list_at(doc, &["spec", "versions"])
        .iter()
        .map(|v| (str_at(v, &["name"]).unwrap_or(""), v.pos))
        .collect();
    if str_at(doc, &["apiVersion"]) == Some("apiextensions.k8s.io/v1beta1")
        && let Some(v) = field(doc, &["spec", "version"])
        && let Some(name) = v.as_str().filter(|n| !n.is_empty())
        && !versions.iter().any(|(n, _)| *n == name)
    {
        versions.push((name, v.pos));
    }
    Some(CrdVersions {
        group: str_at(doc, &["spec", "group"]).unwrap_or(""),
        kind: str_at(doc, &["spec", "names", "kind"]).unwrap_or(""),
        plural: str_at(doc, &["spec", "names", "plural"]).unwrap_or(""),
        versions,
    })
}
