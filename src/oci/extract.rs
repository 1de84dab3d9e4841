//! Safe layer extraction.
//!
//! Every entry path is checked before anything is written: absolute paths, `..` components
//! and non-UTF-8 names are refused; symlinks may only point inside the target; hard links only
//! to files already extracted; device files and FIFOs are refused; nothing is ever written
//! through a symlink. The uncompressed stream is counted against a size cap (decompression
//! bombs stop early) and hashed, and the hash must equal the config's `diff_id`.
//! OCI whiteouts (`.wh.<name>`, `.wh..wh..opq`) remove what lower layers wrote.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::digest::Hasher;
use crate::outdir::{Dir, Kind};

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
    let root = Dir::open(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
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
            let io = |e: io::Error| err(&e.to_string());
            if let Some(hidden) = last.strip_prefix(".wh.") {
                let parent = &rel[..rel.len() - 1];
                let dir = safe_dir(&root, parent, false).map_err(|m| err(&m))?;
                if let Some(dir) = dir {
                    if hidden == ".wh..opq" {
                        clear_dir(&dir, &logical(dest, parent), &written).map_err(io)?;
                    } else {
                        dir.remove_all(OsStr::new(hidden)).map_err(io)?;
                    }
                }
                continue;
            }
            let parent = safe_dir(&root, &rel[..rel.len() - 1], true)
                .map_err(|m| err(&m))?
                .expect("made");
            let name = OsStr::new(last);
            let target = logical(dest, &rel);
            let kind = entry.header().entry_type();
            match kind {
                tar::EntryType::Directory => {
                    match parent.entry(name).map_err(io)?.map(|e| e.kind) {
                        Some(Kind::Dir) => {}
                        Some(_) => {
                            parent.remove_all(name).map_err(io)?;
                            parent.make_dir(name, 0o755).map_err(io)?;
                        }
                        None => parent.make_dir(name, 0o755).map_err(io)?,
                    }
                    if let Ok(Some(d)) = parent.sub(name) {
                        let _ = d.set_mode(0o755);
                    }
                }
                tar::EntryType::Regular | tar::EntryType::Continuous => {
                    // A file replaces a link or file by rename; a directory is removed first.
                    if parent.entry(name).map_err(io)?.map(|e| e.kind) == Some(Kind::Dir) {
                        parent.remove_all(name).map_err(io)?;
                    }
                    let mode = entry.header().mode().unwrap_or(0o644);
                    let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
                    parent
                        .write_with(name, Some(mode), |f| io::copy(&mut entry, f).map(drop))
                        .map_err(io)?;
                    budget.files += 1;
                }
                tar::EntryType::Symlink => {
                    let link = entry
                        .link_name_bytes()
                        .ok_or_else(|| err("symlink without a target"))?
                        .into_owned();
                    check_symlink(&rel, &link).map_err(|m| err(&m))?;
                    parent.remove_all(name).map_err(io)?;
                    parent.symlink(OsStr::from_bytes(&link), name).map_err(io)?;
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
                    let not_before = || err("hard link target was not extracted before it");
                    let Ok(Some(src)) = safe_dir(&root, &lrel[..lrel.len() - 1], false) else {
                        return Err(not_before());
                    };
                    let src_name = OsStr::new(&lrel[lrel.len() - 1]);
                    if src.entry(src_name).ok().flatten().map(|e| e.kind) != Some(Kind::File) {
                        return Err(err(
                            "hard link target is not a regular file extracted before it",
                        ));
                    }
                    parent.remove_all(name).map_err(io)?;
                    parent.hard_link(&src, src_name, name).map_err(io)?;
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

/// `dest/parts...`, the path an entry is known by (in `written`).
fn logical(dest: &Path, parts: &[String]) -> PathBuf {
    let mut p = dest.to_path_buf();
    p.extend(parts);
    p
}

/// The directory `parts...` below `root`, opened one component at a time and never through a
/// symlink. With `create`, missing directories are made (and files in the way replaced, as a
/// later layer may); without, `None` when it does not exist.
fn safe_dir(root: &Dir, parts: &[String], create: bool) -> Result<Option<Dir>, String> {
    let through = |i: usize| {
        format!(
            "would write through the symlink {}; refused",
            parts[..=i].join("/")
        )
    };
    let mut dir = root.try_clone().map_err(|e| e.to_string())?;
    for (i, c) in parts.iter().enumerate() {
        let name = OsStr::new(c);
        let kind = dir.entry(name).map_err(|e| e.to_string())?.map(|e| e.kind);
        match kind {
            Some(Kind::Link) => return Err(through(i)),
            Some(Kind::Dir) => {}
            Some(_) if create => {
                dir.remove_file(name).map_err(|e| e.to_string())?;
                dir.make_dir(name, 0o755).map_err(|e| e.to_string())?;
            }
            None if create => {
                dir.make_dir(name, 0o755).map_err(|e| e.to_string())?;
            }
            Some(_) | None => return Ok(None),
        }
        dir = match dir.sub(name) {
            Ok(Some(d)) => d,
            Ok(None) => {
                return Err(format!(
                    "{} was removed while extracting",
                    parts[..=i].join("/")
                ));
            }
            // Something else put there since it was looked at (a link, most likely).
            Err(_) if dir.entry(name).ok().flatten().map(|e| e.kind) == Some(Kind::Link) => {
                return Err(through(i));
            }
            Err(e) => {
                return Err(format!(
                    "{} changed while it was extracted into ({e}); refused",
                    parts[..=i].join("/")
                ));
            }
        };
        if kind != Some(Kind::Dir) {
            let _ = dir.set_mode(0o755);
        }
    }
    Ok(Some(dir))
}

/// Opaque whiteout: removes what lower layers put in `dir` (known as `path`), keeping this
/// layer's entries.
fn clear_dir(dir: &Dir, path: &Path, keep: &HashSet<PathBuf>) -> io::Result<()> {
    for n in dir.names()? {
        if !keep.contains(&path.join(&n)) {
            dir.remove_all(&n)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::layer::LayerBuilder;
    use std::fs;

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

    /// Issue 39 item 8: while layers of files below `d/` are extracted again and again, a
    /// thread keeps exchanging `d` with a link to a victim directory outside: a layer is
    /// extracted or refused (the link, or the change, named), and the victim is never written.
    #[test]
    fn a_directory_swapped_for_a_link_while_extracting_is_never_followed() {
        use olmctl_testdata::race::Swapper;
        let mut b = tar::Builder::new(Vec::new());
        for i in 0..3 {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_size(3);
            h.set_mode(0o644);
            b.append_data(&mut h, format!("d/f{i}"), &b"new"[..])
                .unwrap();
        }
        let blob = b.into_inner().unwrap();
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs::create_dir(&victim).unwrap();
        fs::write(victim.join("f0"), "precious").unwrap();
        let dest = t.path().join("dest");
        fs::create_dir_all(dest.join("d")).unwrap();
        std::os::unix::fs::symlink(&victim, dest.join("link")).unwrap();
        let swapper = Swapper::exchange(&dest.join("d"), &dest.join("link"));
        let (mut runs, mut refused) = (0, 0);
        while runs < 3_000 || (swapper.swaps() < 2_000 && runs < 100_000) {
            let r = apply_layer(
                &blob,
                "l",
                None,
                &dest,
                &Select::default(),
                &mut Budget::new(Limits::default()),
            );
            if let Err(e) = r {
                assert!(
                    e.contains("through the symlink d") || e.contains("d changed while"),
                    "{e}"
                );
                refused += 1;
            }
            runs += 1;
        }
        let swaps = swapper.stop();
        eprintln!("{swaps} swaps: {runs} layers, {refused} refused");
        assert!(swaps >= 2_000, "only {swaps} swaps in {runs} layers");
        assert_eq!(fs::read_to_string(victim.join("f0")).unwrap(), "precious");
        assert_eq!(
            fs::read_dir(&victim).unwrap().count(),
            1,
            "nothing made there"
        );
    }
}
