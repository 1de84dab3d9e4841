//! OCI image layout directories (`oci-layout`, `index.json`, `blobs/sha256/...`), readable
//! offline and by `skopeo` as `oci:<dir>:<tag>`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::digest;
use super::image::{Artifact, BlobData, Descriptor};
use crate::outdir;

/// The annotation naming an image in `index.json`.
pub const REF_NAME: &str = "org.opencontainers.image.ref.name";

/// Writes `art` into the layout at `dir` (created when missing) and names it `tag` in
/// `index.json`, replacing an earlier image of that name and keeping the others. Every blob
/// must be in memory.
///
/// Nothing is written through a symlink below `dir` (see [`crate::outdir`]); `dir` itself may
/// be a link.
pub fn write(dir: &Path, tag: &str, art: &Artifact) -> Result<(), String> {
    let blobs = Path::new("blobs").join(digest::SHA256);
    let index_path = Path::new("index.json");
    let mut all = Vec::new();
    for m in art.manifests() {
        for b in &m.blobs {
            match &b.data {
                BlobData::Bytes(data) => all.push((b.desc.digest.as_str(), data.as_ref())),
                BlobData::Remote(src) => {
                    return Err(format!(
                        "blob {} (from {src}) was not fetched before writing the layout",
                        b.desc.digest
                    ));
                }
            }
        }
        all.push((m.digest.as_str(), m.bytes.as_ref()));
    }
    all.push((art.digest(), art.bytes()));
    let mut rels = vec![
        PathBuf::from("oci-layout"),
        index_path.to_path_buf(),
        blobs.clone(),
    ];
    for (d, _) in &all {
        rels.push(blobs.join(digest::parse(d)?));
    }
    for rel in &rels {
        outdir::check(dir, rel).map_err(|e| e.to_string())?;
    }
    let index_file = dir.join(index_path);
    // The index is read as every input, before anything is written (a FIFO there would hang
    // the write); one that exists but cannot be read is an error, not an empty index.
    let mut entries: Vec<Value> = match crate::input::read(&index_file) {
        Ok(b) => serde_json::from_slice::<Value>(&b)
            .map_err(|e| format!("{}: not JSON: {e}", index_file.display()))?
            .get("manifests")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(format!(
                "{}: {e}; remove it or choose another layout directory",
                index_file.display()
            ));
        }
    };
    let write = |rel: &Path, data: &[u8]| outdir::write(dir, rel, data).map_err(|e| e.to_string());
    write(
        Path::new("oci-layout"),
        br#"{"imageLayoutVersion":"1.0.0"}"#,
    )?;
    for (d, data) in all {
        let rel = blobs.join(digest::parse(d)?);
        let there = outdir::entry(dir, &rel).map_err(|e| e.to_string())?;
        if there.is_some_and(|e| e.kind == outdir::Kind::File && e.len == data.len() as u64) {
            continue;
        }
        write(&rel, data)?;
    }
    entries.retain(|e| {
        e.pointer(&format!("/annotations/{}", REF_NAME.replace('/', "~1")))
            .and_then(Value::as_str)
            != Some(tag)
    });
    let mut d = Descriptor {
        media_type: art.media_type().to_string(),
        digest: art.digest().to_string(),
        size: art.bytes().len() as u64,
        platform: None,
        annotations: Default::default(),
    };
    d.annotations.insert(REF_NAME.to_string(), tag.to_string());
    entries.push(d.to_json());
    let index = json!({
        "schemaVersion": 2,
        "mediaType": super::media::OCI_INDEX,
        "manifests": entries,
    });
    write(index_path, &serde_json::to_vec(&index).unwrap_or_default())
}

/// The name an image gets in a layout: the tag of `reference` (`latest` without one).
pub fn tag_of(reference: &str) -> String {
    let last = reference.rsplit('/').next().unwrap_or(reference);
    let no_digest = last.split('@').next().unwrap_or(last);
    match no_digest.split_once(':') {
        Some((_, t)) if !t.is_empty() => t.to_string(),
        _ => "latest".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::image::{Blob, Manifest};
    use crate::oci::media;
    use std::fs;

    #[test]
    fn writes_and_replaces_by_name() {
        let d = tempfile::tempdir().unwrap();
        let img = |n: &[u8]| {
            Artifact::Image(Manifest::new(
                media::OCI_MANIFEST,
                Blob::bytes(media::OCI_CONFIG, b"{}".to_vec()),
                vec![Blob::bytes(media::OCI_LAYER_GZIP, n.to_vec())],
            ))
        };
        write(d.path(), "v1", &img(b"a")).unwrap();
        write(d.path(), "v2", &img(b"b")).unwrap();
        write(d.path(), "v1", &img(b"c")).unwrap();
        let idx: Value =
            serde_json::from_slice(&fs::read(d.path().join("index.json")).unwrap()).unwrap();
        let names: Vec<&str> = idx["manifests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["annotations"][REF_NAME].as_str().unwrap())
            .collect();
        assert_eq!(names, ["v2", "v1"]);
        let v1 = img(b"c");
        assert_eq!(idx["manifests"][1]["digest"], v1.digest());
        let blob = d
            .path()
            .join("blobs/sha256")
            .join(digest::parse(v1.digest()).unwrap());
        assert_eq!(fs::read(blob).unwrap(), v1.bytes());
    }

    #[test]
    fn tags() {
        assert_eq!(tag_of("quay.io/a/b:v1.0.0"), "v1.0.0");
        assert_eq!(tag_of("localhost:5000/b"), "latest");
        assert_eq!(tag_of("localhost:5000/b:t@sha256:00"), "t");
    }
}
