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
//!
//! `install --bundle NEW --upgrade` is operator-sdk's `run bundle-upgrade` (internal/olm/
//! operator/bundleupgrade/upgrade.go; internal/olm/operator/registry/index_image.go,
//! `IndexImageCatalogCreator.UpdateCatalog`, `runFBCUpgrade` and `upgradeFBC`): the bundles the
//! CatalogSource records ([`recorded`], where operator-sdk reads `injected-bundles`) and the new
//! one are rendered again into one channel, each entry replacing the one before it
//! ([`chain_fbc`]), so that OLM upgrades the Subscription along `replaces`. Unlike operator-sdk,
//! which leaves versions to `replaces`, a bundle that is not newer than the last one is refused
//! ([`check_newer`]): OLM would not upgrade to it.

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
    /// A bundle of the chain has no `spec.version`, or one that is not semver.
    BadVersion {
        /// The bundle's CSV name.
        csv: String,
        /// Its `spec.version` (empty without one).
        version: String,
    },
    /// A bundle of the chain is of another package than the first.
    OtherPackage {
        /// The package of the first bundle (the installed one).
        want: String,
        /// The bundle's CSV name.
        csv: String,
        /// Its package.
        got: String,
    },
    /// The new bundle is not newer than the last one the catalog serves.
    NotNewer {
        /// The last bundle's CSV name and version.
        last: (String, String),
        /// The new bundle's CSV name and version.
        new: (String, String),
    },
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
            OneBundleError::BadVersion { csv, version } if version.is_empty() => write!(
                f,
                "CSV {csv} has no spec.version: an upgrade needs versions to order the bundles by"
            ),
            OneBundleError::BadVersion { csv, version } => write!(
                f,
                "CSV {csv} has spec.version {version:?}, which is not semver: an upgrade needs versions to order the bundles by"
            ),
            OneBundleError::OtherPackage { want, csv, got } => write!(
                f,
                "CSV {csv} is a bundle of package {got}, not {want}: an upgrade adds a bundle of the installed package"
            ),
            OneBundleError::NotNewer { last, new } => write!(
                f,
                "{} (version {}) is not newer than {} (version {}), the last bundle the catalog serves: OLM upgrades only to a newer version",
                new.0, new.1, last.0, last.1
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

/// The bundle images a CatalogSource's [`BUNDLE_ANNOTATION`] records, oldest first: the value
/// is one image (as the first `install --bundle` writes it) or several separated by commas.
pub fn recorded(annotation: &str) -> Vec<String> {
    annotation
        .split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .map(str::to_string)
        .collect()
}

/// The [`BUNDLE_ANNOTATION`] value recording `images`, oldest first ([`recorded`] reads it).
pub fn record(images: &[String]) -> String {
    images.join(",")
}

/// The semver of a bundle's `spec.version` (a leading `v` allowed).
fn version_of(b: &OneBundle) -> Result<semver::Version, OneBundleError> {
    let v = b.version.as_deref().unwrap_or_default();
    semver::Version::parse(v.trim().trim_start_matches('v')).map_err(|_| {
        OneBundleError::BadVersion {
            csv: b.csv.clone(),
            version: v.to_string(),
        }
    })
}

/// Checks that `new` can follow `last` in the upgrade channel: the same package and a greater
/// version (semver order).
pub fn check_newer(last: &OneBundle, new: &OneBundle) -> Result<(), OneBundleError> {
    if new.package != last.package {
        return Err(OneBundleError::OtherPackage {
            want: last.package.clone(),
            csv: new.csv.clone(),
            got: new.package.clone(),
        });
    }
    let (lv, nv) = (version_of(last)?, version_of(new)?);
    if nv <= lv {
        return Err(OneBundleError::NotNewer {
            last: (last.csv.clone(), lv.to_string()),
            new: (new.csv.clone(), nv.to_string()),
        });
    }
    Ok(())
}

/// The catalog of several bundles of one package, oldest first, each with its `olm.bundle`
/// blob: the package with the first bundle's channel (the one the Subscription follows) as
/// default, that channel with one entry per bundle, each replacing the one before it, then the
/// bundles' blobs. The versions must increase ([`check_newer`]). As operator-sdk's
/// `upgradeFBC` (internal/olm/operator/registry/index_image.go), which chains the rendered
/// bundles by `replaces` in the order it recorded them.
pub fn chain_fbc(chain: &[(&OneBundle, &Node)]) -> Result<String, OneBundleError> {
    let Some((first, _)) = chain.first() else {
        return Ok(String::new());
    };
    if chain.len() > 1 {
        for w in chain.windows(2) {
            check_newer(w[0].0, w[1].0)?;
        }
    }
    let package = map(vec![
        ("schema", text("olm.package")),
        ("name", text(&first.package)),
        ("defaultChannel", text(&first.channel)),
    ]);
    let entries = chain
        .iter()
        .enumerate()
        .map(|(i, (b, _))| {
            let mut e = vec![("name", text(&b.csv))];
            if i > 0 {
                e.push(("replaces", text(&chain[i - 1].0.csv)));
            }
            map(e)
        })
        .collect();
    let channel = map(vec![
        ("schema", text("olm.channel")),
        ("package", text(&first.package)),
        ("name", text(&first.channel)),
        ("entries", Node::new(Pos::default(), Value::Seq(entries))),
    ]);
    let mut blobs = vec![package, channel];
    blobs.extend(chain.iter().map(|(_, n)| (*n).clone()));
    let mut out = String::new();
    write_blobs(&blobs, Format::Json, &mut out);
    Ok(out)
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
        chain_fbc(&[(self, bundle)]).unwrap_or_default()
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

    fn blobs_of(fbc: &str) -> Vec<serde_json::Value> {
        let mut blobs = Vec::new();
        crate::fbc::json::parse_stream(fbc, |n| {
            blobs.push(serde_json::from_str(&n.to_json()).unwrap())
        })
        .unwrap();
        blobs
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
        assert_eq!(
            blobs_of(&one.fbc(&blob)),
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

    fn one(csv: &str, version: Option<&str>) -> OneBundle {
        OneBundle {
            package: "widgets".into(),
            channel: "stable".into(),
            csv: csv.into(),
            version: version.map(str::to_string),
            image: format!("reg.example/{csv}"),
        }
    }

    #[test]
    fn the_recorded_bundles_are_one_image_or_several_separated_by_commas() {
        assert_eq!(
            recorded("reg.example/a@sha256:1"),
            ["reg.example/a@sha256:1"]
        );
        let two = vec!["r/a@sha256:1".to_string(), "r/b@sha256:2".to_string()];
        assert_eq!(recorded(&record(&two)), two);
        assert_eq!(recorded(" r/a@sha256:1 , ,r/b@sha256:2"), two);
        assert!(recorded("").is_empty());
    }

    #[test]
    fn a_chain_of_bundles_is_one_channel_where_each_entry_replaces_the_one_before() {
        let (a, b, c) = (
            one("widgets.v1.2.0", Some("1.2.0")),
            one("widgets.v1.10.0", Some("v1.10.0")),
            one("widgets.v2.0.0", Some("2.0.0")),
        );
        let blob = |n: &str| map(vec![("schema", text("olm.bundle")), ("name", text(n))]);
        let (ba, bb, bc) = (blob(&a.csv), blob(&b.csv), blob(&c.csv));
        let out = chain_fbc(&[(&a, &ba), (&b, &bb), (&c, &bc)]).unwrap();
        assert_eq!(
            blobs_of(&out),
            [
                serde_json::json!({"schema": "olm.package", "name": "widgets", "defaultChannel": "stable"}),
                serde_json::json!({"schema": "olm.channel", "package": "widgets", "name": "stable",
                                   "entries": [{"name": "widgets.v1.2.0"},
                                               {"name": "widgets.v1.10.0", "replaces": "widgets.v1.2.0"},
                                               {"name": "widgets.v2.0.0", "replaces": "widgets.v1.10.0"}]}),
                serde_json::json!({"schema": "olm.bundle", "name": "widgets.v1.2.0"}),
                serde_json::json!({"schema": "olm.bundle", "name": "widgets.v1.10.0"}),
                serde_json::json!({"schema": "olm.bundle", "name": "widgets.v2.0.0"}),
            ]
        );
    }

    #[test]
    fn a_bundle_not_newer_than_the_last_is_refused_naming_both() {
        let (a, b) = (
            one("widgets.v1.10.0", Some("1.10.0")),
            one("widgets.v1.9.0", Some("1.9.0")),
        );
        let e = check_newer(&a, &b).unwrap_err();
        assert_eq!(
            e,
            OneBundleError::NotNewer {
                last: ("widgets.v1.10.0".into(), "1.10.0".into()),
                new: ("widgets.v1.9.0".into(), "1.9.0".into()),
            }
        );
        let m = e.to_string();
        assert!(
            m.contains("widgets.v1.9.0 (version 1.9.0)")
                && m.contains("widgets.v1.10.0 (version 1.10.0)"),
            "{m}"
        );
        let n = map(vec![]);
        assert!(chain_fbc(&[(&a, &n), (&b, &n)]).is_err());
        // The same version is not newer either.
        assert!(matches!(
            check_newer(&a, &a),
            Err(OneBundleError::NotNewer { .. })
        ));
        // Nor is a bundle without a semver version, or of another package.
        let none = one("widgets.vx", None);
        assert_eq!(
            check_newer(&a, &none),
            Err(OneBundleError::BadVersion {
                csv: "widgets.vx".into(),
                version: String::new()
            })
        );
        let mut other = one("gadgets.v2.0.0", Some("2.0.0"));
        other.package = "gadgets".into();
        assert!(matches!(
            check_newer(&a, &other),
            Err(OneBundleError::OtherPackage { .. })
        ));
        assert!(check_newer(&b, &a).is_ok());
    }
}
