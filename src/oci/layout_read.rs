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

/// Extracts the image named `name` in `index.json` (or the only image there) into `dest` and
/// returns its manifest digest and config labels. An index is resolved to its first image
/// manifest (bundle images hold the same files on every platform).
pub fn extract(
    dir: &Path,
    name: &str,
    dest: &Path,
    limits: Limits,
) -> Result<(String, BTreeMap<String, String>), String> {
    let what = dir.display().to_string();
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
    let named: Vec<&Value> = entries
        .iter()
        .filter(|m| {
            m.pointer(&format!("/annotations/{}", REF_NAME.replace('/', "~1")))
                .and_then(Value::as_str)
                == Some(name)
        })
        .collect();
    let chosen = match (named.as_slice(), entries.as_slice()) {
        ([one], _) => *one,
        ([], [only]) => only,
        _ => {
            return Err(format!(
                "{what}: no single image named {name:?} in index.json ({} images)",
                entries.len()
            ));
        }
    };
    let (mut d, mut size, mut mt) =
        descriptor(chosen).ok_or_else(|| format!("{what}: index.json entry without a digest"))?;
    let mut manifest = json(&d, &blob(dir, &d, size)?)?;
    if media::is_index(&mt) || manifest.get("manifests").is_some() {
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
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    for (i, (l, diff)) in layers.iter().zip(&diff_ids).enumerate() {
        let (ld, lsize, _) =
            descriptor(l).ok_or_else(|| format!("{what}: layer {i} without a digest"))?;
        let data = blob(dir, &ld, lsize)?;
        apply_layer(
            &data,
            &format!("{what} layer {i} ({ld})"),
            Some(diff),
            dest,
            &Select::default(),
            &mut budget,
        )?;
    }
    Ok((d, labels))
}
