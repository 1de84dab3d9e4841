//! A disk cache of extracted bundle images, by digest: `<root>/sha256/<hex>/` holds the bundle's
//! filesystem (`manifests/`, `metadata/`, ...) exactly as `bundle unpack` extracts it. An image
//! pinned by digest is found without asking any registry; a tag is resolved to its digest
//! first (a manifest request), and only a miss downloads layers. Entries are written under a
//! temporary name and renamed into place, so a crashed pull never leaves a half entry.

use std::path::{Path, PathBuf};

/// The default cache root: `$XDG_CACHE_HOME/olmctl/bundles`, else `~/.cache/olmctl/bundles`,
/// else a directory under the system temp dir.
pub fn default_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("olmctl").join("bundles")
}

/// The entry directory of `digest` (`sha256:<64 hex>`), when `digest` is one.
fn entry(root: &Path, digest: &str) -> Option<PathBuf> {
    crate::oci::digest::parse(digest).ok()?;
    let (alg, hex) = digest.split_once(':')?;
    Some(root.join(alg).join(hex))
}

/// The cached bundle of `digest`, if present.
pub fn lookup(root: &Path, digest: &str) -> Option<PathBuf> {
    let e = entry(root, digest)?;
    let m = std::fs::symlink_metadata(&e).ok()?;
    (m.is_dir() && crate::bundle::load::bundle_root(&e).is_some()).then_some(e)
}

/// A fresh directory name for a pull into the cache (not created).
pub fn scratch(root: &Path) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    root.join(format!(".pull-{}-{n}", std::process::id()))
}

/// Moves a pulled bundle from `pulled` into the cache under `digest` and returns its entry. When
/// another process stored the same digest meanwhile, its entry is kept.
pub fn store(root: &Path, digest: &str, pulled: &Path) -> Result<PathBuf, String> {
    let e = entry(root, digest).ok_or_else(|| format!("{digest} is not a sha256 digest"))?;
    if let Some(parent) = e.parent() {
        std::fs::create_dir_all(parent).map_err(|x| format!("{}: {x}", parent.display()))?;
    }
    match std::fs::rename(pulled, &e) {
        Ok(()) => Ok(e),
        Err(_) if lookup(root, digest).is_some() => {
            let _ = std::fs::remove_dir_all(pulled);
            Ok(e)
        }
        Err(x) => Err(format!("{}: {x}", e.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_lookup_by_digest() {
        let root = tempfile::tempdir().expect("tmp");
        let d = crate::oci::digest::sha256(b"bundle");
        assert!(lookup(root.path(), &d).is_none());
        let s = scratch(root.path());
        std::fs::create_dir_all(s.join("manifests")).expect("mkdir");
        std::fs::create_dir_all(s.join("metadata")).expect("mkdir");
        let e = store(root.path(), &d, &s).expect("store");
        assert_eq!(lookup(root.path(), &d), Some(e.clone()));
        assert!(e.starts_with(root.path().join("sha256")));
        // Not a digest, or a path trick: never an entry.
        assert!(lookup(root.path(), "sha256:../../etc").is_none());
        assert!(store(root.path(), "latest", &s).is_err());
    }
}
