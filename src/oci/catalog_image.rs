//! Catalog images: the FBC in canonical form under `/configs` with the label
//! `operators.operatorframework.io.index.configs.v1=/configs`, either alone (a configs-only
//! image, like `opm generate dockerfile` with a `scratch` base) or appended to a base image
//! such as opm's, the way `crane append` adds a layer.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::image::{
    Artifact, Blob, BlobData, Manifest, Platform, default_platform, new_config, rfc3339,
};
use super::layer::{Layer, LayerBuilder};
use super::media;
use super::registry::Resolved;

/// The label naming the FBC root.
pub const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";
/// The legacy sqlite label (refused).
pub const DATABASE_LABEL: &str = "operators.operatorframework.io.index.database.v1";
/// Where the FBC goes.
pub const CONFIGS_DIR: &str = "/configs";
/// opm's entrypoint in its images.
pub const ENTRYPOINT: &[&str] = &["/bin/opm"];
/// The serve command. opm's own Dockerfile uses `--cache-dir=/tmp/cache` with a cache built at
/// image build time; with `--cache-dir` set, `--cache-enforce-integrity` defaults to true and a
/// missing cache is fatal (operator-registry#1051). olmctl ships no pre-built cache, so it turns
/// enforcement off: serve builds the cache at `/tmp/cache` on start.
pub const CMD: &[&str] = &[
    "serve",
    "/configs",
    "--cache-dir=/tmp/cache",
    "--cache-enforce-integrity=false",
];

const CREATED_BY: &str = "ADD configs /configs (olmctl catalog push)";

/// The `/configs` layer over `files` (paths relative to the catalog root).
pub fn configs_layer(files: &[(PathBuf, String)], mtime: u64) -> Result<Layer, String> {
    let mut l = LayerBuilder::new(mtime);
    l.dir("configs");
    for (rel, text) in files {
        let rel = rel
            .to_str()
            .ok_or_else(|| format!("{}: path is not UTF-8", rel.display()))?;
        l.file(&format!("configs/{rel}"), text.as_bytes().to_vec(), false);
    }
    Ok(l.build())
}

/// Labels of a catalog image: the configs label plus `extra` (extra wins on a clash, as a
/// later `LABEL` would, except that the configs label cannot be changed).
pub fn labels(extra: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut l = extra.clone();
    l.insert(CONFIGS_LABEL.to_string(), CONFIGS_DIR.to_string());
    l
}

/// A configs-only image (no base).
pub fn standalone(
    layer: &Layer,
    labels: &BTreeMap<String, String>,
    created: Option<u64>,
) -> Artifact {
    let created = created.map(rfc3339);
    let cfg = new_config(
        &default_platform(),
        labels,
        &[(layer, CREATED_BY)],
        created.as_deref(),
    );
    Artifact::Image(Manifest::new(
        media::OCI_MANIFEST,
        Blob::bytes(media::OCI_CONFIG, cfg),
        vec![Blob::bytes(layer.media_type, layer.blob.clone())],
    ))
}

/// The config of `base` with the layer appended: diff_id and history added, labels merged,
/// opm's entrypoint and serve command set.
pub fn appended_config(
    base: &Value,
    layer: &Layer,
    labels: &BTreeMap<String, String>,
) -> Result<Value, String> {
    let mut cfg = base.clone();
    let obj = cfg
        .as_object_mut()
        .ok_or("base image config is not a JSON object")?;
    let rootfs = obj
        .entry("rootfs")
        .or_insert_with(|| json!({"type": "layers", "diff_ids": []}));
    rootfs
        .get_mut("diff_ids")
        .and_then(Value::as_array_mut)
        .ok_or("base image config has no rootfs.diff_ids list")?
        .push(json!(layer.diff_id));
    let history = obj.entry("history").or_insert_with(|| json!([]));
    history
        .as_array_mut()
        .ok_or("base image config history is not a list")?
        .push(json!({"created_by": CREATED_BY}));
    let c = obj.entry("config").or_insert_with(|| json!({}));
    let c = c
        .as_object_mut()
        .ok_or("base image config.config is not an object")?;
    let l = c.entry("Labels").or_insert_with(|| json!({}));
    if l.is_null() {
        *l = json!({});
    }
    let l = l
        .as_object_mut()
        .ok_or("base image Labels is not an object")?;
    for (k, v) in labels {
        l.insert(k.clone(), json!(v));
    }
    c.insert("Entrypoint".into(), json!(ENTRYPOINT));
    c.insert("Cmd".into(), json!(CMD));
    Ok(cfg)
}

/// One base image with the layer appended. The base layers stay where they are (mounted or
/// copied on push).
pub fn append_one(
    base: &Resolved,
    layer: &Layer,
    labels: &BTreeMap<String, String>,
) -> Result<Manifest, String> {
    let what = base.reference.whole();
    let cfg = appended_config(&base.config, layer, labels).map_err(|e| format!("{what}: {e}"))?;
    let n = base.layers.len();
    let diff = cfg
        .pointer("/rootfs/diff_ids")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if diff != n + 1 {
        return Err(format!(
            "{what}: base config lists {} diff_ids for {n} layers",
            diff - 1
        ));
    }
    let cfg_bytes = serde_json::to_vec(&cfg).unwrap_or_default();
    let config_mt = if base.config_desc.media_type.is_empty() {
        media::OCI_CONFIG
    } else {
        base.config_desc.media_type.as_str()
    };
    let source = base.reference.whole();
    let mut layers: Vec<Blob> = base
        .layers
        .iter()
        .map(|d| Blob {
            desc: d.clone(),
            data: BlobData::Remote(source.clone()),
        })
        .collect();
    layers.push(Blob::bytes(
        media::gzip_layer_for(&base.media_type),
        layer.blob.clone(),
    ));
    Ok(Manifest::new(
        &base.media_type,
        Blob::bytes(config_mt, cfg_bytes),
        layers,
    ))
}

/// Appends to every platform of a base: `bases` are `(image, platform)` in index order;
/// `index_type` is the base index media type, `None` for a single-image base.
pub fn append(
    bases: &[(Resolved, Platform)],
    index_type: Option<&str>,
    layer: &Layer,
    labels: &BTreeMap<String, String>,
) -> Result<Artifact, String> {
    let mut out = Vec::new();
    for (b, p) in bases {
        out.push((append_one(b, layer, labels)?, p.clone()));
    }
    match index_type {
        None => out
            .pop()
            .map(|(m, _)| Artifact::Image(m))
            .ok_or_else(|| "no base image".to_string()),
        Some(mt) => Ok(Artifact::index(mt, out)),
    }
}
