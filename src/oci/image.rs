//! Images in memory: descriptors, manifests, indexes and where each blob's bytes come from.
//!
//! Manifests and configs are serialized here with sorted keys and no whitespace, so the same
//! content always has the same digest.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::digest::sha256;
use super::layer::Layer;
use super::media;

/// An OS/architecture pair from an index entry or an image config.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Platform {
    /// `linux`, ...
    pub os: String,
    /// `amd64`, `arm64`, ...
    pub architecture: String,
    /// `v8`, ... (optional)
    pub variant: Option<String>,
}

impl Platform {
    /// Parses `os/arch[/variant]`.
    pub fn parse(s: &str) -> Result<Platform, String> {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            [os, arch] | [os, arch, _] if !os.is_empty() && !arch.is_empty() => Ok(Platform {
                os: os.to_string(),
                architecture: arch.to_string(),
                variant: parts
                    .get(2)
                    .filter(|v| !v.is_empty())
                    .map(|v| v.to_string()),
            }),
            _ => Err(format!(
                "platform {s:?} is not os/arch[/variant], e.g. linux/amd64"
            )),
        }
    }

    /// The platform of this machine in Go's naming (`amd64`, `arm64`, ...).
    pub fn host() -> Platform {
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "x86" => "386",
            "powerpc64" => "ppc64le",
            other => other,
        };
        Platform {
            os: std::env::consts::OS.to_string(),
            architecture: arch.to_string(),
            variant: None,
        }
    }

    /// Reads the `platform` object of an index entry.
    pub fn from_json(v: &Value) -> Option<Platform> {
        Some(Platform {
            os: v.get("os")?.as_str()?.to_string(),
            architecture: v.get("architecture")?.as_str()?.to_string(),
            variant: v.get("variant").and_then(Value::as_str).map(str::to_string),
        })
    }

    /// The `platform` object of an index entry.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("architecture".into(), json!(self.architecture));
        m.insert("os".into(), json!(self.os));
        if let Some(v) = &self.variant {
            m.insert("variant".into(), json!(v));
        }
        Value::Object(m)
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(v) = &self.variant {
            write!(f, "/{v}")?;
        }
        Ok(())
    }
}

/// A content descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// Media type.
    pub media_type: String,
    /// `sha256:<hex>`.
    pub digest: String,
    /// Size in bytes.
    pub size: u64,
    /// Platform (index entries only).
    pub platform: Option<Platform>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
}

impl Descriptor {
    /// A descriptor of `data`.
    pub fn of(media_type: &str, data: &[u8]) -> Descriptor {
        Descriptor {
            media_type: media_type.to_string(),
            digest: sha256(data),
            size: data.len() as u64,
            platform: None,
            annotations: BTreeMap::new(),
        }
    }

    /// JSON form.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("mediaType".into(), json!(self.media_type));
        m.insert("digest".into(), json!(self.digest));
        m.insert("size".into(), json!(self.size));
        if let Some(p) = &self.platform {
            m.insert("platform".into(), p.to_json());
        }
        if !self.annotations.is_empty() {
            m.insert("annotations".into(), json!(self.annotations));
        }
        Value::Object(m)
    }

    /// Reads a descriptor; `what` names it in errors.
    pub fn from_json(v: &Value, what: &str) -> Result<Descriptor, String> {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("{what}: descriptor has no string {k:?}"))
        };
        let digest = s("digest")?;
        super::digest::parse(&digest).map_err(|e| format!("{what}: {e}"))?;
        let size = v
            .get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{what}: descriptor has no non-negative \"size\""))?;
        let annotations = v
            .get("annotations")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Descriptor {
            media_type: s("mediaType").unwrap_or_default(),
            digest,
            size,
            platform: v.get("platform").and_then(Platform::from_json),
            annotations,
        })
    }
}

/// Where a blob's bytes are.
#[derive(Debug, Clone)]
pub enum BlobData {
    /// In memory.
    Bytes(bytes::Bytes),
    /// In another repository (`registry/repo`, any tag); mounted or copied on push.
    Remote(String),
}

/// A blob with its descriptor.
#[derive(Debug, Clone)]
pub struct Blob {
    /// Descriptor.
    pub desc: Descriptor,
    /// Bytes or their location.
    pub data: BlobData,
}

impl Blob {
    /// An in-memory blob.
    pub fn bytes(media_type: &str, data: Vec<u8>) -> Blob {
        Blob {
            desc: Descriptor::of(media_type, &data),
            data: BlobData::Bytes(bytes::Bytes::from(data)),
        }
    }
}

/// One image: its manifest bytes and the blobs it references (config first, then layers).
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Manifest media type.
    pub media_type: String,
    /// Serialized manifest.
    pub bytes: Vec<u8>,
    /// Digest of `bytes`.
    pub digest: String,
    /// Config, then layers in order.
    pub blobs: Vec<Blob>,
}

impl Manifest {
    /// Builds a manifest of `media_type` from a config blob and layer blobs. A top-level
    /// `mediaType` is always written (registries and skopeo rely on it).
    pub fn new(media_type: &str, config: Blob, layers: Vec<Blob>) -> Manifest {
        let v = json!({
            "schemaVersion": 2,
            "mediaType": media_type,
            "config": config.desc.to_json(),
            "layers": layers.iter().map(|b| b.desc.to_json()).collect::<Vec<_>>(),
        });
        let bytes = serde_json::to_vec(&v).unwrap_or_default();
        let mut blobs = vec![config];
        blobs.extend(layers);
        Manifest {
            media_type: media_type.to_string(),
            digest: sha256(&bytes),
            bytes,
            blobs,
        }
    }

    /// The descriptor of this manifest, with `platform` for an index entry.
    pub fn descriptor(&self, platform: Option<Platform>) -> Descriptor {
        Descriptor {
            media_type: self.media_type.clone(),
            digest: self.digest.clone(),
            size: self.bytes.len() as u64,
            platform,
            annotations: BTreeMap::new(),
        }
    }
}

/// What a push or an OCI layout writes: one image, or an index of images.
#[derive(Debug, Clone)]
pub enum Artifact {
    /// A single image.
    Image(Manifest),
    /// An index and its images.
    Index {
        /// Index media type.
        media_type: String,
        /// Serialized index.
        bytes: Vec<u8>,
        /// Digest of `bytes`.
        digest: String,
        /// The images, in index order.
        manifests: Vec<Manifest>,
    },
}

impl Artifact {
    /// Builds an index of `media_type` over `(image, platform)` entries.
    pub fn index(media_type: &str, entries: Vec<(Manifest, Platform)>) -> Artifact {
        let v = json!({
            "schemaVersion": 2,
            "mediaType": media_type,
            "manifests": entries.iter().map(|(m, p)| m.descriptor(Some(p.clone())).to_json()).collect::<Vec<_>>(),
        });
        let bytes = serde_json::to_vec(&v).unwrap_or_default();
        Artifact::Index {
            media_type: media_type.to_string(),
            digest: sha256(&bytes),
            bytes,
            manifests: entries.into_iter().map(|(m, _)| m).collect(),
        }
    }

    /// Top-level digest (what a pull by digest uses).
    pub fn digest(&self) -> &str {
        match self {
            Artifact::Image(m) => &m.digest,
            Artifact::Index { digest, .. } => digest,
        }
    }

    /// Top-level media type.
    pub fn media_type(&self) -> &str {
        match self {
            Artifact::Image(m) => &m.media_type,
            Artifact::Index { media_type, .. } => media_type,
        }
    }

    /// Top-level serialized manifest or index.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Artifact::Image(m) => &m.bytes,
            Artifact::Index { bytes, .. } => bytes,
        }
    }

    /// The images (one for a single image).
    pub fn manifests(&self) -> &[Manifest] {
        match self {
            Artifact::Image(m) => std::slice::from_ref(m),
            Artifact::Index { manifests, .. } => manifests,
        }
    }

    /// Mutable access to the images.
    pub fn manifests_mut(&mut self) -> &mut [Manifest] {
        match self {
            Artifact::Image(m) => std::slice::from_mut(m),
            Artifact::Index { manifests, .. } => manifests,
        }
    }
}

/// The config of a new image: labels, rootfs over `layers`, one history entry per layer.
/// `created` is only written when asked (e.g. from `SOURCE_DATE_EPOCH`).
pub fn new_config(
    platform: &Platform,
    labels: &BTreeMap<String, String>,
    layers: &[(&Layer, &str)],
    created: Option<&str>,
) -> Vec<u8> {
    let mut cfg = serde_json::Map::new();
    cfg.insert("architecture".into(), json!(platform.architecture));
    cfg.insert("os".into(), json!(platform.os));
    if let Some(v) = &platform.variant {
        cfg.insert("variant".into(), json!(v));
    }
    cfg.insert("config".into(), json!({ "Labels": labels }));
    cfg.insert(
        "rootfs".into(),
        json!({"type": "layers", "diff_ids": layers.iter().map(|(l, _)| l.diff_id.clone()).collect::<Vec<_>>()}),
    );
    let history: Vec<Value> = layers
        .iter()
        .map(|(_, by)| {
            let mut h = serde_json::Map::new();
            h.insert("created_by".into(), json!(by));
            if let Some(c) = created {
                h.insert("created".into(), json!(c));
            }
            Value::Object(h)
        })
        .collect();
    cfg.insert("history".into(), Value::Array(history));
    if let Some(c) = created {
        cfg.insert("created".into(), json!(c));
    }
    serde_json::to_vec(&Value::Object(cfg)).unwrap_or_default()
}

/// RFC 3339 UTC time of a Unix timestamp (for `SOURCE_DATE_EPOCH`).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The default platform of images olmctl builds from scratch. Bundle and catalog content is
/// platform-independent; runtimes pull a single manifest whatever its platform says.
pub fn default_platform() -> Platform {
    Platform {
        os: "linux".into(),
        architecture: "amd64".into(),
        variant: None,
    }
}

/// True for index entries that are not runnable images (BuildKit attestations and
/// `unknown/unknown` entries).
pub fn is_attestation(d: &Descriptor) -> bool {
    d.annotations.contains_key("vnd.docker.reference.type")
        || d.platform
            .as_ref()
            .is_some_and(|p| p.os == "unknown" || p.architecture == "unknown")
}

/// Checks that a manifest is an image manifest of a known media type; returns its config
/// and layer descriptors.
pub fn parse_manifest(
    bytes: &[u8],
    what: &str,
) -> Result<(String, Descriptor, Vec<Descriptor>), String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("{what}: manifest is not JSON: {e}"))?;
    let mt = v
        .get("mediaType")
        .and_then(Value::as_str)
        .unwrap_or(media::OCI_MANIFEST)
        .to_string();
    if !media::is_manifest(&mt) {
        return Err(format!("{what}: unsupported manifest media type {mt:?}"));
    }
    let config = Descriptor::from_json(
        v.get("config")
            .ok_or_else(|| format!("{what}: manifest has no config"))?,
        &format!("{what} config"),
    )?;
    let layers = v
        .get("layers")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{what}: manifest has no layers list"))?
        .iter()
        .enumerate()
        .map(|(i, l)| Descriptor::from_json(l, &format!("{what} layer {i}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((mt, config, layers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn platform_parse_and_display() {
        let p = Platform::parse("linux/arm64/v8").unwrap();
        assert_eq!(p.to_string(), "linux/arm64/v8");
        assert_eq!(Platform::parse("linux/amd64").unwrap().variant, None);
        assert!(Platform::parse("linux").is_err());
        assert!(Platform::parse("/amd64").is_err());
    }

    #[test]
    fn manifest_round_trips_through_parse() {
        let cfg = Blob::bytes(media::OCI_CONFIG, b"{}".to_vec());
        let layer = Blob::bytes(media::OCI_LAYER_GZIP, b"x".to_vec());
        let m = Manifest::new(media::OCI_MANIFEST, cfg.clone(), vec![layer.clone()]);
        let (mt, c, ls) = parse_manifest(&m.bytes, "test").unwrap();
        assert_eq!(mt, media::OCI_MANIFEST);
        assert_eq!(c, cfg.desc);
        assert_eq!(ls, vec![layer.desc.clone()]);
        assert_eq!(m.digest, sha256(&m.bytes));
        let again = Manifest::new(media::OCI_MANIFEST, cfg, vec![layer]);
        assert_eq!(again.bytes, m.bytes);
        assert!(
            parse_manifest(b"{\"mediaType\":\"x\"}", "t")
                .unwrap_err()
                .contains("unsupported")
        );
    }
}
