//! What a catalog serves the OLM double: bundles by package and channel, read from bundle
//! directories (`manifests/`, `metadata/annotations.yaml`), and released into it while a test
//! runs ([`Catalog::release`]), as a registry poll of a new catalog image would bring them.
//!
//! Channel order and successors follow OLM v0 for the catalogs the tests build (chains of
//! `replaces`, with `skips` and `olm.skipRange`): the head is the entry nothing replaces or
//! skips; the successor of an installed CSV is the entry that replaces it, skips it, or whose
//! skipRange contains its version, the newest first (`resolver.go :: getSubscriptionVariables`
//! with the channel's replaces chain). Dependencies (`olm.package.required`,
//! `olm.gvk.required`) are not modelled: a bundle that declares one is refused.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// One bundle.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The CSV's name.
    pub name: String,
    /// The package.
    pub package: String,
    /// The CSV's `spec.version`.
    pub version: semver::Version,
    /// `spec.replaces`.
    pub replaces: Option<String>,
    /// `spec.skips`.
    pub skips: Vec<String>,
    /// `olm.skipRange`.
    pub skip_range: Option<String>,
    /// The bundle image reference.
    pub image: String,
    /// Every file of `manifests/` as (file name, object), sorted by file name.
    pub files: Vec<(String, Value)>,
    /// `metadata/annotations.yaml` annotations.
    pub annotations: Vec<(String, String)>,
}

impl Bundle {
    /// Reads a bundle directory; `image` is the reference it is served as.
    pub fn from_dir(dir: &Path, image: &str) -> Result<Bundle, String> {
        let mut files = Vec::new();
        let mdir = dir.join("manifests");
        let mut names: Vec<String> = std::fs::read_dir(&mdir)
            .map_err(|e| format!("{}: {e}", mdir.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for n in names {
            let p = mdir.join(&n);
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            for o in crate::fixtures::yaml_objects(&text) {
                files.push((n.clone(), o));
            }
        }
        let ann_path = dir.join("metadata/annotations.yaml");
        let ann = crate::fixtures::yaml_file(&ann_path);
        let annotations: Vec<(String, String)> = ann
            .first()
            .and_then(|a| a["annotations"].as_object().cloned())
            .map(|m| {
                m.into_iter()
                    .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        Bundle::new(files, annotations, image)
    }

    /// A bundle from its files and annotations.
    pub fn new(
        files: Vec<(String, Value)>,
        annotations: Vec<(String, String)>,
        image: &str,
    ) -> Result<Bundle, String> {
        let csv = files
            .iter()
            .find(|(_, o)| o["kind"] == "ClusterServiceVersion")
            .map(|(_, o)| o.clone())
            .ok_or("the bundle has no ClusterServiceVersion")?;
        let package = annotations
            .iter()
            .find(|(k, _)| k == "operators.operatorframework.io.bundle.package.v1")
            .map(|(_, v)| v.clone())
            .ok_or("metadata/annotations.yaml names no package")?;
        let version = csv["spec"]["version"]
            .as_str()
            .and_then(|v| semver::Version::parse(v).ok())
            .ok_or("the CSV has no semver spec.version")?;
        let props = csv["metadata"]["annotations"]["olm.properties"]
            .as_str()
            .unwrap_or_default();
        if props.contains("olm.package.required") || props.contains("olm.gvk.required") {
            return Err("dependencies are not modelled by the OLM double".into());
        }
        Ok(Bundle {
            name: csv["metadata"]["name"].as_str().unwrap_or_default().into(),
            package,
            version,
            replaces: csv["spec"]["replaces"].as_str().map(str::to_string),
            skips: csv["spec"]["skips"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            skip_range: csv["metadata"]["annotations"]["olm.skipRange"]
                .as_str()
                .map(str::to_string),
            image: image.into(),
            files,
            annotations,
        })
    }

    /// The CSV.
    pub fn csv(&self) -> &Value {
        self.files
            .iter()
            .find(|(_, o)| o["kind"] == "ClusterServiceVersion")
            .map(|(_, o)| o)
            .expect("checked in new")
    }

    /// Whether this bundle is a successor of `installed` (its name and version).
    pub fn succeeds(&self, installed: &str, installed_version: Option<&semver::Version>) -> bool {
        self.replaces.as_deref() == Some(installed)
            || self.skips.iter().any(|s| s == installed)
            || match (&self.skip_range, installed_version) {
                (Some(r), Some(v)) => olmctl::range::Range::parse(r).is_ok_and(|r| r.contains(v)),
                _ => false,
            }
    }
}

#[derive(Default)]
struct Data {
    /// (channel, bundle), in release order.
    entries: Vec<(String, Bundle)>,
    /// Bumped on every release.
    generation: u64,
}

/// A catalog; clones share it.
#[derive(Clone, Default)]
pub struct Catalog {
    data: Arc<Mutex<Data>>,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// Adds `bundle` to `channel` (a new catalog image served).
    pub fn release(&self, channel: &str, bundle: Bundle) {
        let mut d = self.data.lock().expect("catalog");
        d.entries.push((channel.to_string(), bundle));
        d.generation += 1;
    }

    /// Changes on every release.
    pub fn generation(&self) -> u64 {
        self.data.lock().expect("catalog").generation
    }

    /// The bundles of a package's channel.
    pub fn channel(&self, package: &str, channel: &str) -> Vec<Bundle> {
        self.data
            .lock()
            .expect("catalog")
            .entries
            .iter()
            .filter(|(c, b)| c == channel && b.package == package)
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// The packages, sorted.
    pub fn packages(&self) -> Vec<String> {
        let d = self.data.lock().expect("catalog");
        let mut p: Vec<String> = d.entries.iter().map(|(_, b)| b.package.clone()).collect();
        p.sort();
        p.dedup();
        p
    }

    /// A package's channels, sorted.
    pub fn channels(&self, package: &str) -> Vec<String> {
        let d = self.data.lock().expect("catalog");
        let mut c: Vec<String> = d
            .entries
            .iter()
            .filter(|(_, b)| b.package == package)
            .map(|(c, _)| c.clone())
            .collect();
        c.sort();
        c.dedup();
        c
    }

    /// The package's default channel (the first bundle's annotation).
    pub fn default_channel(&self, package: &str) -> Option<String> {
        let d = self.data.lock().expect("catalog");
        d.entries
            .iter()
            .filter(|(_, b)| b.package == package)
            .find_map(|(_, b)| {
                b.annotations
                    .iter()
                    .find(|(k, _)| k == "operators.operatorframework.io.bundle.channel.default.v1")
                    .map(|(_, v)| v.clone())
            })
    }

    /// A bundle by CSV name.
    pub fn bundle(&self, name: &str) -> Option<Bundle> {
        self.data
            .lock()
            .expect("catalog")
            .entries
            .iter()
            .find(|(_, b)| b.name == name)
            .map(|(_, b)| b.clone())
    }

    /// The channel's head: the entry no other entry replaces or skips (the newest such).
    pub fn head(&self, package: &str, channel: &str) -> Option<Bundle> {
        let bundles = self.channel(package, channel);
        let mut heads: Vec<&Bundle> = bundles
            .iter()
            .filter(|b| {
                !bundles
                    .iter()
                    .any(|o| o.succeeds(&b.name, Some(&b.version)) && o.name != b.name)
            })
            .collect();
        heads.sort_by(|a, b| b.version.cmp(&a.version));
        heads.first().map(|b| (*b).clone())
    }

    /// The successor of `installed` in the channel (the newest that succeeds it).
    pub fn successor(
        &self,
        package: &str,
        channel: &str,
        installed: &str,
        installed_version: Option<&semver::Version>,
    ) -> Option<Bundle> {
        let mut next: Vec<Bundle> = self
            .channel(package, channel)
            .into_iter()
            .filter(|b| b.succeeds(installed, installed_version))
            .collect();
        next.sort_by(|a, b| b.version.cmp(&a.version));
        next.into_iter().next()
    }
}
