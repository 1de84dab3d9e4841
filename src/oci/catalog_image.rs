//! Catalog images: the FBC in canonical form under `/configs` with the label
//! `operators.operatorframework.io.index.configs.v1=/configs`, either alone (a configs-only
//! image, like `opm generate dockerfile` with a `scratch` base) or appended to a base image
//! such as opm's, the way `crane append` adds a layer.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::image::{Artifact, Blob, Manifest, default_platform, new_config, rfc3339};
use super::layer::{Layer, LayerBuilder};
use super::media;

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

/// The history entry of the configs layer.
pub const CREATED_BY: &str = "ADD configs /configs (olmctl catalog push)";

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

/// The program that serves the catalog in the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Server {
    /// `opm serve` (the base is an opm image).
    #[default]
    Opm,
    /// `olmctl catalog serve` (the base holds olmctl as its entrypoint).
    Olmctl,
}

/// `olmctl catalog serve`'s command in an image whose entrypoint is olmctl: the registry API on
/// port 50051, as OLM's catalog pods expect, with nothing to build first.
pub const OLMCTL_CMD: &[&str] = &["catalog", "serve", "/configs"];

/// How a catalog image runs on a base: opm's entrypoint and serve command, or the base's olmctl
/// with `catalog serve /configs`.
pub fn exec(server: Server) -> super::append::Exec {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (entrypoint, cmd) = match server {
        Server::Opm => (super::append::Entrypoint::Set(strings(ENTRYPOINT)), CMD),
        Server::Olmctl => (super::append::Entrypoint::KeepRunning("olmctl"), OLMCTL_CMD),
    };
    super::append::Exec {
        entrypoint,
        cmd: Some(strings(cmd)),
        user: None,
        workdir: None,
        env: Vec::new(),
    }
}
