//! Deterministic layers: a gzipped tar whose bytes depend only on the files in it.
//!
//! Entries are sorted by path, every header carries the same mtime, uid/gid 0, empty user and
//! group names and a fixed mode (0755 for directories and executables, 0644 for other files),
//! and the gzip header has mtime 0, no file name and the "unknown" OS byte. The same files
//! therefore always give the same layer digest, on any machine.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use flate2::{Compression, GzBuilder};

use super::digest::sha256;
use super::media;

/// One file or directory to put in a layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory.
    Dir,
    /// A regular file; `exec` gives mode 0755 instead of 0644.
    File { data: Vec<u8>, exec: bool },
}

/// A built layer: the compressed blob plus the digests a manifest and config need.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The gzipped tar.
    pub blob: Vec<u8>,
    /// Digest of `blob` (the manifest's layer descriptor).
    pub digest: String,
    /// Digest of the uncompressed tar (the config's `rootfs.diff_ids` entry).
    pub diff_id: String,
    /// Media type for an OCI manifest.
    pub media_type: &'static str,
}

/// Collects entries keyed by their path inside the image (no leading `/`), then writes them
/// in a fixed order. Parent directories are added automatically.
#[derive(Debug, Default, Clone)]
pub struct LayerBuilder {
    entries: BTreeMap<String, Entry>,
    mtime: u64,
}

impl LayerBuilder {
    /// A builder whose entries carry `mtime` (seconds since the epoch; 0 unless the caller
    /// honours `SOURCE_DATE_EPOCH`).
    pub fn new(mtime: u64) -> Self {
        LayerBuilder {
            entries: BTreeMap::new(),
            mtime,
        }
    }

    /// Adds a file at `path` (relative, `/`-separated) and its parent directories.
    pub fn file(&mut self, path: &str, data: Vec<u8>, exec: bool) -> &mut Self {
        let path = path.trim_start_matches('/').to_string();
        self.parents(&path);
        self.entries.insert(path, Entry::File { data, exec });
        self
    }

    /// Adds a directory at `path` and its parents.
    pub fn dir(&mut self, path: &str) -> &mut Self {
        let path = path.trim_matches('/').to_string();
        if !path.is_empty() {
            self.parents(&path);
            self.entries.entry(path).or_insert(Entry::Dir);
        }
        self
    }

    fn parents(&mut self, path: &str) {
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            end += i;
            self.entries
                .entry(path[..end].to_string())
                .or_insert(Entry::Dir);
            end += 1;
        }
    }

    /// Adds every regular file below `src` under `dest` in the image (e.g. a bundle's
    /// `manifests/` as `manifests`). Symlinks and special files are refused: an image should
    /// carry what the directory means, not where it happens to point.
    pub fn tree(&mut self, src: &Path, dest: &str) -> Result<&mut Self, String> {
        self.dir(dest);
        let mut stack = vec![(src.to_path_buf(), dest.trim_matches('/').to_string())];
        while let Some((dir, prefix)) = stack.pop() {
            let rd = std::fs::read_dir(&dir)
                .map_err(|e| format!("{}: cannot read directory: {e}", dir.display()))?;
            for ent in rd {
                let ent =
                    ent.map_err(|e| format!("{}: cannot read directory: {e}", dir.display()))?;
                let p = ent.path();
                let name = ent.file_name();
                let Some(name) = name.to_str() else {
                    return Err(format!(
                        "{}: file name is not UTF-8; rename it",
                        p.display()
                    ));
                };
                let target = format!("{prefix}/{name}");
                let meta =
                    std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                let ft = meta.file_type();
                if ft.is_dir() {
                    self.dir(&target);
                    stack.push((p, target));
                } else if ft.is_file() {
                    let data = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                    let exec = is_exec(&meta);
                    self.file(&target, data, exec);
                } else {
                    return Err(format!(
                        "{}: symlinks and special files cannot go into an image; replace it with a regular file",
                        p.display()
                    ));
                }
            }
        }
        Ok(self)
    }

    /// Number of entries (directories included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The uncompressed tar.
    pub fn tar(&self) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, entry) in &self.entries {
            let mut h = tar::Header::new_ustar();
            h.set_mtime(self.mtime);
            h.set_uid(0);
            h.set_gid(0);
            // Writing into a Vec cannot fail; the path was validated as UTF-8 and relative.
            let res = match entry {
                Entry::Dir => {
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_mode(0o755);
                    h.set_size(0);
                    b.append_data(&mut h, format!("{path}/"), std::io::empty())
                }
                Entry::File { data, exec } => {
                    h.set_entry_type(tar::EntryType::Regular);
                    h.set_mode(if *exec { 0o755 } else { 0o644 });
                    h.set_size(data.len() as u64);
                    b.append_data(&mut h, path, data.as_slice())
                }
            };
            debug_assert!(res.is_ok(), "tar entry {path}: {res:?}");
        }
        b.into_inner().unwrap_or_default()
    }

    /// The gzipped layer with its digests.
    pub fn build(&self) -> Layer {
        let tar = self.tar();
        let diff_id = sha256(&tar);
        let blob = gzip(&tar);
        Layer {
            digest: sha256(&blob),
            diff_id,
            blob,
            media_type: media::OCI_LAYER_GZIP,
        }
    }
}

/// Gzip with a fixed header (mtime 0, no name, OS "unknown").
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = GzBuilder::new().mtime(0).operating_system(255).write(
        Vec::with_capacity(data.len() / 4 + 64),
        Compression::default(),
    );
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(data);
    enc.finish().unwrap_or_default()
}

#[cfg(unix)]
fn is_exec(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_exec(_: &std::fs::Metadata) -> bool {
    false
}

/// The mtime layers get: `SOURCE_DATE_EPOCH` when set to a number, else 0.
pub fn source_date_epoch() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry names of a tar, in order.
    fn entry_names(tar: &[u8]) -> Vec<String> {
        let mut a = tar::Archive::new(tar);
        let mut names = Vec::new();
        if let Ok(entries) = a.entries() {
            for e in entries.flatten() {
                if let Ok(p) = e.path() {
                    names.push(p.to_string_lossy().into_owned());
                }
            }
        }
        names
    }

    #[test]
    fn same_files_same_digest_in_any_insertion_order() {
        let mut a = LayerBuilder::new(0);
        a.file("manifests/b.yaml", b"b".to_vec(), false)
            .file("manifests/a.yaml", b"a".to_vec(), false)
            .file("metadata/annotations.yaml", b"x".to_vec(), false);
        let mut b = LayerBuilder::new(0);
        b.file("metadata/annotations.yaml", b"x".to_vec(), false)
            .file("manifests/a.yaml", b"a".to_vec(), false)
            .file("manifests/b.yaml", b"b".to_vec(), false);
        let (la, lb) = (a.build(), b.build());
        assert_eq!(la.digest, lb.digest);
        assert_eq!(la.diff_id, lb.diff_id);
        assert_eq!(
            entry_names(&a.tar()),
            [
                "manifests/",
                "manifests/a.yaml",
                "manifests/b.yaml",
                "metadata/",
                "metadata/annotations.yaml"
            ]
        );
        let mut c = LayerBuilder::new(1);
        c.file("metadata/annotations.yaml", b"x".to_vec(), false)
            .file("manifests/a.yaml", b"a".to_vec(), false)
            .file("manifests/b.yaml", b"b".to_vec(), false);
        assert_ne!(c.build().digest, la.digest, "mtime is part of the content");
    }

    #[test]
    fn headers_are_fixed_and_long_paths_survive() {
        let long = format!("configs/{}/catalog.yaml", "p".repeat(150));
        let mut l = LayerBuilder::new(0);
        l.file(&long, b"data".to_vec(), true);
        let tar = l.tar();
        let mut a = tar::Archive::new(tar.as_slice());
        let mut seen = Vec::new();
        for e in a.entries().unwrap() {
            let e = e.unwrap();
            let h = e.header();
            assert_eq!(h.uid().unwrap(), 0);
            assert_eq!(h.gid().unwrap(), 0);
            assert_eq!(h.mtime().unwrap(), 0);
            assert_eq!(h.username().unwrap(), Some(""));
            seen.push((
                e.path().unwrap().to_string_lossy().into_owned(),
                h.mode().unwrap(),
            ));
        }
        assert_eq!(seen.last().unwrap(), &(long, 0o755));
        let gz = gzip(b"abc");
        assert_eq!(&gz[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        assert_eq!(
            super::super::digest::parse(&l.build().digest)
                .unwrap()
                .len(),
            64
        );
    }
}
