//! The image commands as single operations: load and check the source, build the image, deliver
//! it ([`crate::oci::deliver`]). The command line calls one of these once and prints the result.
//!
//! - [`bundle`]: `bundle build`, a bundle directory as a bundle image;
//! - [`catalog`]: `catalog push`, a catalog directory as a catalog image (standalone or on a
//!   base image that serves it);
//! - [`binary`]: `image build`, a binary (and directory trees) on a base image or scratch.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diag::{Finding, Severity};
use crate::oci::binary_image as bin;
use crate::oci::deliver::{Delivered, Dest, append_to_base, deliver};
use crate::oci::events::Events;
use crate::oci::image::Platform;
use crate::oci::layer::{Layer, source_date_epoch};
use crate::oci::registry::{Options, Registry, parse_ref};
use crate::text::esc;

/// Why an image was not built.
#[derive(Debug)]
pub enum Refused {
    /// A usage or I/O error (exit status 2): bad reference, unreadable source, registry failure.
    Usage(String),
    /// The source has error-level findings (exit status 1); `message` says what to do.
    Findings {
        /// The error-level findings.
        errors: Vec<Finding>,
        /// What to do about them.
        message: String,
    },
}

impl From<String> for Refused {
    fn from(e: String) -> Self {
        Refused::Usage(e)
    }
}

/// Stops a build on error-level findings unless `force`; codes in `blocking` (content that does
/// not load) stop it even then. Forced over, the findings and a warning go to `events`.
fn check(
    findings: &[Finding],
    what: &str,
    verb: &str,
    force: bool,
    blocking: &[&str],
    events: &dyn Events,
) -> Result<(), Refused> {
    let errors: Vec<Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .cloned()
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    let blocked = errors.iter().any(|f| blocking.contains(&f.code));
    if !force || blocked {
        let message = format!(
            "the {what} has {} error-level findings; fix them{}",
            errors.len(),
            if blocked {
                " (files that do not load cannot be used)"
            } else {
                match verb {
                    "build" => " or pass --force to build anyway",
                    _ => " or pass --force to push anyway",
                }
            }
        );
        return Err(Refused::Findings { errors, message });
    }
    events.note(crate::diag::render_text(&errors, false).trim_end_matches('\n'));
    events.warn(&format!(
        "{verb}ing despite {} error-level findings (--force)",
        errors.len()
    ));
    Ok(())
}

/// `created` in the config only when SOURCE_DATE_EPOCH asks for a date; layer times are always
/// SOURCE_DATE_EPOCH (or 0).
fn epoch_and_created() -> (u64, Option<u64>) {
    let epoch = source_date_epoch();
    (epoch, std::env::var_os("SOURCE_DATE_EPOCH").map(|_| epoch))
}

fn target(dest: &Dest) -> Result<oci_client::Reference, Refused> {
    parse_ref(&dest.tag).map_err(|e| Refused::Usage(format!("--tag: {e}")))
}

/// A built bundle image, delivered.
#[derive(Debug, Clone)]
pub struct BundleBuilt {
    /// Where it went.
    pub delivered: Delivered,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
}

/// `bundle build`: reads and validates the bundle at `dir` (error-level findings refuse unless
/// `force`), builds its image and delivers it.
pub async fn bundle(
    dir: &Path,
    dest: &Dest,
    force: bool,
    opts: &Options,
    events: &dyn Events,
) -> Result<BundleBuilt, Refused> {
    let target = target(dest)?;
    let b = crate::bundle::load::load_bundle(dir).map_err(|e| Refused::Usage(e.to_string()))?;
    check(
        &crate::checks::bundle::validate(&b),
        "bundle",
        "build",
        force,
        &[],
        events,
    )?;
    let (epoch, created) = epoch_and_created();
    let img = crate::oci::bundle_image::build(&b, epoch, created)?;
    events.note(&format!(
        "built bundle image {} ({} entries, {} labels)",
        img.artifact.digest(),
        img.files,
        img.labels.len()
    ));
    let reg = dest
        .push
        .then(|| Registry::new(opts.clone(), &[&target], &[&target]));
    let delivered = deliver(reg.as_ref(), img.artifact, dest, events).await?;
    Ok(BundleBuilt {
        delivered,
        labels: img.labels,
    })
}

/// What `catalog push` builds.
#[derive(Debug, Clone)]
pub struct CatalogSpec {
    /// Catalog directory.
    pub dir: PathBuf,
    /// Base image to append to (it serves the catalog).
    pub base_image: Option<String>,
    /// Push even when validation finds errors (not over files that do not load).
    pub force: bool,
    /// Extra labels.
    pub labels: BTreeMap<String, String>,
    /// Encoding of the FBC files.
    pub format: crate::fbc::write::Format,
    /// What serves the catalog in the image (with a base image).
    pub server: crate::oci::catalog_image::Server,
}

/// A built catalog image, delivered.
#[derive(Debug, Clone)]
pub struct CatalogBuilt {
    /// Where it went.
    pub delivered: Delivered,
    /// The digest of the `/configs` layer.
    pub layer: String,
    /// Files in it.
    pub files: usize,
}

/// `catalog push`: loads and validates the catalog (files that do not load always refuse),
/// writes it canonically as the `/configs` layer, builds the image (standalone, or on the base
/// image for each of its platforms) and delivers it.
pub async fn catalog(
    spec: &CatalogSpec,
    dest: &Dest,
    opts: &Options,
    events: &dyn Events,
) -> Result<CatalogBuilt, Refused> {
    let target = target(dest)?;
    let base = spec
        .base_image
        .as_deref()
        .map(parse_ref)
        .transpose()
        .map_err(|e| Refused::Usage(format!("--base-image: {e}")))?;
    let loaded = crate::catalog::load(std::slice::from_ref(&spec.dir))?;
    check(
        &crate::checks::fbc::validate(&loaded),
        "catalog",
        "push",
        spec.force,
        &["FBC001", "FBC002", "FBC003"],
        events,
    )?;
    let files = crate::fbc::write::canonical_files(&loaded.cfg, spec.format);
    drop(loaded);
    let (epoch, created) = epoch_and_created();
    let layer = crate::oci::catalog_image::configs_layer(&files, epoch)?;
    let labels = crate::oci::catalog_image::labels(&spec.labels);
    events.note(&format!(
        "catalog layer {} ({} files, {} bytes compressed)",
        layer.digest,
        files.len(),
        layer.blob.len()
    ));
    let mut refs = vec![&target];
    refs.extend(base.iter());
    let reg = (dest.push || base.is_some()).then(|| Registry::new(opts.clone(), &[&target], &refs));
    let art = match (&base, &reg) {
        (Some(b), Some(reg)) => {
            let exec = crate::oci::catalog_image::exec(spec.server);
            let added = [(&layer, crate::oci::catalog_image::CREATED_BY)];
            append_to_base(reg, b, &added, &labels, &exec, None, events).await?
        }
        _ => crate::oci::catalog_image::standalone(&layer, &labels, created),
    };
    let delivered = deliver(reg.as_ref(), art, dest, events).await?;
    Ok(CatalogBuilt {
        delivered,
        layer: layer.digest,
        files: files.len(),
    })
}

/// What `image build` builds.
#[derive(Debug, Clone)]
pub struct BinarySpec {
    /// The base image, or [`bin::SCRATCH`].
    pub base_image: String,
    /// `PATH[:DEST]`.
    pub binary: String,
    /// Directory trees added as layers between the base and the binary, in order, each as the
    /// image's root file system.
    pub layers: Vec<PathBuf>,
    /// `config.User` (numeric `UID[:GID]`); the base's when `None`.
    pub user: Option<String>,
    /// `config.WorkingDir` (absolute); the base's when `None`.
    pub workdir: Option<String>,
    /// `KEY=VALUE` entries of `config.Env`.
    pub env: Vec<String>,
    /// The platform the binary runs on.
    pub platform: Platform,
    /// Labels.
    pub labels: BTreeMap<String, String>,
}

/// A built binary image, delivered.
#[derive(Debug, Clone)]
pub struct BinaryBuilt {
    /// Where it went.
    pub delivered: Delivered,
    /// The digests of the layers added, in order (the binary's last).
    pub layers: Vec<String>,
    /// The entrypoint (the binary's path in the image).
    pub entrypoint: String,
    /// `config.User`, when set.
    pub user: Option<String>,
    /// The platform.
    pub platform: Platform,
}

/// `image build`: a binary appended to a base image as its entrypoint, daemonless, as ko does;
/// directory trees go between the base and the binary.
pub async fn binary(
    spec: &BinarySpec,
    dest: &Dest,
    opts: &Options,
    events: &dyn Events,
) -> Result<BinaryBuilt, Refused> {
    let target = target(dest)?;
    let base = match spec.base_image.as_str() {
        bin::SCRATCH => None,
        other => Some(parse_ref(other).map_err(|e| format!("--base-image: {e}"))?),
    };
    let (src, entry) = bin::parse_binary(&spec.binary)?;
    let user = spec.user.as_deref().map(bin::parse_user).transpose()?;
    let workdir = spec
        .workdir
        .as_deref()
        .map(bin::parse_workdir)
        .transpose()?;
    let env = spec
        .env
        .iter()
        .map(|e| bin::parse_env(e))
        .collect::<Result<Vec<_>, _>>()?;
    let (epoch, created) = epoch_and_created();
    let mut built: Vec<(Layer, String)> = Vec::new();
    for dir in &spec.layers {
        let l = bin::tree_layer(dir, epoch)?;
        events.note(&format!(
            "layer {} ({}, {} bytes compressed)",
            l.digest,
            esc(dir.display()),
            l.blob.len()
        ));
        built.push((l, bin::tree_created_by(dir)));
    }
    let layer = bin::binary_layer(&src, &entry, epoch)?;
    events.note(&format!(
        "binary layer {} ({} at {}, {} bytes compressed)",
        layer.digest,
        esc(src.display()),
        esc(&entry),
        layer.blob.len()
    ));
    built.push((layer, bin::created_by(&src, &entry)));
    let added: Vec<(&Layer, &str)> = built.iter().map(|(l, by)| (l, by.as_str())).collect();
    let exec = bin::exec(&entry, user.clone(), workdir, env);
    let mut refs = vec![&target];
    refs.extend(base.iter());
    let reg = (dest.push || base.is_some()).then(|| Registry::new(opts.clone(), &[&target], &refs));
    let art = match (&base, &reg) {
        (Some(base), Some(reg)) => {
            append_to_base(
                reg,
                base,
                &added,
                &spec.labels,
                &exec,
                Some(&spec.platform),
                events,
            )
            .await?
        }
        _ => bin::standalone(&added, &spec.labels, &exec, &spec.platform, created),
    };
    let delivered = deliver(reg.as_ref(), art, dest, events).await?;
    Ok(BinaryBuilt {
        delivered,
        layers: built.iter().map(|(l, _)| l.digest.clone()).collect(),
        entrypoint: entry,
        user,
        platform: spec.platform.clone(),
    })
}
