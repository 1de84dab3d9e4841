//! Binary images, as ko builds them for Go: one layer holding a binary (mode 0755, owned by
//! root, fixed mtime) appended to a base image, with the binary as the entrypoint; below it,
//! optionally, layers made of directory trees (a runtime root such as unpacked Debian
//! packages, see [`LayerBuilder::rootfs`]). Same binary, trees and base, same digest.

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::append::{Added, Exec};
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

/// The layer of a `--layer` directory: the tree as the image's root file system, modes and
/// symlinks kept.
pub fn tree_layer(src: &Path, mtime: u64) -> Result<Layer, String> {
    let mut l = LayerBuilder::new(mtime);
    l.rootfs(src)
        .map_err(|e| format!("--layer {}: {e}", src.display()))?;
    if l.is_empty() {
        return Err(format!("--layer {}: the directory is empty", src.display()));
    }
    Ok(l.build())
}

/// The file name of `p` (history entries name files, not where they were on the build
/// machine, so the config does not depend on it).
fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The history entry of a `--layer` directory.
pub fn tree_created_by(src: &Path) -> String {
    format!("ADD {}/ / (olmctl image build --layer)", name_of(src))
}

/// The history entry of the binary's layer.
pub fn created_by(src: &Path, dest: &str) -> String {
    format!("ADD {} {dest} (olmctl image build)", name_of(src))
}

/// Parses `--user`: `UID` or `UID:GID`, numeric, so that a kubelet can check `runAsNonRoot`
/// against the image.
pub fn parse_user(arg: &str) -> Result<String, String> {
    let numeric = |s: &str| !s.is_empty() && s.len() <= 10 && s.parse::<u32>().is_ok();
    let ok = match arg.split_once(':') {
        Some((u, g)) => numeric(u) && numeric(g),
        None => numeric(arg),
    };
    if ok {
        Ok(arg.to_string())
    } else {
        Err(format!(
            "--user {arg:?}: give a numeric UID or UID:GID (e.g. 65532), which a kubelet can \
             check against runAsNonRoot"
        ))
    }
}

/// Parses `--workdir`: an absolute path without `.` or `..` segments (the runtime resolves it in
/// the image's root file system and creates it when missing).
pub fn parse_workdir(arg: &str) -> Result<String, String> {
    let clean = arg.starts_with('/')
        && !arg.contains('\0')
        && arg.split('/').all(|s| s != "." && s != "..");
    if clean {
        Ok(arg.to_string())
    } else {
        Err(format!(
            "--workdir {:?}: give an absolute path without . or .. (e.g. /src)",
            crate::text::esc(arg)
        ))
    }
}

/// Parses `--env`: `KEY=VALUE` with a key of letters, digits and `_` not starting with a digit.
pub fn parse_env(arg: &str) -> Result<String, String> {
    let ok = arg.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && !k.starts_with(|c: char| c.is_ascii_digit())
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if ok && !arg.contains('\0') {
        Ok(arg.to_string())
    } else {
        Err(format!(
            "--env {:?}: give KEY=VALUE (e.g. PATH=/usr/local/bin:/bin)",
            crate::text::esc(arg)
        ))
    }
}

/// The binary as the entrypoint, run as `user` when given; the base's command is dropped
/// (arguments come from the pod spec, as with ko).
pub fn exec(dest: &str, user: Option<String>, workdir: Option<String>, env: Vec<String>) -> Exec {
    Exec {
        entrypoint: super::append::Entrypoint::Set(vec![dest.to_string()]),
        cmd: None,
        user,
        workdir,
        env,
    }
}

/// The image of `layers` alone (`--base-image scratch`) for `platform`; `created` is
/// `SOURCE_DATE_EPOCH` when set.
pub fn standalone(
    layers: &Added<'_>,
    labels: &BTreeMap<String, String>,
    exec: &Exec,
    platform: &Platform,
    created: Option<u64>,
) -> Artifact {
    let created = created.map(rfc3339);
    let bytes = new_config(platform, labels, layers, created.as_deref());
    let mut cfg: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    if let super::append::Entrypoint::Set(e) = &exec.entrypoint {
        cfg["config"]["Entrypoint"] = json!(e);
    }
    if let Some(u) = &exec.user {
        cfg["config"]["User"] = json!(u);
    }
    if let Some(w) = &exec.workdir {
        cfg["config"]["WorkingDir"] = json!(w);
    }
    if !exec.env.is_empty() {
        cfg["config"]["Env"] = json!(exec.env);
    }
    Artifact::Image(Manifest::new(
        media::OCI_MANIFEST,
        Blob::bytes(
            media::OCI_CONFIG,
            serde_json::to_vec(&cfg).unwrap_or_default(),
        ),
        layers
            .iter()
            .map(|(l, _)| Blob::bytes(l.media_type, l.blob.clone()))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::image::BlobData;

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

    #[test]
    fn users_are_numeric() {
        assert_eq!(parse_user("65532").unwrap(), "65532");
        assert_eq!(parse_user("65532:65532").unwrap(), "65532:65532");
        for bad in ["", "nonroot", "65532:", ":1", "1:2:3", "-1", "99999999999"] {
            let e = parse_user(bad).unwrap_err();
            assert!(e.contains("numeric"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn environment_entries_are_key_value() {
        assert_eq!(parse_env("PATH=/bin").unwrap(), "PATH=/bin");
        assert_eq!(parse_env("A_1=").unwrap(), "A_1=");
        for bad in ["", "PATH", "=x", "1A=x", "A-B=x", "A=\0"] {
            let e = parse_env(bad).unwrap_err();
            assert!(e.contains("KEY=VALUE"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn working_directories_are_absolute_and_plain() {
        assert_eq!(parse_workdir("/src").unwrap(), "/src");
        assert_eq!(parse_workdir("/").unwrap(), "/");
        for bad in ["", "src", "/src/../etc", "/./src", "/a\0b"] {
            let e = parse_workdir(bad).unwrap_err();
            assert!(e.contains("absolute path"), "{bad:?}: {e}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn tree_layers_go_below_the_binary_in_the_order_given() {
        let d = tempfile::tempdir().unwrap();
        let (r1, r2) = (d.path().join("base-root"), d.path().join("extra"));
        std::fs::create_dir_all(r1.join("lib64")).unwrap();
        std::fs::write(r1.join("lib64/ld.so"), b"ld").unwrap();
        std::fs::create_dir_all(r2.join("etc")).unwrap();
        std::fs::write(r2.join("etc/nsswitch.conf"), b"hosts: files dns\n").unwrap();
        let bin = d.path().join("op");
        std::fs::write(&bin, b"\x7fELF fake").unwrap();
        let build = || {
            let l1 = tree_layer(&r1, 0).unwrap();
            let l2 = tree_layer(&r2, 0).unwrap();
            let lb = binary_layer(&bin, "/usr/local/bin/op", 0).unwrap();
            let (b1, b2, bb) = (
                tree_created_by(&r1),
                tree_created_by(&r2),
                created_by(&bin, "/usr/local/bin/op"),
            );
            let added = [(&l1, b1.as_str()), (&l2, b2.as_str()), (&lb, bb.as_str())];
            let exec = exec("/usr/local/bin/op", Some("65532".into()), None, Vec::new());
            let art = standalone(
                &added,
                &BTreeMap::new(),
                &exec,
                &super::super::image::default_platform(),
                None,
            );
            (art, [l1.digest, l2.digest, lb.digest])
        };
        let (a, digests) = build();
        let (b, _) = build();
        assert_eq!(a.digest(), b.digest(), "same trees and binary, same image");
        let m = &a.manifests()[0];
        let layers: Vec<&str> = m.blobs[1..]
            .iter()
            .map(|b| b.desc.digest.as_str())
            .collect();
        assert_eq!(
            layers,
            digests.iter().map(String::as_str).collect::<Vec<_>>()
        );
        let BlobData::Bytes(cfg) = &m.blobs[0].data else {
            panic!("config in memory")
        };
        let cfg: Value = serde_json::from_slice(cfg).unwrap();
        assert_eq!(cfg["config"]["User"], "65532");
        assert_eq!(cfg["config"]["Entrypoint"], json!(["/usr/local/bin/op"]));
        assert_eq!(cfg["rootfs"]["diff_ids"].as_array().unwrap().len(), 3);
        // History names the trees and the binary, never where they were on this machine.
        let history: Vec<&str> = cfg["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["created_by"].as_str().unwrap())
            .collect();
        assert_eq!(
            history,
            [
                "ADD base-root/ / (olmctl image build --layer)",
                "ADD extra/ / (olmctl image build --layer)",
                "ADD op /usr/local/bin/op (olmctl image build)"
            ]
        );
        std::fs::create_dir(d.path().join("empty")).unwrap();
        let e = tree_layer(&d.path().join("empty"), 0).unwrap_err();
        assert!(e.contains("--layer") && e.contains("empty"), "{e}");
    }
}
