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
        out.extend(package_bundle_dirs(&pkg)?);
    }
    Ok(out)
}

/// The bundle directories of a package directory in the `<package>/<version>/` layout of
/// operator repositories (community-operators, certified-operators): every entry of `pkg` that
/// is a bundle directory ([`bundle_root`]), whatever it is named, sorted by path. What
/// `check history` reads as a package's history.
pub fn package_bundle_dirs(pkg: &Path) -> Result<Vec<PathBuf>, BundleError> {
    Ok(sorted_dir(pkg)?
        .into_iter()
        .filter(|v| bundle_root(v).is_some())
        .collect())
}

/// The bundle directories at `root`, wherever it sits in the `<package>/<version>/` layout:
/// `root` itself when it is a bundle directory; else its entries that are bundle directories
/// (a package directory) and the bundle directories of its other subdirectories (a directory
/// of packages, such as a repository's `operators/`). Sorted by path; directory names do not
/// matter (bundles are told apart by their contents, see [`by_csv_name`]).
pub fn bundle_dirs_in(root: &Path) -> Result<Vec<PathBuf>, BundleError> {
    if bundle_root(root).is_some() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut out = Vec::new();
    for e in sorted_dir(root)?.into_iter().filter(|p| p.is_dir()) {
        if bundle_root(&e).is_some() {
            out.push(e);
        } else {
            out.extend(package_bundle_dirs(&e)?);
        }
    }
    Ok(out)
}

/// Bundle directories read and told apart by the name of their ClusterServiceVersion
/// (`metadata.name` of the CSV opm uses, [`BundleDir::csv`]), the bundle's name in a catalog.
#[derive(Debug, Default)]
pub struct ByCsvName {
    /// The bundles kept, by CSV name (the first directory, in path order, of each name).
    pub bundles: std::collections::BTreeMap<String, BundleDir>,
    /// Directories whose CSV name was not asked for, with that name.
    pub others: Vec<(PathBuf, String)>,
    /// Directories whose CSV name, one asked for, another directory (earlier in path order)
    /// already has.
    pub repeated: Vec<(PathBuf, String)>,
    /// Directories that could not be read, or have no CSV or no CSV name, with why.
    pub unnamed: Vec<(PathBuf, String)>,
}

/// Reads each of `dirs` and keeps the bundles whose CSV name `wanted` accepts (the others are
/// dropped once named, so a whole repository is never held in memory).
pub fn by_csv_name(dirs: &[PathBuf], wanted: &dyn Fn(&str) -> bool) -> ByCsvName {
    let mut out = ByCsvName::default();
    for d in dirs {
        let b = match load_bundle(d) {
            Ok(b) => b,
            Err(e) => {
                out.unnamed.push((d.clone(), e.to_string()));
                continue;
            }
        };
        let Some((file, csv)) = b.csv() else {
            out.unnamed
                .push((d.clone(), "no ClusterServiceVersion in manifests/".into()));
            continue;
        };
        let Some(name) = str_at(csv, &["metadata", "name"]).filter(|n| !n.is_empty()) else {
            out.unnamed.push((
                d.clone(),
                format!("{}: the CSV has no metadata.name", file.display()),
            ));
            continue;
        };
        let name = name.to_string();
        if !wanted(&name) {
            out.others.push((d.clone(), name));
            continue;
        }
        match out.bundles.entry(name) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(b);
            }
            std::collections::btree_map::Entry::Occupied(o) => {
                out.repeated.push((d.clone(), o.key().clone()));
            }
        }
    }
    out
}

fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>, BundleError> {
    let rd = std::fs::read_dir(dir).map_err(|e| {
        let what = if e.kind() == std::io::ErrorKind::NotFound {
            "no such directory".to_string()
        } else {
            format!("cannot read directory: {e}")
        };
        err(dir, Pos::default(), what)
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

/// Why `dir` (which [`bundle_root`] refused) is not a bundle directory: it does not exist, it
/// is not a directory, or it lacks `manifests/` or `metadata/`.
fn not_a_bundle(dir: &Path) -> BundleError {
    let message = match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            "no such directory (a bundle directory holds manifests/ and metadata/)".to_string()
        }
        Err(e) => format!("cannot read: {e}"),
        Ok(m) if !m.is_dir() => {
            "not a directory: a bundle is a directory holding manifests/ and metadata/".to_string()
        }
        Ok(_) => {
            let missing: Vec<&str> = ["manifests", "metadata"]
                .into_iter()
                .filter(|s| !dir.join(s).is_dir())
                .collect();
            let mut m = format!(
                "not a bundle directory: expected manifests/ and metadata/ subdirectories ({} missing)",
                missing.join(" and ")
            );
            // A package directory (`<package>/<version>/`): name its bundle directories.
            let inside = package_bundle_dirs(dir).unwrap_or_default();
            if !inside.is_empty() {
                let names: Vec<String> = inside
                    .iter()
                    .take(3)
                    .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect();
                m.push_str(&format!(
                    "; it holds {} bundle director{} ({}{}): name one of them",
                    inside.len(),
                    if inside.len() == 1 { "y" } else { "ies" },
                    names.join(", "),
                    if inside.len() > 3 { ", ..." } else { "" }
                ));
            }
            m
        }
    };
    err(dir, Pos::default(), message)
}

/// Reads the bundle in `dir` (or `dir/bundle`).
pub fn load_bundle(dir: &Path) -> Result<BundleDir, BundleError> {
    let root = bundle_root(dir).ok_or_else(|| not_a_bundle(dir))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    const ANN: &str = "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n";

    /// A bundle directory at `rel` whose CSV is named `name`.
    fn bundle(root: &Path, rel: &str, name: &str) {
        let d = root.join(rel);
        std::fs::create_dir_all(d.join("manifests")).unwrap();
        std::fs::create_dir_all(d.join("metadata")).unwrap();
        std::fs::write(
            d.join("manifests/csv.yaml"),
            format!("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: {name}\n"),
        )
        .unwrap();
        std::fs::write(d.join("metadata/annotations.yaml"), ANN).unwrap();
    }

    /// `operators/` of a repository: `p/` with two bundles named neither by version nor by
    /// CSV, one in the nested `bundle/` layout, a directory that is no bundle and a ci.yaml;
    /// `q/1.0.0/` with a CSV of the same name as one of p's.
    fn repo() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let ops = t.path().join("operators");
        bundle(&ops, "p/first", "p.v1.0.0");
        bundle(&ops, "p/2.0.0/bundle", "p.v2.0.0");
        std::fs::create_dir_all(ops.join("p/docs/manifests")).unwrap();
        std::fs::write(ops.join("p/ci.yaml"), "updateGraph: replaces-mode\n").unwrap();
        bundle(&ops, "q/1.0.0", "p.v1.0.0");
        t
    }

    fn rel(root: &Path, dirs: &[PathBuf]) -> Vec<String> {
        dirs.iter()
            .map(|d| d.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn bundle_dirs_are_found_wherever_the_root_sits_in_the_layout() {
        let t = repo();
        let ops = t.path().join("operators");
        let all = ["p/2.0.0", "p/first", "q/1.0.0"];
        assert_eq!(rel(&ops, &bundle_dirs_in(&ops).unwrap()), all);
        assert_eq!(rel(&ops, &bundle_dirs_below(&ops).unwrap()), all);
        // A package directory: its `<version>/` bundles, as `check history` reads them.
        assert_eq!(
            rel(&ops, &bundle_dirs_in(&ops.join("p")).unwrap()),
            ["p/2.0.0", "p/first"]
        );
        assert_eq!(
            bundle_dirs_in(&ops.join("p")).unwrap(),
            package_bundle_dirs(&ops.join("p")).unwrap()
        );
        // A bundle directory itself.
        assert_eq!(
            rel(&ops, &bundle_dirs_in(&ops.join("p/first")).unwrap()),
            ["p/first"]
        );
        let e = bundle_dirs_in(&t.path().join("nope")).unwrap_err();
        assert_eq!(e.message, "no such directory");
    }

    #[test]
    fn bundles_are_told_apart_by_csv_name() {
        let t = repo();
        let ops = t.path().join("operators");
        std::fs::create_dir_all(ops.join("r/1.0.0/manifests")).unwrap();
        std::fs::create_dir_all(ops.join("r/1.0.0/metadata")).unwrap();
        let dirs = bundle_dirs_in(&ops).unwrap();
        let found = by_csv_name(&dirs, &|n| n != "p.v2.0.0");
        let kept: Vec<(&str, String)> = found
            .bundles
            .iter()
            .map(|(n, b)| {
                (
                    n.as_str(),
                    b.dir.strip_prefix(&ops).unwrap().display().to_string(),
                )
            })
            .collect();
        // The nested layout's bundle is its `bundle/` directory.
        assert_eq!(kept, [("p.v1.0.0", "p/first".to_string())]);
        assert_eq!(
            found.others,
            [(ops.join("p/2.0.0"), "p.v2.0.0".to_string())]
        );
        assert_eq!(
            found.repeated,
            [(ops.join("q/1.0.0"), "p.v1.0.0".to_string())]
        );
        assert_eq!(found.unnamed.len(), 1);
        assert_eq!(found.unnamed[0].0, ops.join("r/1.0.0"));
        assert!(found.unnamed[0].1.contains("no ClusterServiceVersion"));
    }

    #[test]
    fn missing_directories_are_not_called_non_bundles() {
        let t = repo();
        let ops = t.path().join("operators");
        let e = load_bundle(&ops.join("p/3.0.0")).unwrap_err();
        assert_eq!(e.path, ops.join("p/3.0.0"));
        assert!(e.message.starts_with("no such directory"), "{e}");
        // The path is named once.
        assert_eq!(e.to_string().matches("3.0.0").count(), 1, "{e}");
        let e = load_bundle(&ops.join("p/ci.yaml")).unwrap_err();
        assert!(e.message.starts_with("not a directory"), "{e}");
        let e = load_bundle(&ops.join("p/docs")).unwrap_err();
        assert!(
            e.message
                .starts_with("not a bundle directory: expected manifests/ and metadata/ subdirectories (metadata missing)"),
            "{e}"
        );
        // A package directory given for a bundle: its bundles are named.
        let e = load_bundle(&ops.join("p")).unwrap_err();
        assert!(
            e.message
                .ends_with("it holds 2 bundle directories (2.0.0, first): name one of them"),
            "{e}"
        );
    }
}
