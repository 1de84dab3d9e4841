//! Deterministic layers: a gzipped tar whose bytes depend only on the files in it.
//!
//! Entries are sorted by path, every header carries the same mtime, uid/gid 0, empty user and
//! group names and a fixed mode (0755 for directories and executables, 0644 for other files;
//! a root file system added with [`LayerBuilder::rootfs`] keeps its modes and symlinks), and the
//! gzip header has mtime 0, no file name and the "unknown" OS byte. The same files therefore
//! always give the same layer digest, on any machine.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use flate2::{Compression, GzBuilder};

use super::digest::sha256;
use super::media;

/// One file, directory or symlink to put in a layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory with its permission bits.
    Dir { mode: u32 },
    /// A regular file with its permission bits.
    File { data: Vec<u8>, mode: u32 },
    /// A symbolic link to a relative `target` that stays inside the layer's root.
    Symlink { target: String },
}

/// The mode of a file added without one: 0755 when executable, else 0644.
fn file_mode(exec: bool) -> u32 {
    if exec { 0o755 } else { 0o644 }
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
        self.entries.insert(
            path,
            Entry::File {
                data,
                mode: file_mode(exec),
            },
        );
        self
    }

    /// Adds a directory at `path` and its parents.
    pub fn dir(&mut self, path: &str) -> &mut Self {
        let path = path.trim_matches('/').to_string();
        if !path.is_empty() {
            self.parents(&path);
            self.entries
                .entry(path)
                .or_insert(Entry::Dir { mode: 0o755 });
        }
        self
    }

    fn parents(&mut self, path: &str) {
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            end += i;
            self.entries
                .entry(path[..end].to_string())
                .or_insert(Entry::Dir { mode: 0o755 });
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
                    let data = read(&p)?;
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

    /// Adds the directory tree at `src` as the image's root file system (e.g. Debian packages
    /// unpacked with `dpkg-deb -x`): directories, regular files and symlinks, each keeping its
    /// permission bits (setuid, setgid and sticky included); owners and times are not kept
    /// (uid/gid 0 and the builder's mtime). A symlink must point inside the tree: an absolute
    /// target is written relative to the link (the same file in the image, and never the host's
    /// when the layer is unpacked), a relative one may not climb above the root. Hard links,
    /// device files, FIFOs, sockets and names that are not UTF-8 are refused; symlinks are
    /// never followed.
    pub fn rootfs(&mut self, src: &Path) -> Result<&mut Self, String> {
        let top = std::fs::metadata(src).map_err(|e| format!("{}: {e}", src.display()))?;
        if !top.is_dir() {
            return Err(format!("{}: not a directory", src.display()));
        }
        let mut stack = vec![(src.to_path_buf(), Vec::<String>::new())];
        while let Some((dir, parents)) = stack.pop() {
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
                let mut parts = parents.clone();
                parts.push(name.to_string());
                let target = parts.join("/");
                let meta =
                    std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                let ft = meta.file_type();
                if ft.is_dir() {
                    self.parents(&target);
                    self.entries.insert(
                        target,
                        Entry::Dir {
                            mode: mode_of(&meta, 0o755),
                        },
                    );
                    stack.push((p, parts));
                } else if ft.is_file() {
                    if links(&meta) > 1 {
                        return Err(format!(
                            "{}: a hard link ({} names for one file) cannot go into a layer; \
                             copy the file or make the other names symlinks",
                            p.display(),
                            links(&meta)
                        ));
                    }
                    let data = read(&p)?;
                    self.parents(&target);
                    self.entries.insert(
                        target,
                        Entry::File {
                            data,
                            mode: mode_of(&meta, file_mode(is_exec(&meta))),
                        },
                    );
                } else if ft.is_symlink() {
                    let link =
                        std::fs::read_link(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                    let link = link.to_str().ok_or_else(|| {
                        format!("{}: the symlink's target is not UTF-8", p.display())
                    })?;
                    let link = inside_link(&parts, link)
                        .map_err(|e| format!("{}: symlink to {link:?}: {e}", p.display()))?;
                    self.parents(&target);
                    self.entries.insert(target, Entry::Symlink { target: link });
                } else {
                    return Err(format!(
                        "{}: device files, FIFOs and sockets cannot go into a layer",
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
                Entry::Dir { mode } => {
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_mode(*mode);
                    h.set_size(0);
                    b.append_data(&mut h, format!("{path}/"), std::io::empty())
                }
                Entry::File { data, mode } => {
                    h.set_entry_type(tar::EntryType::Regular);
                    h.set_mode(*mode);
                    h.set_size(data.len() as u64);
                    b.append_data(&mut h, path, data.as_slice())
                }
                Entry::Symlink { target } => {
                    h.set_entry_type(tar::EntryType::Symlink);
                    h.set_mode(0o777);
                    h.set_size(0);
                    b.append_link(&mut h, path, target)
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

/// The permission bits of a file (setuid, setgid and sticky included); `default` where the
/// platform has none.
#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata, _default: u32) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_: &std::fs::Metadata, default: u32) -> u32 {
    default
}

/// How many names the file has.
#[cfg(unix)]
fn links(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(not(unix))]
fn links(_: &std::fs::Metadata) -> u64 {
    1
}

/// A file of a tree, read as every input is (a regular file within the size limit, checked on
/// what is opened: [`crate::input::read`]).
fn read(p: &Path) -> Result<Vec<u8>, String> {
    crate::input::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// The target a symlink at `at` (its path components below the root) gets in a layer: an
/// absolute `link` is made relative to the link's directory (as the image resolves it, with
/// the tree as `/`); a relative one is kept as written. Either way it may not climb above the
/// root.
fn inside_link(at: &[String], link: &str) -> Result<String, String> {
    if link.is_empty() {
        return Err("empty target".into());
    }
    if link.contains('\0') {
        return Err("NUL in the target".into());
    }
    let dir = &at[..at.len().saturating_sub(1)];
    let escapes = || "the target leaves the tree".to_string();
    if let Some(abs) = link.strip_prefix('/') {
        let parts: Vec<&str> = abs
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if parts.contains(&"..") {
            return Err("an absolute target with `..` is refused; write it without".into());
        }
        let common = dir
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a.as_str() == **b)
            .count();
        let mut out: Vec<&str> = vec![".."; dir.len() - common];
        out.extend(&parts[common..]);
        return Ok(if out.is_empty() {
            ".".into()
        } else {
            out.join("/")
        });
    }
    let mut depth = dir.len();
    for c in link.split('/') {
        match c {
            "" | "." => {}
            ".." => depth = depth.checked_sub(1).ok_or_else(escapes)?,
            _ => depth += 1,
        }
    }
    Ok(link.to_string())
}

/// The mtime layers get: `SOURCE_DATE_EPOCH` when set to a number, else 0.
pub fn source_date_epoch() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
pub(super) mod tests {
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

    /// Every entry of a tar: path, type, mode, link target.
    fn listing(tar: &[u8]) -> Vec<(String, char, u32, String)> {
        let mut a = tar::Archive::new(tar);
        a.entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
                assert_eq!(h.mtime().unwrap(), 7);
                let kind = match h.entry_type() {
                    tar::EntryType::Directory => 'd',
                    tar::EntryType::Regular => 'f',
                    tar::EntryType::Symlink => 'l',
                    other => panic!("{other:?}"),
                };
                let link = e
                    .link_name()
                    .unwrap()
                    .map(|l| l.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (
                    e.path().unwrap().to_string_lossy().into_owned(),
                    kind,
                    h.mode().unwrap(),
                    link,
                )
            })
            .collect()
    }

    /// A small root file system with the shapes of a Debian image: absolute and relative
    /// symlinks, a sticky directory, private files (`reversed`: created in the other order).
    #[cfg(unix)]
    pub(in crate::oci) fn debian_like_tree(root: &Path, reversed: bool) {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let mut steps: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| {
                std::fs::create_dir_all(root.join("lib/x86_64-linux-gnu")).unwrap();
                std::fs::write(root.join("lib/x86_64-linux-gnu/ld.so"), b"\x7fELF").unwrap();
                std::fs::set_permissions(
                    root.join("lib/x86_64-linux-gnu/ld.so"),
                    std::fs::Permissions::from_mode(0o755),
                )
                .unwrap();
            }),
            Box::new(|| {
                std::fs::create_dir_all(root.join("lib64")).unwrap();
                symlink("/lib/x86_64-linux-gnu/ld.so", root.join("lib64/ld.so")).unwrap();
            }),
            Box::new(|| {
                std::fs::create_dir_all(root.join("usr/share/doc/gcc-12-base")).unwrap();
                symlink(
                    "/usr/share/doc/gcc-12-base",
                    root.join("usr/share/doc/libgcc"),
                )
                .unwrap();
                symlink("../../../lib64", root.join("usr/share/doc/up")).unwrap();
            }),
            Box::new(|| {
                std::fs::create_dir_all(root.join("tmp")).unwrap();
                std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o1777))
                    .unwrap();
                std::fs::create_dir_all(root.join("etc/secret")).unwrap();
                std::fs::write(root.join("etc/secret/key"), b"k").unwrap();
                std::fs::set_permissions(
                    root.join("etc/secret/key"),
                    std::fs::Permissions::from_mode(0o600),
                )
                .unwrap();
                std::fs::set_permissions(
                    root.join("etc/secret"),
                    std::fs::Permissions::from_mode(0o750),
                )
                .unwrap();
            }),
        ];
        if reversed {
            steps.reverse();
        }
        for s in steps {
            s();
        }
        // Whatever the umask made of the rest.
        for d in [
            "etc",
            "lib",
            "lib/x86_64-linux-gnu",
            "lib64",
            "usr",
            "usr/share",
            "usr/share/doc",
            "usr/share/doc/gcc-12-base",
        ] {
            std::fs::set_permissions(root.join(d), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_root_tree_keeps_modes_and_symlinks_and_is_reproducible() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        debian_like_tree(a.path(), false);
        debian_like_tree(b.path(), true);
        let mut la = LayerBuilder::new(7);
        la.rootfs(a.path()).unwrap();
        let mut lb = LayerBuilder::new(7);
        lb.rootfs(b.path()).unwrap();
        assert_eq!(
            la.build().digest,
            lb.build().digest,
            "same tree, same layer"
        );
        assert_eq!(la.tar(), lb.tar());
        let s = |x: &str| x.to_string();
        assert_eq!(
            listing(&la.tar()),
            [
                (s("etc/"), 'd', 0o755, s("")),
                (s("etc/secret/"), 'd', 0o750, s("")),
                (s("etc/secret/key"), 'f', 0o600, s("")),
                (s("lib/"), 'd', 0o755, s("")),
                (s("lib/x86_64-linux-gnu/"), 'd', 0o755, s("")),
                (s("lib/x86_64-linux-gnu/ld.so"), 'f', 0o755, s("")),
                (s("lib64/"), 'd', 0o755, s("")),
                // Absolute targets point at the same file, relative to the link.
                (
                    s("lib64/ld.so"),
                    'l',
                    0o777,
                    s("../lib/x86_64-linux-gnu/ld.so")
                ),
                (s("tmp/"), 'd', 0o1777, s("")),
                (s("usr/"), 'd', 0o755, s("")),
                (s("usr/share/"), 'd', 0o755, s("")),
                (s("usr/share/doc/"), 'd', 0o755, s("")),
                (s("usr/share/doc/gcc-12-base/"), 'd', 0o755, s("")),
                (s("usr/share/doc/libgcc"), 'l', 0o777, s("gcc-12-base")),
                (s("usr/share/doc/up"), 'l', 0o777, s("../../../lib64")),
            ]
        );
        // A change of mode is a change of content.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            a.path().join("etc/secret/key"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let mut lc = LayerBuilder::new(7);
        lc.rootfs(a.path()).unwrap();
        assert_ne!(lc.build().digest, lb.build().digest);
    }

    #[cfg(unix)]
    #[test]
    fn a_root_tree_refuses_escapes_hard_links_and_special_files() {
        use std::os::unix::fs::symlink;
        let err = |setup: &dyn Fn(&Path)| {
            let d = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(d.path().join("usr/lib")).unwrap();
            setup(d.path());
            LayerBuilder::new(0)
                .rootfs(d.path())
                .map(|_| ())
                .unwrap_err()
        };
        let e = err(&|r| symlink("../../../etc/passwd", r.join("usr/lib/p")).unwrap());
        assert!(
            e.contains("usr/lib/p") && e.contains("leaves the tree"),
            "{e}"
        );
        let e = err(&|r| symlink("/etc/../../x", r.join("usr/lib/p")).unwrap());
        assert!(e.contains("`..`"), "{e}");
        let e = err(&|r| {
            std::fs::write(r.join("usr/lib/a"), b"a").unwrap();
            std::fs::hard_link(r.join("usr/lib/a"), r.join("usr/lib/b")).unwrap();
        });
        assert!(e.contains("hard link"), "{e}");
        let e = err(&|r| {
            std::os::unix::net::UnixListener::bind(r.join("usr/lib/sock")).unwrap();
        });
        assert!(e.contains("sock") && e.contains("sockets"), "{e}");
        // The tree's own root may be named through a symlink; below it nothing is followed.
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("real")).unwrap();
        std::fs::write(d.path().join("real/f"), b"f").unwrap();
        std::fs::set_permissions(
            d.path().join("real/f"),
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        symlink("real", d.path().join("link")).unwrap();
        let mut l = LayerBuilder::new(7);
        l.rootfs(&d.path().join("link")).unwrap();
        assert_eq!(listing(&l.tar()), [(s_("f"), 'f', 0o644, s_(""))]);
        assert!(
            LayerBuilder::new(0)
                .rootfs(&d.path().join("real/f"))
                .is_err()
        );
    }

    fn s_(x: &str) -> String {
        x.to_string()
    }
}
