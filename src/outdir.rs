//! Writing below an output directory without ever following a symbolic link inside it.
//!
//! The rule every writer follows (`bundle generate -O`, `catalog fmt` in place and `--out`,
//! `--oci-layout`, extraction by `bundle unpack` and `catalog pull`): the directory the user
//! names may itself be a symlink (the user chose it), but below it nothing is written, created
//! or removed through a symlink. A write whose path crosses a link already there (a linked
//! subdirectory, or a linked file where a file goes) is refused before anything is changed,
//! with an error naming the link; removing a stale file removes a link itself, never its
//! target. (Extraction replaces a link where an image puts a file, as later layers may; its
//! target directory starts empty.)

use std::fmt;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// A write below an output directory that cannot be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutError {
    /// The path concerned (the symlink when one is in the way).
    pub path: PathBuf,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for OutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for OutError {}

fn io_err(path: &Path, e: std::io::Error) -> OutError {
    OutError {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The error for a symlink at `link` inside the output directory `root`.
pub fn link_refused(root: &Path, link: &Path) -> OutError {
    OutError {
        path: link.to_path_buf(),
        message: format!(
            "is a symbolic link inside the output directory {}; olmctl does not write through \
             links there: remove the link or choose another directory",
            root.display()
        ),
    }
}

/// Checks that no existing component of `root/rel` below `root` is a symlink (components that
/// do not exist yet are fine). `rel` must be relative, without `..`.
pub fn check(root: &Path, rel: &Path) -> Result<(), OutError> {
    let mut p = root.to_path_buf();
    for c in rel.components() {
        match c {
            Component::Normal(n) => p.push(n),
            Component::CurDir => continue,
            _ => {
                return Err(OutError {
                    path: root.join(rel),
                    message: "is not a path inside the output directory".into(),
                });
            }
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => return Err(link_refused(root, &p)),
            Ok(_) => {}
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Writes `data` to `root/rel`, creating missing directories, refusing (before writing) when
/// a component below `root` is a symlink.
pub fn write(root: &Path, rel: &Path, data: &[u8]) -> Result<(), OutError> {
    check(root, rel)?;
    let p = root.join(rel);
    if let Some(dir) = p.parent() {
        fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    }
    fs::write(&p, data).map_err(|e| io_err(&p, e))
}

/// Removes the file `p` (a symlink itself, never its target); a missing file is fine.
pub fn remove_file(p: &Path) -> Result<(), OutError> {
    match fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(p, e)),
        _ => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_links_below_the_root_and_follows_the_root() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs::create_dir(&victim).unwrap();
        let root = t.path().join("out");
        fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&victim, root.join("sub")).unwrap();
        let e = write(&root, Path::new("sub/f"), b"x").unwrap_err();
        assert_eq!(e.path, root.join("sub"));
        assert!(!victim.join("f").exists());
        std::os::unix::fs::symlink(victim.join("g"), root.join("g")).unwrap();
        assert!(write(&root, Path::new("g"), b"x").is_err());
        assert!(!victim.join("g").exists());
        assert!(write(&root, Path::new("../x"), b"x").is_err());
        // The root itself may be a link.
        let linked_root = t.path().join("linked");
        std::os::unix::fs::symlink(&root, &linked_root).unwrap();
        write(&linked_root, Path::new("a/b"), b"x").unwrap();
        assert_eq!(fs::read(root.join("a/b")).unwrap(), b"x");
    }
}
