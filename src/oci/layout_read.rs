//! Reading an image out of an OCI image layout directory (`oci-layout`, `index.json`,
//! `blobs/sha256/...`), offline: every blob is checked against its digest and declared size,
//! every layer against its `diff_id`, and extraction has the same limits and path rules as a
//! pull.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::digest;
use super::extract::{Budget, Limits, Select, apply_layer};
use super::layout::REF_NAME;
use super::media;

/// Whether `dir` is an OCI image layout.
pub fn is_layout(dir: &Path) -> bool {
    dir.join("oci-layout").is_file() && dir.join("index.json").is_file()
}

fn blob(dir: &Path, d: &str, size: Option<u64>) -> Result<Vec<u8>, String> {
    let hex = digest::parse(d)?;
    let p = dir.join("blobs").join(digest::SHA256).join(hex);
    let data = crate::input::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    if digest::sha256(&data) != d {
        return Err(format!(
            "{}: content does not match its digest {d}",
            p.display()
        ));
    }
    if let Some(s) = size
        && s != data.len() as u64
    {
        return Err(format!(
            "{}: {} bytes, the descriptor says {s}",
            p.display(),
            data.len()
        ));
    }
    Ok(data)
}

fn json(what: &str, data: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(data).map_err(|e| format!("{what}: not JSON: {e}"))
}

fn descriptor(v: &Value) -> Option<(String, Option<u64>, String)> {
    Some((
        v.get("digest")?.as_str()?.to_string(),
        v.get("size").and_then(Value::as_u64),
        v.get("mediaType")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    ))
}

/// Extracts one image of the layout at `dir` into `dest` (an empty directory) and returns its
/// image manifest digest and config labels. The image is the one whose digest is `digest`
/// (an entry of `index.json`, or an image of an index there) when given; else the one named
/// `tag` in `index.json`; else, without a tag, the only image. An index picked by name is
/// resolved to its first image (bundle images hold the same files on every platform).
pub fn extract(
    dir: &Path,
    digest: Option<&str>,
    tag: Option<&str>,
    dest: &Path,
    limits: Limits,
) -> Result<(String, BTreeMap<String, String>), String> {
    let pick = match (digest, tag) {
        (Some(d), _) => Pick::Digest(d),
        (None, Some(t)) => Pick::Name(t),
        (None, None) => Pick::Only,
    };
    extract_picked(dir, pick, dest, limits, |_| Ok(Select::default()))
}

/// Which image of a layout's `index.json` to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick<'a> {
    /// The image with this manifest digest (an entry, or an image of an index entry).
    Digest(&'a str),
    /// The entry whose `org.opencontainers.image.ref.name` is this.
    Name(&'a str),
    /// The entry at this position (containers-transports(5)'s `oci:PATH:@N`).
    Index(usize),
    /// The only entry.
    Only,
}

/// [`extract`] with the image picked by `pick` and the files chosen from its labels by
/// `select` (e.g. only a catalog's configs directory), before any layer is read.
pub fn extract_picked(
    dir: &Path,
    pick: Pick<'_>,
    dest: &Path,
    limits: Limits,
    select: impl FnOnce(&BTreeMap<String, String>) -> Result<Select, String>,
) -> Result<(String, BTreeMap<String, String>), String> {
    let what = dir.display().to_string();
    if std::fs::read_dir(dest)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
    {
        return Err(format!("{}: not an empty directory", dest.display()));
    }
    let index = json(
        &format!("{what}/index.json"),
        &crate::input::read(&dir.join("index.json"))
            .map_err(|e| format!("{what}/index.json: {e}"))?,
    )?;
    let entries = index
        .get("manifests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let name_of = |m: &Value| {
        m.pointer(&format!("/annotations/{}", REF_NAME.replace('/', "~1")))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let is_index = |mt: &str, m: &Value| media::is_index(mt) || m.get("manifests").is_some();
    let (mut d, mut size, mut mt) = match pick {
        Pick::Digest(want) => {
            let mut found = None;
            for e in &entries {
                let Some((ed, es, emt)) = descriptor(e) else {
                    continue;
                };
                if ed == want {
                    found = Some((ed, es, emt));
                    break;
                }
                if media::is_index(&emt) {
                    let idx = json(&ed, &blob(dir, &ed, es)?)?;
                    let child = idx
                        .get("manifests")
                        .and_then(Value::as_array)
                        .and_then(|c| c.iter().filter_map(descriptor).find(|c| c.0 == want));
                    if let Some(c) = child {
                        found = Some(c);
                        break;
                    }
                }
            }
            found.ok_or_else(|| format!("{what}: no image with digest {want}"))?
        }
        Pick::Name(t) => {
            let named: Vec<&Value> = entries
                .iter()
                .filter(|m| name_of(m).as_deref() == Some(t))
                .collect();
            match named.as_slice() {
                [one] => descriptor(one),
                _ => None,
            }
            .ok_or_else(|| format!("{what}: no single image named {t:?} in index.json"))?
        }
        Pick::Index(i) => entries.get(i).and_then(descriptor).ok_or_else(|| {
            format!(
                "{what}: no image @{i} (index.json lists {} images)",
                entries.len()
            )
        })?,
        Pick::Only => match entries.as_slice() {
            [only] => descriptor(only),
            _ => None,
        }
        .ok_or_else(|| format!("{what}: {} images and no tag to pick one", entries.len()))?,
    };
    let mut manifest = json(&d, &blob(dir, &d, size)?)?;
    if is_index(&mt, &manifest) {
        let first = manifest
            .get("manifests")
            .and_then(Value::as_array)
            .and_then(|m| m.first())
            .and_then(descriptor)
            .ok_or_else(|| format!("{what}: index {d} lists no image"))?;
        (d, size, mt) = first;
        manifest = json(&d, &blob(dir, &d, size)?)?;
    }
    let _ = mt;
    let (cd, csize, _) = manifest
        .get("config")
        .and_then(descriptor)
        .ok_or_else(|| format!("{what}: manifest {d} has no config"))?;
    let config = json(&cd, &blob(dir, &cd, csize)?)?;
    let labels = super::registry::config_labels(&config);
    let select = select(&labels)?;
    let diff_ids = super::registry::config_diff_ids(&config);
    let layers = manifest
        .get("layers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if layers.len() != diff_ids.len() {
        return Err(format!(
            "{what}: config lists {} diff_ids for {} layers",
            diff_ids.len(),
            layers.len()
        ));
    }
    let mut budget = Budget::new(limits);
    for (i, (l, diff)) in layers.iter().zip(&diff_ids).enumerate() {
        let (ld, lsize, _) =
            descriptor(l).ok_or_else(|| format!("{what}: layer {i} without a digest"))?;
        let data = blob(dir, &ld, lsize)?;
        apply_layer(
            &data,
            &format!("{what} layer {i} ({ld})"),
            Some(diff),
            dest,
            &select,
            &mut budget,
        )?;
    }
    Ok((d, labels))
}
