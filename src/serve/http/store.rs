//! A catalog stored as catalogd stores it (`internal/catalogd/storage/localdir.go ::
//! storeAtomicSwap, storeCatalogData, storeIndexData`): every blob in `declcfg.WalkMetasFS`
//! order (files in walk order, `.indexignore` honoured, blobs in file order), each re-encoded
//! as `Meta.UnmarshalJSON` re-encodes it (Go's `encoding/json` of a `map[string]interface{}`:
//! keys sorted, the last of a repeated key, numbers as float64, HTML escaping off, one blob a
//! line), written to `catalog.jsonl`, with the index of `index.go :: newIndex` beside it.
//!
//! The file is a scratch file, unlinked as soon as it is created (nothing is left behind, even
//! after SIGKILL); answers read their sections from it, so only the index stays in memory. One
//! file is parsed at a time.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use super::index::Index;
use super::meta::meta_keys;

/// `catalog.jsonl` and its index.
#[derive(Debug)]
pub struct Stored {
    /// The file (already unlinked), read at offsets by every answer.
    pub file: Arc<File>,
    /// Its length.
    pub len: u64,
    /// Its modification time: when it was written, as catalogd's `Last-Modified` is the
    /// time the catalog was unpacked.
    pub modtime: SystemTime,
    /// The metas index.
    pub index: Index,
}

/// Stores the catalog at `root` (a directory or one file) in a scratch file under `scratch`.
/// Errors name the file and the blob's problem, as catalogd's unpack fails on it.
pub fn store(root: &Path, scratch: &Path) -> Result<Stored, String> {
    let files =
        crate::fbc::load::list_files(root).map_err(|e| format!("cannot read catalog: {e}"))?;
    let (file, path) = scratch_file(scratch)?;
    let mut out = BufWriter::with_capacity(64 << 10, &file);
    let mut index = Index::default();
    let mut line = String::new();
    for f in &files {
        let text = crate::input::read_objects(f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .bytes;
        let text = String::from_utf8(text)
            .map_err(|_| format!("{}: not UTF-8 text (add it to .indexignore)", f.display()))?;
        let mut failed: Option<String> = None;
        let mut blob = 0usize;
        let parsed = crate::fbc::load::parse_blobs(&text, |node| {
            blob += 1;
            if failed.is_some() {
                return;
            }
            let keys = match meta_keys(&node) {
                Ok(k) => k,
                Err(e) => {
                    failed = Some(format!("{}: blob {blob}: {e}", f.display()));
                    return;
                }
            };
            line.clear();
            node.write_json(&mut line);
            line.push('\n');
            if let Err(e) = out.write_all(line.as_bytes()) {
                failed = Some(format!("{}: {e}", path.display()));
                return;
            }
            index.add(line.len() as u64, &keys);
        });
        if let Some(e) = failed {
            return Err(e);
        }
        parsed.map_err(|e| format!("{}: {e}", f.display()))?;
    }
    out.flush()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    drop(out);
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let modtime = meta
        .modified()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Stored {
        file: Arc::new(file),
        len: meta.len(),
        modtime,
        index,
    })
}

/// A new file under `dir`, unlinked at once (it lives while it is open).
fn scratch_file(dir: &Path) -> Result<(File, std::path::PathBuf), String> {
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    for attempt in 0..100u32 {
        let path = dir.join(format!(
            "olmctl-catalog-{}-{stamp}-{attempt}.jsonl",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                std::fs::remove_file(&path).map_err(|e| {
                    format!("{}: cannot remove the scratch file: {e}", path.display())
                })?;
                return Ok((f, path));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "{}: cannot create the scratch file for catalog.jsonl ({e}); set TMPDIR to a writable directory",
                    path.display()
                ));
            }
        }
    }
    Err(format!(
        "{}: cannot create a scratch file (names taken)",
        dir.display()
    ))
}

/// Reads `buf.len()` bytes at `offset` (fewer only at the end of the file).
pub fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt as _;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &Stored) -> String {
        let mut buf = vec![0; s.len as usize];
        let n = read_at(&s.file, 0, &mut buf).unwrap();
        assert_eq!(n as u64, s.len);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn blobs_are_written_in_walk_order_as_go_re_encodes_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("c");
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        // a/ before a.json before b/ (fs.WalkDir's lexical order); YAML and JSON streams.
        std::fs::write(
            root.join("a/x.yaml"),
            "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\npackage: p\nname: s\nentries: [{name: p.v1}]\n",
        )
        .unwrap();
        std::fs::write(
            root.join("a.json"),
            r#"{"schema":"olm.bundle","package":"p","name":"p.v1","z":1.0,"a":"<&>","n":1e21,"u":"x y"}
{"Schema":"custom","pkg":"p"}"#,
        )
        .unwrap();
        std::fs::write(root.join("b/ignored.txt"), "not a catalog").unwrap();
        std::fs::write(root.join("b/.indexignore"), "*.txt\n").unwrap();
        let s = store(&root, dir.path()).unwrap();
        assert_eq!(
            all(&s),
            concat!(
                "{\"defaultChannel\":\"s\",\"name\":\"p\",\"schema\":\"olm.package\"}\n",
                "{\"entries\":[{\"name\":\"p.v1\"}],\"name\":\"s\",\"package\":\"p\",\"schema\":\"olm.channel\"}\n",
                "{\"a\":\"<&>\",\"n\":1e+21,\"name\":\"p.v1\",\"package\":\"p\",\"schema\":\"olm.bundle\",\"u\":\"x\\u2028y\",\"z\":1}\n",
                "{\"Schema\":\"custom\",\"pkg\":\"p\"}\n",
            )
        );
        assert_eq!(s.index.len(), 4);
        let off = |v: Vec<super::super::index::Section>| -> Vec<u64> {
            v.into_iter().map(|x| x.offset).collect()
        };
        // a/x.yaml comes first (a/ sorts before a.json), then a.json's two blobs.
        assert_eq!(off(s.index.get(b"custom", b"", b"")).len(), 1);
        assert_eq!(off(s.index.get(b"", b"p", b"")).len(), 2);
        // Nothing of the scratch file is left in the directory.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("c")]);
    }

    #[test]
    fn a_blob_catalogd_refuses_is_refused_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.json");
        std::fs::write(&f, r#"{"schema":"a"} {"name":"x","NAME":"y"}"#).unwrap();
        let e = store(&f, dir.path()).unwrap_err();
        assert_eq!(
            e,
            format!(
                "{}: blob 2: duplicate keys for key \"name\": [NAME name]",
                f.display()
            )
        );
    }
}
