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

/// The cached bundle of `digest` (an image manifest's, or an index's for `platform`); none
/// from a root that is not the user's own ([`own`]).
pub fn lookup(root: &Path, digest: &str, platform: &Platform) -> Option<PathBuf> {
    own(root).ok()?;
    [
        entry(root, digest, None)?,
        entry(root, digest, Some(platform))?,
    ]
    .into_iter()
    .find(|e| complete(e))
}

/// Whether `root` is this user's own cache: a directory (not a link) that the user owns and
/// nobody else may write to. The fallback root is a fixed name in the shared temp dir, where
/// another user could have made it first, and planted a "bundle" under a digest olmctl would
/// then trust.
fn own(root: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(root).map_err(|e| format!("{}: {e}", root.display()))?;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o022 != 0 {
        return Err(format!(
            "{}: the bundle cache is not this user's own directory (a {}, owner uid {}, mode {:o}); set XDG_CACHE_HOME to a directory of yours",
            root.display(),
            if m.file_type().is_symlink() {
                "link"
            } else if m.is_dir() {
                "directory"
            } else {
                "file"
            },
            m.uid(),
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

/// A fresh, empty directory for one pull, created exclusively under `root` (made private, 0700,
/// when it is made here; refused unless it is the user's own: [`own`]).
pub fn scratch(root: &Path) -> Result<PathBuf, String> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if let Some(parent) = root.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    {
        use std::os::unix::fs::DirBuilderExt;
        match std::fs::DirBuilder::new().mode(0o700).create(root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{}: {e}", root.display())),
        }
    }
    own(root)?;
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
    fn a_root_that_is_not_the_users_own_is_neither_read_nor_written() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().expect("tmp");
        // Made here: private.
        let root = t.path().join("cache/bundles");
        let s = scratch(&root).expect("made");
        assert!(s.starts_with(&root));
        let mode = std::fs::metadata(&root).expect("root").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Writable by others (a shared /tmp name someone else could fill): refused.
        let open = t.path().join("open");
        std::fs::create_dir(&open).expect("dir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let e = scratch(&open).expect_err("refused");
        assert!(
            e.contains("not this user's own directory") && e.contains("mode 777"),
            "{e}"
        );
        let digest = format!("sha256:{}", "a".repeat(64));
        let planted = open.join("sha256").join("a".repeat(64));
        std::fs::create_dir_all(planted.join("manifests")).expect("planted");
        std::fs::create_dir_all(planted.join("metadata")).expect("planted");
        std::fs::write(
            planted.join("metadata/annotations.yaml"),
            "annotations: {}\n",
        )
        .expect("planted");
        let linux = Platform {
            os: "linux".into(),
            architecture: "amd64".into(),
            variant: None,
        };
        assert_eq!(lookup(&open, &digest, &linux), None);
        // The same entry in a private root is found.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        assert_eq!(lookup(&open, &digest, &linux), Some(planted));
        // A link in its place: refused too.
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&root, &link).expect("link");
        assert!(scratch(&link).expect_err("refused").contains("(a link,"));
    }

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
