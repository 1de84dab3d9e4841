//! Files found inside a directory a command was given (a catalog, a bundle, a package with its
//! `ci.yaml` and templates, a manifests directory): such a file is read only where it resolves
//! inside that directory. A symbolic link committed to a repository is written by whoever wrote
//! the pull request and may point anywhere (a CI runner's credentials, `/proc`); an image built
//! from the directory keeps the link, not the file, so a link leaving it has no meaning there
//! either. The directory itself may be a link (the user chose it), and links inside it that
//! stay inside are followed.

use std::io;
use std::path::{Path, PathBuf};

/// A directory whose files are read only where they resolve inside it.
#[derive(Debug, Clone)]
pub struct Tree {
    root: PathBuf,
    real: PathBuf,
}

impl Tree {
    /// The tree at `root` (resolved once, links included).
    pub fn new(root: &Path) -> io::Result<Tree> {
        Ok(Tree {
            root: root.to_path_buf(),
            real: std::fs::canonicalize(root)?,
        })
    }

    /// The directory as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Checks that `path` (a path below the root) resolves inside the tree: an error naming
    /// where it leads otherwise. A path that does not resolve (a missing file, a dangling link)
    /// is the error of resolving it.
    pub fn check(&self, path: &Path) -> io::Result<()> {
        let real = std::fs::canonicalize(path)?;
        if real.starts_with(&self.real) {
            return Ok(());
        }
        // What is there, for the message ("/dev/zero, a character device").
        let kind = std::fs::metadata(&real)
            .ok()
            .filter(|m| !m.is_file())
            .map(|m| format!(", {}", super::kind_of(m.file_type())))
            .unwrap_or_default();
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "resolves through a symbolic link to {}{kind}, outside {}: olmctl reads only \
                 files inside the directory it is given (a link in a repository may point \
                 anywhere, and an image built from the directory keeps the link, not the \
                 file); replace the link with the file itself",
                real.display(),
                self.root.display()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_may_stay_inside_but_not_leave() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.yaml"), "a").unwrap();
        std::fs::write(d.path().join("secret"), "s").unwrap();
        symlink("sub/a.yaml", root.join("in.yaml")).unwrap();
        symlink("../secret", root.join("out.yaml")).unwrap();
        symlink(d.path(), root.join("up")).unwrap();
        symlink("/dev/zero", root.join("zero")).unwrap();
        // The root named through a link of its own is fine.
        symlink(&root, d.path().join("alias")).unwrap();
        for t in [
            Tree::new(&root).unwrap(),
            Tree::new(&d.path().join("alias")).unwrap(),
        ] {
            assert!(t.check(&t.root().join("sub/a.yaml")).is_ok());
            assert!(t.check(&t.root().join("in.yaml")).is_ok());
            let e = t.check(&t.root().join("out.yaml")).unwrap_err();
            assert!(
                e.to_string().contains("outside") && e.to_string().contains("secret"),
                "{e}"
            );
            // A regular file below a linked directory leaves the tree too.
            assert!(t.check(&t.root().join("up/secret")).is_err());
            assert!(t.check(&t.root().join("missing")).is_err());
            let e = t.check(&t.root().join("zero")).unwrap_err();
            assert!(
                e.to_string()
                    .contains("/dev/zero, a character device, outside"),
                "{e}"
            );
        }
    }
}
