//! Binary images, as ko builds them for Go: one layer holding a binary (mode 0755, owned by
//! root, fixed mtime) appended to a base image, with the binary as the entrypoint. Same binary,
//! same base, same digest.

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::append::Exec;
use super::image::{Artifact, Blob, Manifest, Platform, new_config, rfc3339};
use super::layer::{Layer, LayerBuilder};
use super::media;

/// The `--base-image` that means no base: the image holds the binary alone (for static
/// binaries, as ko's `scratch`).
pub const SCRATCH: &str = "scratch";
/// Where the binary goes when `--binary` names no destination.
pub const DEFAULT_DIR: &str = "/usr/local/bin";
/// The largest binary put into an image.
pub const MAX_BINARY: u64 = 1 << 30;

/// Parses `PATH[:DEST]`; DEST is absolute, and defaults to `/usr/local/bin/<file name>`.
pub fn parse_binary(arg: &str) -> Result<(PathBuf, String), String> {
    let (src, dest) = match arg.rsplit_once(':') {
        Some((s, d)) if d.starts_with('/') => (s, Some(d)),
        _ => (arg, None),
    };
    let src = PathBuf::from(src);
    let dest = match dest {
        Some(d) => d.to_string(),
        None => {
            let name = src
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| format!("--binary {arg:?}: no file name"))?;
            format!("{DEFAULT_DIR}/{name}")
        }
    };
    if dest.ends_with('/') || dest.split('/').any(|c| c == ".." || c == ".") {
        return Err(format!(
            "--binary {arg:?}: the destination must be an absolute file path without . or .."
        ));
    }
    Ok((src, dest))
}

/// The layer holding `src` at `dest`, executable.
pub fn binary_layer(src: &Path, dest: &str, mtime: u64) -> Result<Layer, String> {
    let data = crate::input::read_limited(src, MAX_BINARY)
        .map_err(|e| format!("--binary {}: {e}", src.display()))?;
    if data.is_empty() {
        return Err(format!("--binary {}: the file is empty", src.display()));
    }
    let mut l = LayerBuilder::new(mtime);
    l.file(dest, data, true);
    Ok(l.build())
}

/// The binary as the entrypoint; the base's command is dropped (arguments come from the pod
/// spec, as with ko).
pub fn exec(src: &Path, dest: &str) -> Exec {
    let name = src
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Exec {
        entrypoint: super::append::Entrypoint::Set(vec![dest.to_string()]),
        cmd: None,
        created_by: format!("ADD {name} {dest} (olmctl image build)"),
    }
}

/// The image of the binary alone (`--base-image scratch`) for `platform`; `created` is
/// `SOURCE_DATE_EPOCH` when set.
pub fn standalone(
    layer: &Layer,
    labels: &BTreeMap<String, String>,
    exec: &Exec,
    platform: &Platform,
    created: Option<u64>,
) -> Artifact {
    let created = created.map(rfc3339);
    let bytes = new_config(
        platform,
        labels,
        &[(layer, exec.created_by.as_str())],
        created.as_deref(),
    );
    let mut cfg: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    if let super::append::Entrypoint::Set(e) = &exec.entrypoint {
        cfg["config"]["Entrypoint"] = json!(e);
    }
    Artifact::Image(Manifest::new(
        media::OCI_MANIFEST,
        Blob::bytes(
            media::OCI_CONFIG,
            serde_json::to_vec(&cfg).unwrap_or_default(),
        ),
        vec![Blob::bytes(layer.media_type, layer.blob.clone())],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_arguments_parse() {
        assert_eq!(
            parse_binary("target/release/op").unwrap(),
            (
                PathBuf::from("target/release/op"),
                "/usr/local/bin/op".into()
            )
        );
        assert_eq!(
            parse_binary("op:/ko-app/op").unwrap(),
            (PathBuf::from("op"), "/ko-app/op".into())
        );
        assert!(parse_binary("op:/a/../b").is_err());
        assert!(parse_binary("op:/bin/").is_err());
        // A colon that is not a destination stays in the path.
        assert_eq!(parse_binary("c:op").unwrap().0, PathBuf::from("c:op"));
    }

    #[test]
    fn the_layer_is_reproducible_and_executable() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("op");
        std::fs::write(&f, b"\x7fELF fake").unwrap();
        let a = binary_layer(&f, "/usr/local/bin/op", 0).unwrap();
        let b = binary_layer(&f, "/usr/local/bin/op", 0).unwrap();
        assert_eq!(a.digest, b.digest);
        let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(a.blob.as_slice()));
        let entries: Vec<(String, u32)> = ar
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.path().unwrap().display().to_string(),
                    e.header().mode().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            entries,
            [
                ("usr/".to_string(), 0o755),
                ("usr/local/".to_string(), 0o755),
                ("usr/local/bin/".to_string(), 0o755),
                ("usr/local/bin/op".to_string(), 0o755)
            ]
        );
        std::fs::write(&f, b"").unwrap();
        assert!(binary_layer(&f, "/x", 0).is_err());
    }
}
