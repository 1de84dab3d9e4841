//! A disk cache of extracted bundle images, by digest. An image manifest's bundle lives at
//! `<root>/sha256/<hex>/`; a bundle pulled through an index lives at
//! `<root>/sha256/<index hex>@<os>-<arch>[-<variant>]/`, since an index names one image per
//! platform. An image pinned by digest is found without asking any registry; a tag is resolved
//! to its digest first (one manifest request), and the image is then pulled by that digest, so
//! an entry always holds what its name says. Pulls go to a fresh directory created exclusively
//! under the root and are renamed into place: a crashed or concurrent pull never leaves or mixes
//! a half entry.

use std::path::{Path, PathBuf};

use super::image::Platform;

/// The default cache root: `$XDG_CACHE_HOME/olmctl/bundles`, else `~/.cache/olmctl/bundles`,
/// else `olmctl-bundles-<uid>` under the system temp dir.
pub fn default_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        });
    match base {
        Some(b) => b.join("olmctl").join("bundles"),
        // SAFETY: getuid has no preconditions.
        None => std::env::temp_dir().join(format!("olmctl-bundles-{}", unsafe { libc::getuid() })),
    }
}

fn platform_suffix(p: &Platform) -> String {
    match &p.variant {
        Some(v) => format!("{}-{}-{v}", p.os, p.architecture),
        None => format!("{}-{}", p.os, p.architecture),
    }
}

/// The entry directory of `digest` (`sha256:<64 hex>`), for a platform when `digest` is an
/// index's.
fn entry(root: &Path, digest: &str, index_platform: Option<&Platform>) -> Option<PathBuf> {
    crate::oci::digest::parse(digest).ok()?;
    let (alg, hex) = digest.split_once(':')?;
    let name = match index_platform {
        Some(p) => format!("{hex}@{}", platform_suffix(p)),
        None => hex.to_string(),
    };
    Some(root.join(alg).join(name))
}

fn complete(e: &Path) -> bool {
    std::fs::symlink_metadata(e).is_ok_and(|m| m.is_dir())
        && crate::bundle::load::bundle_root(e).is_some()
}

/// The cached bundle of `digest` (an image manifest's, or an index's for `platform`).
pub fn lookup(root: &Path, digest: &str, platform: &Platform) -> Option<PathBuf> {
    [
        entry(root, digest, None)?,
        entry(root, digest, Some(platform))?,
    ]
    .into_iter()
    .find(|e| complete(e))
}

/// A fresh, empty directory for one pull, created exclusively under `root`.
pub fn scratch(root: &Path) -> Result<PathBuf, String> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    loop {
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = root.join(format!(".pull-{}-{nanos}-{n}", std::process::id()));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("{}: {e}", p.display())),
        }
    }
}

/// Moves a pulled bundle from `pulled` into the cache and returns its entry: under the image
/// manifest's digest, or under the index's digest and `platform` when it was pulled through an
/// index. When another process stored the same entry meanwhile, its entry is kept.
pub fn store(
    root: &Path,
    digest: &str,
    index_platform: Option<&Platform>,
    pulled: &Path,
) -> Result<PathBuf, String> {
    let e = entry(root, digest, index_platform)
        .ok_or_else(|| format!("{digest} is not a sha256 digest"))?;
    if let Some(parent) = e.parent() {
        std::fs::create_dir_all(parent).map_err(|x| format!("{}: {x}", parent.display()))?;
    }
    match std::fs::rename(pulled, &e) {
        Ok(()) => Ok(e),
        Err(_) if complete(&e) => {
            let _ = std::fs::remove_dir_all(pulled);
            Ok(e)
        }
        Err(x) => {
            let _ = std::fs::remove_dir_all(pulled);
            Err(format!("{}: {x}", e.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_lookup_by_digest_and_platform() {
        let root = tempfile::tempdir().expect("tmp");
        let d = crate::oci::digest::sha256(b"bundle");
        let amd = Platform::parse("linux/amd64").expect("platform");
        let arm = Platform::parse("linux/arm64").expect("platform");
        assert!(lookup(root.path(), &d, &amd).is_none());
        let fill = |s: &Path| {
            std::fs::create_dir_all(s.join("manifests")).expect("mkdir");
            std::fs::create_dir_all(s.join("metadata")).expect("mkdir");
        };
        // Scratch directories are fresh and distinct.
        let (s1, s2) = (
            scratch(root.path()).expect("s1"),
            scratch(root.path()).expect("s2"),
        );
        assert_ne!(s1, s2);
        assert_eq!(std::fs::read_dir(&s1).expect("s1").count(), 0);
        fill(&s1);
        let e = store(root.path(), &d, None, &s1).expect("store");
        assert_eq!(lookup(root.path(), &d, &amd), Some(e.clone()));
        assert_eq!(lookup(root.path(), &d, &arm), Some(e));
        // Through an index: per platform.
        let idx = crate::oci::digest::sha256(b"index");
        fill(&s2);
        let e = store(root.path(), &idx, Some(&amd), &s2).expect("store");
        assert_eq!(lookup(root.path(), &idx, &amd), Some(e));
        assert!(lookup(root.path(), &idx, &arm).is_none());
        // Not a digest, or a path trick: never an entry.
        assert!(lookup(root.path(), "sha256:../../etc", &amd).is_none());
        let s3 = scratch(root.path()).expect("s3");
        assert!(store(root.path(), "latest", None, &s3).is_err());
    }
}
