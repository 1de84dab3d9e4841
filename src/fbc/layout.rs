//! Where each package's canonical file goes when a catalog is rewritten in place (`catalog
//! fmt`): one directory per package, the directory the package already lives in.
//!
//! opm reads any layout: `declcfg.WalkMetasFS` (operator-registry alpha/declcfg/load.go) walks
//! every file and a blob's package is the `package`/`name` it carries, never its directory's
//! name. Real catalogs use that freedom (certified-operators publishes package `clife` under
//! `isovalent-networking/`), so a package keeps the top-level directory of its `olm.package`
//! blob; only a package without one (blobs at the catalog's root, or a new package) goes under
//! its own name, and a directory several packages share is kept by one of them, the others
//! moving under their names, each move reported as a [`Move`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};

use super::decl::DeclarativeConfig;

/// A package whose blobs leave the directory they were in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The package.
    pub package: String,
    /// The directory its `olm.package` blob was in (relative to the catalog).
    pub from: String,
    /// The directory it is written to.
    pub to: String,
    /// The package written to `from` (none when it keeps no package).
    pub kept_by: Option<String>,
}

/// Each package's directory (relative to `root`), and the packages that must move.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Package name to directory name (one path element).
    pub dirs: BTreeMap<String, String>,
    /// Packages written somewhere else than the directory they were in, by package name.
    pub moves: Vec<Move>,
}

impl Layout {
    /// The directory of `package` (its own name when it has none).
    pub fn dir<'a>(&'a self, package: &'a str) -> &'a str {
        self.dirs.get(package).map_or(package, String::as_str)
    }
}

/// The top-level directory below `root` that holds `file`, when `file` is not at the root.
fn top_dir(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?;
    let mut parts = rel.components();
    let first = parts.next()?;
    // At least one more component: `first` is a directory, not the file itself.
    parts.next()?;
    match first {
        Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
        _ => None,
    }
}

/// Where the packages of `cfg`, loaded from `root`, are written: see the module doc.
pub fn layout(cfg: &DeclarativeConfig, root: &Path) -> Layout {
    // The first olm.package blob of each package (files are loaded in path order).
    let mut wanted: BTreeMap<&str, Option<String>> = BTreeMap::new();
    for p in &cfg.packages {
        wanted
            .entry(p.name.as_str())
            .or_insert_with(|| top_dir(root, &p.src.file));
    }
    let names: BTreeSet<&str> = cfg
        .packages
        .iter()
        .map(|p| p.name.as_str())
        .chain(cfg.channels.iter().map(|c| c.package.as_str()))
        .chain(cfg.bundles.iter().map(|b| b.package.as_str()))
        .collect();
    let mut dirs: BTreeMap<String, String> = names
        .iter()
        .map(|n| {
            let d = wanted.get(n).cloned().flatten();
            (n.to_string(), d.unwrap_or_else(|| n.to_string()))
        })
        .collect();
    let mut moves = Vec::new();
    // Until no two packages share a directory: of the packages in one directory, the one named
    // like it keeps it (else the first by name); the others move under their names. Names are
    // unique, so each round moves at least one package for good and this ends.
    loop {
        let mut by_dir: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (p, d) in &dirs {
            by_dir.entry(d.as_str()).or_default().push(p.as_str());
        }
        let mut moving = Vec::new();
        for (d, pkgs) in by_dir.iter().filter(|(_, p)| p.len() > 1) {
            let keeper = pkgs.iter().find(|p| *p == d).unwrap_or(&pkgs[0]);
            for p in pkgs.iter().filter(|p| *p != keeper) {
                moving.push((p.to_string(), d.to_string()));
            }
        }
        if moving.is_empty() {
            break;
        }
        for (p, from) in moving {
            dirs.insert(p.clone(), p.clone());
            moves.push(Move {
                to: p.clone(),
                package: p,
                from,
                kept_by: None,
            });
        }
    }
    for m in &mut moves {
        m.kept_by = dirs
            .iter()
            .find(|(_, d)| **d == m.from)
            .map(|(p, _)| p.clone());
    }
    moves.sort_by(|a, b| a.package.cmp(&b.package));
    Layout { dirs, moves }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::load::parse_text;
    use std::sync::Arc;

    fn cfg(files: &[(&str, &str)]) -> DeclarativeConfig {
        let mut cfg = DeclarativeConfig::default();
        for (f, text) in files {
            let file: Arc<Path> = Path::new("/cat").join(f).into();
            assert!(parse_text(text, &file, &mut cfg).is_empty(), "{f}");
        }
        cfg
    }

    fn pkg(name: &str) -> String {
        format!("schema: olm.package\nname: {name}\n")
    }

    #[test]
    fn a_package_keeps_a_directory_not_named_after_it() {
        let c = cfg(&[("isovalent-networking/catalog.yaml", &pkg("clife"))]);
        let l = layout(&c, Path::new("/cat"));
        assert_eq!(l.dir("clife"), "isovalent-networking");
        assert!(l.moves.is_empty());
    }

    #[test]
    fn root_files_and_nested_files() {
        let c = cfg(&[
            ("catalog.yaml", &pkg("a")),
            ("b-dir/deep/er/b.yaml", &pkg("b")),
            (
                "c/x.yaml",
                "schema: olm.channel\npackage: c\nname: s\nentries: []\n",
            ),
        ]);
        let l = layout(&c, Path::new("/cat"));
        assert_eq!(l.dir("a"), "a");
        assert_eq!(l.dir("b"), "b-dir");
        // No olm.package blob: its own name.
        assert_eq!(l.dir("c"), "c");
        assert!(l.moves.is_empty());
    }

    #[test]
    fn a_shared_directory_is_kept_by_one_package_and_the_moves_are_reported() {
        let c = cfg(&[
            ("stuff/a.yaml", &pkg("b")),
            ("stuff/b.yaml", &pkg("a")),
            ("x/catalog.yaml", &pkg("x")),
            ("x/y.yaml", &pkg("stuff")),
        ]);
        let l = layout(&c, Path::new("/cat"));
        // `stuff` (its olm.package blob is in x/) moves to stuff/, which it then keeps; a and b
        // were both in stuff/ and move under their names.
        assert_eq!(l.dir("stuff"), "stuff");
        assert_eq!(l.dir("x"), "x");
        assert_eq!(l.dir("a"), "a");
        assert_eq!(l.dir("b"), "b");
        let moved: Vec<(&str, &str, Option<&str>)> = l
            .moves
            .iter()
            .map(|m| (m.package.as_str(), m.from.as_str(), m.kept_by.as_deref()))
            .collect();
        assert_eq!(
            moved,
            [
                ("a", "stuff", Some("stuff")),
                ("b", "stuff", Some("stuff")),
                ("stuff", "x", Some("x"))
            ]
        );
        let dirs: BTreeSet<&String> = l.dirs.values().collect();
        assert_eq!(dirs.len(), l.dirs.len(), "one directory per package");
    }
}
