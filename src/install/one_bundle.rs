//! `olmctl install --bundle`: the one-bundle catalog that operator-sdk's `run bundle` serves a
//! bundle from (operator-sdk internal/olm/operator/bundle/install.go, `Install.setup` and
//! `generateFBCContent`; internal/olm/fbcutil/util.go, `FBCContext.CreateFBC`): an
//! `olm.package` blob, one `olm.channel` with the bundle as its only entry, and the bundle's
//! `olm.bundle` blob (as `catalog render` writes it). The Subscription starts at the bundle's
//! CSV (`i.StartingCSV = csv.Name`) in that channel, from a CatalogSource named
//! `<package>-catalog` (`operator.CatalogNameForPackage`, internal/olm/operator/helpers.go).
//!
//! Two deviations from operator-sdk, both because the catalog is an image pushed to a registry
//! rather than a ConfigMap its registry pod reads: the channel is the bundle's own (its default
//! channel annotation, else the first of its channels, as `run bundle` picks it for a SQLite
//! index) instead of `operator-sdk-run-bundle`, so that the Subscription reads as one for a
//! published catalog; and the CatalogSource records the bundle image in the annotation
//! [`BUNDLE_ANNOTATION`] (where `run bundle` keeps `operators.operatorframework.io/injected-bundles`),
//! which `olmctl uninstall` finds it by. Pure: the caller builds, pushes and applies.

use std::fmt;

use crate::bundle::load::{BundleDir, str_at};
use crate::fbc::node::{Node, Pos, Value};
use crate::fbc::write::{Format, map, write_blobs};

/// The annotation on the CatalogSources `install --bundle` creates: the bundle image the
/// catalog serves. With `spec.publisher` [`super::uninstall::PUBLISHER`] it marks a catalog that
/// `olmctl uninstall` deletes with the Subscription.
pub const BUNDLE_ANNOTATION: &str = "olmctl.dev/bundle";

/// The image the catalog layer is appended to, so that the catalog serves itself: operator-sdk's
/// `fbcutil.DefaultIndexImage` (internal/olm/fbcutil/util.go).
pub const DEFAULT_BASE_IMAGE: &str = "quay.io/operator-framework/opm:latest";

const PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
const CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
const DEFAULT_CHANNEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";

/// Why a bundle cannot be served as a one-bundle catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OneBundleError {
    /// metadata/annotations.yaml names no package.
    NoPackage,
    /// metadata/annotations.yaml names no channel.
    NoChannel,
    /// No ClusterServiceVersion in manifests/.
    NoCsv,
}

impl fmt::Display for OneBundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OneBundleError::NoPackage => write!(
                f,
                "metadata/annotations.yaml has no {PACKAGE}: the catalog needs the bundle's package"
            ),
            OneBundleError::NoChannel => write!(
                f,
                "metadata/annotations.yaml has neither {DEFAULT_CHANNEL} nor {CHANNELS}: the catalog needs a channel for the bundle"
            ),
            OneBundleError::NoCsv => write!(
                f,
                "manifests/ has no ClusterServiceVersion: the Subscription starts at the bundle's CSV"
            ),
        }
    }
}

impl std::error::Error for OneBundleError {}

/// A bundle as its one-bundle catalog serves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneBundle {
    /// The package (the bundle's package annotation).
    pub package: String,
    /// The channel: the bundle's default channel, else the first of its channels.
    pub channel: String,
    /// The CSV's name: the channel entry and the Subscription's startingCSV.
    pub csv: String,
    /// The CSV's `spec.version` (`None` without one): the tag of the images named after it.
    pub version: Option<String>,
    /// The bundle image the catalog points at.
    pub image: String,
}

fn text(s: &str) -> Node {
    Node::new(Pos::default(), Value::Str(s.to_string()))
}

impl OneBundle {
    /// Reads what the catalog needs from the loaded bundle `b`, whose image is `image`.
    pub fn of(b: &BundleDir, image: &str) -> Result<OneBundle, OneBundleError> {
        let nonempty = |k: &str| {
            b.annotation(k)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let package = nonempty(PACKAGE).ok_or(OneBundleError::NoPackage)?;
        let channel = nonempty(DEFAULT_CHANNEL)
            .or_else(|| {
                nonempty(CHANNELS).and_then(|c| {
                    c.split(',')
                        .map(str::trim)
                        .find(|c| !c.is_empty())
                        .map(str::to_string)
                })
            })
            .ok_or(OneBundleError::NoChannel)?;
        let (_, csv) = b.csv().ok_or(OneBundleError::NoCsv)?;
        let name = str_at(csv, &["metadata", "name"])
            .filter(|n| !n.is_empty())
            .ok_or(OneBundleError::NoCsv)?;
        Ok(OneBundle {
            package,
            channel,
            csv: name.to_string(),
            version: str_at(csv, &["spec", "version"]).map(str::to_string),
            image: image.to_string(),
        })
    }

    /// The tag of the images named after the bundle: `v<version>`, else `latest`.
    fn tag(&self) -> String {
        match &self.version {
            Some(v) => format!("v{}", v.trim_start_matches('v')),
            None => "latest".into(),
        }
    }

    /// Where a bundle directory's image is pushed under `registry` (`HOST[/PATH]`):
    /// `<registry>/<package>-bundle:v<version>`.
    pub fn bundle_ref(registry: &str, package: &str, version: Option<&str>) -> String {
        let b = OneBundle {
            package: package.into(),
            channel: String::new(),
            csv: String::new(),
            version: version.map(str::to_string),
            image: String::new(),
        };
        format!(
            "{}/{package}-bundle:{}",
            registry.trim_end_matches('/'),
            b.tag()
        )
    }

    /// Where the catalog image is pushed under `registry`: `<registry>/<package>-catalog:v<version>`.
    pub fn catalog_ref(&self, registry: &str) -> String {
        format!(
            "{}/{}-catalog:{}",
            registry.trim_end_matches('/'),
            self.package,
            self.tag()
        )
    }

    /// The catalog as FBC (a JSON stream, as `opm render` writes it): the package with the
    /// channel as default, the channel with the bundle as its only entry, then `bundle`, the
    /// bundle's `olm.bundle` blob ([`crate::bundle::render::render`]).
    pub fn fbc(&self, bundle: &Node) -> String {
        let package = map(vec![
            ("schema", text("olm.package")),
            ("name", text(&self.package)),
            ("defaultChannel", text(&self.channel)),
        ]);
        let entry = map(vec![("name", text(&self.csv))]);
        let channel = map(vec![
            ("schema", text("olm.channel")),
            ("package", text(&self.package)),
            ("name", text(&self.channel)),
            (
                "entries",
                Node::new(Pos::default(), Value::Seq(vec![entry])),
            ),
        ]);
        let mut out = String::new();
        write_blobs(&[package, channel, bundle.clone()], Format::Json, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle_dir(annotations: &str, csv: &str) -> (tempfile::TempDir, BundleDir) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("manifests")).unwrap();
        std::fs::create_dir_all(d.path().join("metadata")).unwrap();
        std::fs::write(d.path().join("metadata/annotations.yaml"), annotations).unwrap();
        std::fs::write(d.path().join("manifests/csv.yaml"), csv).unwrap();
        let b = crate::bundle::load::load_bundle(d.path()).unwrap();
        (d, b)
    }

    const CSV: &str = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: widgets.v1.2.0\nspec:\n  version: 1.2.0\n";

    #[test]
    fn the_channel_is_the_default_else_the_first_and_the_fbc_has_one_entry() {
        let (_d, b) = bundle_dir(
            "annotations:\n  operators.operatorframework.io.bundle.package.v1: widgets\n  operators.operatorframework.io.bundle.channels.v1: fast, stable\n",
            CSV,
        );
        let one = OneBundle::of(&b, "reg.example/w-bundle:v1.2.0").unwrap();
        assert_eq!(one.channel, "fast");
        assert_eq!(one.csv, "widgets.v1.2.0");
        assert_eq!(
            one.catalog_ref("reg.example/team/"),
            "reg.example/team/widgets-catalog:v1.2.0"
        );
        assert_eq!(
            OneBundle::bundle_ref("reg.example", "widgets", Some("v1.2.0")),
            "reg.example/widgets-bundle:v1.2.0"
        );
        let (_d2, b2) = bundle_dir(
            "annotations:\n  operators.operatorframework.io.bundle.package.v1: widgets\n  operators.operatorframework.io.bundle.channels.v1: fast,stable\n  operators.operatorframework.io.bundle.channel.default.v1: stable\n",
            CSV,
        );
        let one = OneBundle::of(&b2, "x").unwrap();
        assert_eq!(one.channel, "stable");
        let blob = map(vec![
            ("schema", text("olm.bundle")),
            ("name", text("widgets.v1.2.0")),
        ]);
        let mut blobs: Vec<serde_json::Value> = Vec::new();
        crate::fbc::json::parse_stream(&one.fbc(&blob), |n| {
            blobs.push(serde_json::from_str(&n.to_json()).unwrap())
        })
        .unwrap();
        assert_eq!(
            blobs,
            [
                serde_json::json!({"schema": "olm.package", "name": "widgets", "defaultChannel": "stable"}),
                serde_json::json!({"schema": "olm.channel", "package": "widgets", "name": "stable",
                                   "entries": [{"name": "widgets.v1.2.0"}]}),
                serde_json::json!({"schema": "olm.bundle", "name": "widgets.v1.2.0"}),
            ]
        );
    }

    #[test]
    fn a_bundle_without_package_channel_or_csv_is_refused() {
        let (_d, b) = bundle_dir("annotations: {}\n", CSV);
        assert_eq!(OneBundle::of(&b, "x"), Err(OneBundleError::NoPackage));
        let (_d, b) = bundle_dir(
            "annotations:\n  operators.operatorframework.io.bundle.package.v1: widgets\n",
            CSV,
        );
        let e = OneBundle::of(&b, "x").unwrap_err();
        assert_eq!(e, OneBundleError::NoChannel);
        assert!(e.to_string().contains("channel.default.v1"));
        let (_d, b) = bundle_dir(
            "annotations:\n  operators.operatorframework.io.bundle.package.v1: widgets\n  operators.operatorframework.io.bundle.channels.v1: fast\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        );
        assert_eq!(OneBundle::of(&b, "x"), Err(OneBundleError::NoCsv));
    }
}
