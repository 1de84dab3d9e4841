//! Safe layer extraction.
//!
//! Every entry path is checked before anything is written: absolute paths, `..` components
//! and non-UTF-8 names are refused; symlinks may only point inside the target; hard links only
//! to files already extracted; device files and FIFOs are refused; nothing is ever written
//! through a symlink. The uncompressed stream is counted against a size cap (decompression
//! bombs stop early) and hashed, and the hash must equal the config's `diff_id`.
//! OCI whiteouts (`.wh.<name>`, `.wh..wh..opq`) remove what lower layers wrote.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::digest::Hasher;

/// Caps on what a pull may write.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Total uncompressed bytes over all layers.
    pub max_bytes: u64,
    /// Total entries over all layers.
    pub max_entries: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 2 << 30,
            max_entries: 1_000_000,
        }
    }
}

/// What is left of the limits while layers are applied.
#[derive(Debug)]
pub struct Budget {
    limits: Limits,
    bytes: u64,
    entries: u64,
    /// Regular files written.
    pub files: u64,
}

impl Budget {
    /// A fresh budget.
    pub fn new(limits: Limits) -> Budget {
        Budget {
            limits,
            bytes: 0,
            entries: 0,
            files: 0,
        }
    }

    /// Uncompressed bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Reads through, hashing and counting, failing once the budget is exceeded.
struct Metered<'a, R> {
    inner: R,
    hasher: Hasher,
    used: &'a mut u64,
    max: u64,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        *self.used += n as u64;
        if *self.used > self.max {
            return Err(io::Error::other(format!(
                "uncompressed content exceeds the size cap of {} bytes (raise it with --max-size)",
                self.max
            )));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Which part of the image filesystem to extract.
#[derive(Debug, Clone, Default)]
pub struct Select {
    /// Only entries below this directory (e.g. `configs`), written relative to it.
    pub prefix: Option<String>,
}

/// Applies one layer blob to `dest`. `what` names the layer in errors; `diff_id`, when
/// given, must equal the digest of the uncompressed tar.
pub fn apply_layer(
    blob: &[u8],
    what: &str,
    diff_id: Option<&str>,
    dest: &Path,
    select: &Select,
    budget: &mut Budget,
) -> Result<(), String> {
    let reader: Box<dyn Read> = match blob {
        [0x1f, 0x8b, ..] => Box::new(flate2::read::GzDecoder::new(blob)),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => {
            return Err(format!(
                "{what}: zstd-compressed layers are not supported; push the image with gzip layers"
            ));
        }
        _ => Box::new(blob),
    };
    let max = budget.limits.max_bytes;
    let mut used = budget.bytes;
    let mut metered = Metered {
        inner: reader,
        hasher: Hasher::default(),
        used: &mut used,
        max,
    };
    let prefix: Vec<String> = select
        .prefix
        .as_deref()
        .map(|p| {
            p.split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut written = HashSet::new();
    {
        let mut archive = tar::Archive::new(&mut metered);
        let entries = archive
            .entries()
            .map_err(|e| format!("{what}: not a tar archive: {e}"))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| format!("{what}: broken tar: {e}"))?;
            budget.entries += 1;
            if budget.entries > budget.limits.max_entries {
                return Err(format!(
                    "{what}: more than {} entries; refusing to extract",
                    budget.limits.max_entries
                ));
            }
            let raw = entry.path_bytes().into_owned();
            let name = String::from_utf8_lossy(&raw).into_owned();
            let err = |msg: &str| format!("{what}: entry {name:?}: {msg}");
            let parts = clean_path(&raw).map_err(|m| err(&m))?;
            let Some(rel) = strip(&parts, &prefix) else {
                continue;
            };
            if rel.is_empty() {
                continue;
            }
            let last = rel[rel.len() - 1].as_str();
            if let Some(hidden) = last.strip_prefix(".wh.") {
                let parent = &rel[..rel.len() - 1];
                let dir = safe_dir(dest, parent, false).map_err(|m| err(&m))?;
                if let Some(dir) = dir {
                    if hidden == ".wh..opq" {
                        clear_dir(&dir, &written).map_err(|m| err(&m))?;
                    } else {
                        remove_any(&dir.join(hidden)).map_err(|m| err(&m))?;
                    }
                }
                continue;
            }
            let parent = safe_dir(dest, &rel[..rel.len() - 1], true)
                .map_err(|m| err(&m))?
                .unwrap_or_else(|| dest.to_path_buf());
            let target = parent.join(last);
            let kind = entry.header().entry_type();
            match kind {
                tar::EntryType::Directory => {
                    match fs::symlink_metadata(&target) {
                        Ok(m) if m.is_dir() => {}
                        Ok(_) => {
                            remove_any(&target).map_err(|m| err(&m))?;
                            fs::create_dir(&target).map_err(|e| err(&e.to_string()))?;
                        }
                        Err(_) => fs::create_dir(&target).map_err(|e| err(&e.to_string()))?,
                    }
                    set_mode(&target, 0o755);
                }
                tar::EntryType::Regular | tar::EntryType::Continuous => {
                    remove_any(&target).map_err(|m| err(&m))?;
                    let mode = entry.header().mode().unwrap_or(0o644);
                    let mut f = fs::File::create(&target).map_err(|e| err(&e.to_string()))?;
                    io::copy(&mut entry, &mut f).map_err(|e| err(&e.to_string()))?;
                    set_mode(&target, if mode & 0o111 != 0 { 0o755 } else { 0o644 });
                    budget.files += 1;
                }
                tar::EntryType::Symlink => {
                    let link = entry
                        .link_name_bytes()
                        .ok_or_else(|| err("symlink without a target"))?
                        .into_owned();
                    check_symlink(&rel, &link).map_err(|m| err(&m))?;
                    remove_any(&target).map_err(|m| err(&m))?;
                    symlink(&link, &target).map_err(|e| err(&e))?;
                }
                tar::EntryType::Link => {
                    let link = entry
                        .link_name_bytes()
                        .ok_or_else(|| err("hard link without a target"))?
                        .into_owned();
                    let lparts = clean_path(&link).map_err(|m| err(&format!("hard link {m}")))?;
                    let lrel = strip(&lparts, &prefix)
                        .filter(|r| !r.is_empty())
                        .ok_or_else(|| err("hard link points outside the extracted tree"))?;
                    let src = match safe_dir(dest, &lrel[..lrel.len() - 1], false) {
                        Ok(Some(d)) => d.join(&lrel[lrel.len() - 1]),
                        _ => return Err(err("hard link target was not extracted before it")),
                    };
                    match fs::symlink_metadata(&src) {
                        Ok(m) if m.is_file() => {}
                        _ => {
                            return Err(err(
                                "hard link target is not a regular file extracted before it",
                            ));
                        }
                    }
                    remove_any(&target).map_err(|m| err(&m))?;
                    fs::hard_link(&src, &target).map_err(|e| err(&e.to_string()))?;
                    budget.files += 1;
                }
                tar::EntryType::Char | tar::EntryType::Block | tar::EntryType::Fifo => {
                    return Err(err("device files and FIFOs are refused"));
                }
                other => {
                    return Err(err(&format!("unsupported tar entry type {other:?}")));
                }
            }
            written.insert(target);
        }
        // Read the archive to its end so the hash covers the whole stream.
        let mut rest = archive.into_inner();
        io::copy(&mut rest, &mut io::sink()).map_err(|e| format!("{what}: {e}"))?;
    }
    let actual = std::mem::take(&mut metered.hasher).finish();
    drop(metered);
    budget.bytes = used;
    if let Some(expected) = diff_id
        && actual != expected
    {
        return Err(format!(
            "{what}: uncompressed digest {actual} does not match the config's diff_id {expected}"
        ));
    }
    Ok(())
}

/// Splits an archive path into components: `./` and empty parts dropped, absolute paths,
/// `..` and non-UTF-8 refused.
fn clean_path(raw: &[u8]) -> Result<Vec<String>, String> {
    let s = std::str::from_utf8(raw).map_err(|_| "name is not UTF-8".to_string())?;
    if s.starts_with('/') {
        return Err("absolute paths are refused".into());
    }
    if s.contains('\0') {
        return Err("NUL in name".into());
    }
    let mut out = Vec::new();
    for c in s.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err("`..` in a path is refused".into()),
            c => out.push(c.to_string()),
        }
    }
    Ok(out)
}

/// `parts` below `prefix`, relative to it; `None` when outside.
fn strip(parts: &[String], prefix: &[String]) -> Option<Vec<String>> {
    if parts.len() < prefix.len() || parts[..prefix.len()] != *prefix {
        return None;
    }
    Some(parts[prefix.len()..].to_vec())
}

/// A symlink at `rel` (components below the target root) pointing at `link` must stay inside
/// the root: relative, and never climbing above it.
fn check_symlink(rel: &[String], link: &[u8]) -> Result<(), String> {
    let l = std::str::from_utf8(link).map_err(|_| "symlink target is not UTF-8".to_string())?;
    if l.is_empty() {
        return Err("symlink with an empty target".into());
    }
    if l.starts_with('/') {
        return Err(format!("symlink to absolute path {l:?} escapes the target"));
    }
    let mut depth = rel.len() as i64 - 1;
    for c in l.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("symlink to {l:?} escapes the target"));
                }
            }
            _ => depth += 1,
        }
    }
    Ok(())
}

/// The directory `dest/parts...`, each component checked to be a real directory (never a
/// symlink). With `create`, missing directories are made (and files in the way replaced, as a
/// later layer may); without, `None` when it does not exist.
fn safe_dir(dest: &Path, parts: &[String], create: bool) -> Result<Option<PathBuf>, String> {
    let mut p = dest.to_path_buf();
    for c in parts {
        p.push(c);
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "would write through the symlink {}; refused",
                    p.strip_prefix(dest).unwrap_or(&p).display()
                ));
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) if create => {
                fs::remove_file(&p).map_err(|e| e.to_string())?;
                fs::create_dir(&p).map_err(|e| e.to_string())?;
            }
            Ok(_) => return Ok(None),
            Err(_) if create => {
                fs::create_dir(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                set_mode(&p, 0o755);
            }
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(p))
}

/// Removes whatever is at `p` (a symlink itself, never its target).
fn remove_any(p: &Path) -> Result<(), String> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p).map_err(|e| e.to_string()),
        Ok(_) => fs::remove_file(p).map_err(|e| e.to_string()),
        Err(_) => Ok(()),
    }
}

/// Opaque whiteout: removes what lower layers put in `dir`, keeping this layer's entries.
fn clear_dir(dir: &Path, keep: &HashSet<PathBuf>) -> Result<(), String> {
    for e in fs::read_dir(dir).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        if !keep.contains(&p) {
            remove_any(&p)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(link: &[u8], at: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(link), at).map_err(|e| e.to_string())
}

#[cfg(not(unix))]
fn symlink(_: &[u8], _: &Path) -> Result<(), String> {
    Err("symlinks are not supported on this platform".into())
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = fs::set_permissions(p, fs::Permissions::from_mode(mode));
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::layer::LayerBuilder;

    #[test]
    fn extracts_a_layer_and_checks_the_diff_id() {
        let mut l = LayerBuilder::new(0);
        l.file("manifests/csv.yaml", b"kind: x\n".to_vec(), false)
            .file("bin/run", b"#!/bin/sh\n".to_vec(), true);
        let built = l.build();
        let d = tempfile::tempdir().unwrap();
        let mut b = Budget::new(Limits::default());
        apply_layer(
            &built.blob,
            "l",
            Some(&built.diff_id),
            d.path(),
            &Select::default(),
            &mut b,
        )
        .unwrap();
        assert_eq!(
            fs::read(d.path().join("manifests/csv.yaml")).unwrap(),
            b"kind: x\n"
        );
        assert_eq!(b.files, 2);
        let other = tempfile::tempdir().unwrap();
        let e = apply_layer(
            &built.blob,
            "l",
            Some(&built.digest),
            other.path(),
            &Select::default(),
            &mut Budget::new(Limits::default()),
        )
        .unwrap_err();
        assert!(e.contains("does not match the config's diff_id"), "{e}");
    }

    #[test]
    fn prefix_selects_and_strips() {
        let mut l = LayerBuilder::new(0);
        l.file("configs/a/catalog.yaml", b"a".to_vec(), false)
            .file("bin/opm", b"x".to_vec(), true);
        let d = tempfile::tempdir().unwrap();
        let sel = Select {
            prefix: Some("/configs".into()),
        };
        apply_layer(
            &l.build().blob,
            "l",
            None,
            d.path(),
            &sel,
            &mut Budget::new(Limits::default()),
        )
        .unwrap();
        assert!(d.path().join("a/catalog.yaml").is_file());
        assert!(!d.path().join("bin").exists());
    }

    #[test]
    fn size_cap_stops_a_bomb() {
        let big = vec![0u8; 4 << 20];
        let mut l = LayerBuilder::new(0);
        l.file("zeros", big, false);
        let blob = l.build().blob;
        assert!(blob.len() < 64 << 10, "compresses well");
        let d = tempfile::tempdir().unwrap();
        let mut b = Budget::new(Limits {
            max_bytes: 1 << 20,
            max_entries: 10,
        });
        let e = apply_layer(&blob, "l", None, d.path(), &Select::default(), &mut b).unwrap_err();
        assert!(e.contains("size cap"), "{e}");
    }

    /// A layer of a root tree ([`LayerBuilder::rootfs`]) unpacks with olmctl's own extraction,
    /// symlinks as symlinks.
    #[cfg(unix)]
    #[test]
    fn a_root_tree_layer_unpacks_symlinks_as_symlinks() {
        let a = tempfile::tempdir().unwrap();
        crate::oci::layer::tests::debian_like_tree(a.path(), false);
        let mut la = LayerBuilder::new(7);
        la.rootfs(a.path()).unwrap();
        let out = tempfile::tempdir().unwrap();
        let built = la.build();
        apply_layer(
            &built.blob,
            "rootfs",
            Some(&built.diff_id),
            out.path(),
            &Select::default(),
            &mut Budget::new(Limits::default()),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_link(out.path().join("lib64/ld.so")).unwrap(),
            Path::new("../lib/x86_64-linux-gnu/ld.so")
        );
        assert_eq!(
            std::fs::read(out.path().join("lib64/ld.so")).unwrap(),
            b"\x7fELF"
        );
    }
}
