//! Bundle images: one layer with `/manifests` and `/metadata`, labels equal to
//! `metadata/annotations.yaml` (plus the scorecard config the test label names), exactly what `bundle.Dockerfile` (`FROM scratch`, `LABEL`s,
//! `COPY manifests /manifests/`, `COPY metadata /metadata/`) would build, but reproducible.

use std::collections::BTreeMap;

use super::image::{Artifact, Blob, Manifest, default_platform, new_config, rfc3339};
use super::layer::LayerBuilder;
use super::media;
use crate::bundle::load::BundleDir;
use crate::fbc::node::Value;

/// The label OLM and opm use to recognise a bundle image.
pub const PACKAGE_LABEL: &str = "operators.operatorframework.io.bundle.package.v1";

/// The label naming the scorecard config directory (copied into the image when present).
pub const TEST_CONFIG_LABEL: &str = "operators.operatorframework.io.test.config.v1";

/// A built bundle image.
#[derive(Debug, Clone)]
pub struct BundleImage {
    /// The image.
    pub artifact: Artifact,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Number of files in the layer.
    pub files: usize,
}

/// Builds the image of a bundle directory already read (and, by the caller, validated).
/// `mtime` is stamped on every layer entry; `created` (seconds) is written to the config only
/// when given.
pub fn build(b: &BundleDir, mtime: u64, created: Option<u64>) -> Result<BundleImage, String> {
    let root = &b.dir;
    let labels = labels(b)?;
    let mut layer = LayerBuilder::new(mtime);
    layer.tree(&root.join("manifests"), "manifests")?;
    layer.tree(&root.join("metadata"), "metadata")?;
    // operator-sdk's bundle.Dockerfile also copies the scorecard config the test label names.
    if let Some(rel) = labels.get(TEST_CONFIG_LABEL) {
        let rel = rel.trim_matches('/');
        let src = root.join(rel);
        let safe = !rel.is_empty()
            && rel
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if safe && src.is_dir() {
            layer.tree(&src, rel)?;
        }
    }
    let files = layer.len();
    let layer = layer.build();
    let created = created.map(rfc3339);
    let config = new_config(
        &default_platform(),
        &labels,
        &[(
            &layer,
            "COPY manifests /manifests/, metadata /metadata/ (olmctl bundle build)",
        )],
        created.as_deref(),
    );
    let manifest = Manifest::new(
        media::OCI_MANIFEST,
        Blob::bytes(media::OCI_CONFIG, config),
        vec![Blob::bytes(layer.media_type, layer.blob)],
    );
    Ok(BundleImage {
        artifact: Artifact::Image(manifest),
        labels,
        files,
    })
}

/// The image labels: every key of the `annotations` block, in `metadata/annotations.yaml`.
pub fn labels(b: &BundleDir) -> Result<BTreeMap<String, String>, String> {
    let meta = b.annotations.as_ref().ok_or_else(|| {
        format!(
            "{}: metadata/ has no file with an `annotations` block; run `olmctl bundle generate` or add metadata/annotations.yaml",
            b.dir.display()
        )
    })?;
    let Value::Map(entries) = &meta.node.value else {
        return Err(format!(
            "{}:{}: `annotations` is not a map",
            meta.path.display(),
            meta.node.pos.line
        ));
    };
    let mut out = BTreeMap::new();
    for e in entries {
        let v = match &e.value.value {
            Value::Str(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            _ => {
                return Err(format!(
                    "{}:{}: annotation {:?} is not a scalar; image labels are strings",
                    meta.path.display(),
                    e.value.pos.line,
                    e.key
                ));
            }
        };
        out.insert(e.key.clone(), v);
    }
    if !out.contains_key(PACKAGE_LABEL) {
        return Err(format!(
            "{}: annotations have no {PACKAGE_LABEL}; OLM would not recognise the image as a bundle",
            meta.path.display()
        ));
    }
    Ok(out)
}
