//! Appending one layer to a base image, the way `crane append` (and ko, for binaries) do: the
//! base layers stay where they are (mounted or copied on push), the config gains the layer's
//! diff_id and a history entry, labels are merged, and the entrypoint and command are set.
//! Catalog images (`catalog push --base-image`) and binary images (`image build`) share it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::image::{Artifact, Blob, BlobData, Manifest, Platform};
use super::layer::Layer;
use super::media;
use super::registry::Resolved;

/// How the resulting image runs.
#[derive(Debug, Clone)]
pub struct Exec {
    /// `config.Entrypoint`.
    pub entrypoint: Entrypoint,
    /// `config.Cmd`; `None` removes the base's command.
    pub cmd: Option<Vec<String>>,
    /// The history entry of the layer.
    pub created_by: String,
}

/// The entrypoint of the resulting image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entrypoint {
    /// This one.
    Set(Vec<String>),
    /// The base's, which must run the program with this file name (a base built by `olmctl
    /// image build --binary .../olmctl`).
    KeepRunning(&'static str),
}

/// The config of `base` with the layer appended: diff_id and history added, labels merged,
/// entrypoint and command set.
pub fn appended_config(
    base: &Value,
    layer: &Layer,
    labels: &BTreeMap<String, String>,
    exec: &Exec,
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
        .push(json!({"created_by": exec.created_by}));
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
    match &exec.entrypoint {
        Entrypoint::Set(e) => {
            c.insert("Entrypoint".into(), json!(e));
        }
        Entrypoint::KeepRunning(program) => {
            let current = c.get("Entrypoint").cloned().unwrap_or(Value::Null);
            let runs = current
                .get(0)
                .and_then(Value::as_str)
                .and_then(|e| e.rsplit('/').next())
                == Some(*program);
            if !runs {
                return Err(format!(
                    "the base image's entrypoint is {current}, not {program}: build the base with \
                     `olmctl image build --base-image <runtime image> --binary <path to {program}>`"
                ));
            }
        }
    }
    match &exec.cmd {
        Some(cmd) => {
            c.insert("Cmd".into(), json!(cmd));
        }
        None => {
            c.remove("Cmd");
        }
    }
    Ok(cfg)
}

/// One base image with the layer appended.
pub fn append_one(
    base: &Resolved,
    layer: &Layer,
    labels: &BTreeMap<String, String>,
    exec: &Exec,
) -> Result<Manifest, String> {
    let what = base.reference.whole();
    let cfg =
        appended_config(&base.config, layer, labels, exec).map_err(|e| format!("{what}: {e}"))?;
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
/// `index_type` is the base index media type, `None` for a single-image result.
pub fn append(
    bases: &[(Resolved, Platform)],
    index_type: Option<&str>,
    layer: &Layer,
    labels: &BTreeMap<String, String>,
    exec: &Exec,
) -> Result<Artifact, String> {
    let mut out = Vec::new();
    for (b, p) in bases {
        out.push((append_one(b, layer, labels, exec)?, p.clone()));
    }
    match index_type {
        None => out
            .pop()
            .map(|(m, _)| Artifact::Image(m))
            .ok_or_else(|| "no base image".to_string()),
        Some(mt) => Ok(Artifact::index(mt, out)),
    }
}
