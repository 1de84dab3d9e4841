//! Appending layers to a base image, the way `crane append` (and ko, for binaries) do: the
//! base layers stay where they are (mounted or copied on push), the config gains each layer's
//! diff_id and a history entry, labels are merged, and the entrypoint, command and user are set.
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
    /// `config.User`; `None` keeps the base's.
    pub user: Option<String>,
    /// `config.WorkingDir`; `None` keeps the base's.
    pub workdir: Option<String>,
    /// `KEY=VALUE` entries set in `config.Env` (a base's entry of the same key is replaced).
    pub env: Vec<String>,
}

/// Layers to add, bottom first, each with its history entry (`created_by`).
pub type Added<'a> = [(&'a Layer, &'a str)];

/// The entrypoint of the resulting image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entrypoint {
    /// This one.
    Set(Vec<String>),
    /// The base's, which must run the program with this file name (a base built by `olmctl
    /// image build --binary .../olmctl`).
    KeepRunning(&'static str),
}

/// The config of `base` with the layers appended: diff_ids and history added, labels merged,
/// entrypoint, command and user set.
pub fn appended_config(
    base: &Value,
    layers: &Added<'_>,
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
    let diff_ids = rootfs
        .get_mut("diff_ids")
        .and_then(Value::as_array_mut)
        .ok_or("base image config has no rootfs.diff_ids list")?;
    diff_ids.extend(layers.iter().map(|(l, _)| json!(l.diff_id)));
    let history = obj.entry("history").or_insert_with(|| json!([]));
    history
        .as_array_mut()
        .ok_or("base image config history is not a list")?
        .extend(layers.iter().map(|(_, by)| json!({"created_by": by})));
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
    if let Some(u) = &exec.user {
        c.insert("User".into(), json!(u));
    }
    if let Some(w) = &exec.workdir {
        c.insert("WorkingDir".into(), json!(w));
    }
    if !exec.env.is_empty() {
        let mut env: Vec<Value> = c
            .get("Env")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for e in &exec.env {
            let key = e.split('=').next().unwrap_or_default();
            env.retain(|v| v.as_str().is_none_or(|s| s.split('=').next() != Some(key)));
            env.push(json!(e));
        }
        c.insert("Env".into(), Value::Array(env));
    }
    Ok(cfg)
}

/// One base image with the layers appended.
pub fn append_one(
    base: &Resolved,
    layers: &Added<'_>,
    labels: &BTreeMap<String, String>,
    exec: &Exec,
) -> Result<Manifest, String> {
    let what = base.reference.whole();
    let cfg =
        appended_config(&base.config, layers, labels, exec).map_err(|e| format!("{what}: {e}"))?;
    let n = base.layers.len();
    let diff = cfg
        .pointer("/rootfs/diff_ids")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if diff != n + layers.len() {
        return Err(format!(
            "{what}: base config lists {} diff_ids for {n} layers",
            diff.saturating_sub(layers.len())
        ));
    }
    let cfg_bytes = serde_json::to_vec(&cfg).unwrap_or_default();
    let config_mt = if base.config_desc.media_type.is_empty() {
        media::OCI_CONFIG
    } else {
        base.config_desc.media_type.as_str()
    };
    let source = base.reference.whole();
    let mut blobs: Vec<Blob> = base
        .layers
        .iter()
        .map(|d| Blob {
            desc: d.clone(),
            data: BlobData::Remote(source.clone()),
        })
        .collect();
    blobs.extend(
        layers
            .iter()
            .map(|(l, _)| Blob::bytes(media::gzip_layer_for(&base.media_type), l.blob.clone())),
    );
    Ok(Manifest::new(
        &base.media_type,
        Blob::bytes(config_mt, cfg_bytes),
        blobs,
    ))
}

/// Appends to every platform of a base: `bases` are `(image, platform)` in index order;
/// `index_type` is the base index media type, `None` for a single-image result.
pub fn append(
    bases: &[(Resolved, Platform)],
    index_type: Option<&str>,
    layers: &Added<'_>,
    labels: &BTreeMap<String, String>,
    exec: &Exec,
) -> Result<Artifact, String> {
    let mut out = Vec::new();
    for (b, p) in bases {
        out.push((append_one(b, layers, labels, exec)?, p.clone()));
    }
    match index_type {
        None => out
            .pop()
            .map(|(m, _)| Artifact::Image(m))
            .ok_or_else(|| "no base image".to_string()),
        Some(mt) => Ok(Artifact::index(mt, out)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::image::Descriptor;
    use crate::oci::layer::LayerBuilder;

    fn base() -> Resolved {
        let desc = |d: &str| Descriptor {
            media_type: media::OCI_LAYER_GZIP.into(),
            digest: format!("sha256:{}", d.repeat(64)),
            size: 1,
            platform: None,
            annotations: BTreeMap::new(),
        };
        Resolved {
            reference: "localhost/base:1".parse().unwrap(),
            manifest_digest: format!("sha256:{}", "c".repeat(64)),
            media_type: media::OCI_MANIFEST.into(),
            index_digest: None,
            config_desc: desc("c"),
            config: json!({
                "rootfs": {"type": "layers", "diff_ids": ["sha256:base1", "sha256:base2"]},
                "history": [{"created_by": "base 1"}, {"created_by": "base 2"}],
                "config": {"User": "0", "Cmd": ["sh"]},
            }),
            layers: vec![desc("a"), desc("b")],
        }
    }

    #[test]
    fn layers_are_appended_in_order_with_their_history_and_the_user() {
        let layer = |name: &str| {
            let mut l = LayerBuilder::new(0);
            l.file(name, name.as_bytes().to_vec(), false);
            l.build()
        };
        let (root, bin) = (layer("etc/passwd"), layer("usr/local/bin/op"));
        let added = [(&root, "ADD root/ /"), (&bin, "ADD op /usr/local/bin/op")];
        let exec = Exec {
            entrypoint: Entrypoint::Set(vec!["/usr/local/bin/op".into()]),
            cmd: None,
            user: Some("65532".into()),
            workdir: Some("/src".into()),
            env: vec!["PATH=/usr/local/bin:/bin".into()],
        };
        let m = append_one(&base(), &added, &BTreeMap::new(), &exec).unwrap();
        let digests: Vec<&str> = m.blobs[1..]
            .iter()
            .map(|b| b.desc.digest.as_str())
            .collect();
        assert_eq!(
            digests,
            [
                base().layers[0].digest.as_str(),
                base().layers[1].digest.as_str(),
                root.digest.as_str(),
                bin.digest.as_str()
            ]
        );
        let BlobData::Bytes(cfg) = &m.blobs[0].data else {
            panic!("config in memory")
        };
        let cfg: Value = serde_json::from_slice(cfg).unwrap();
        assert_eq!(
            cfg["rootfs"]["diff_ids"],
            json!(["sha256:base1", "sha256:base2", root.diff_id, bin.diff_id])
        );
        assert_eq!(
            cfg["history"],
            json!([
                {"created_by": "base 1"}, {"created_by": "base 2"},
                {"created_by": "ADD root/ /"}, {"created_by": "ADD op /usr/local/bin/op"}
            ])
        );
        assert_eq!(cfg["config"]["User"], "65532");
        assert_eq!(cfg["config"]["WorkingDir"], "/src");
        assert_eq!(cfg["config"]["Env"], json!(["PATH=/usr/local/bin:/bin"]));
        assert!(cfg["config"].get("Cmd").is_none());
        // Without a user, the base's stays.
        let keep = Exec { user: None, ..exec };
        let cfg = appended_config(&base().config, &added, &BTreeMap::new(), &keep).unwrap();
        assert_eq!(cfg["config"]["User"], "0");
        // A base whose config does not match its layers is refused.
        let mut bad = base();
        bad.layers.pop();
        assert!(
            append_one(&bad, &added, &BTreeMap::new(), &keep)
                .unwrap_err()
                .contains("diff_ids for 1 layers")
        );
    }
}
