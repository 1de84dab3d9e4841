//! Pulling images into directories: resolve, check every digest, extract safely.

use std::collections::BTreeMap;
use std::path::Path;

use oci_client::Reference;

use super::bundle_image::PACKAGE_LABEL;
use super::catalog_image::{CONFIGS_LABEL, DATABASE_LABEL};
use super::extract::{Budget, Limits, Select, apply_layer};
use super::image::Platform;
use super::media;
use super::registry::{Registry, Resolved};

/// What an image holds, by its labels (as opm classifies references).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A catalog; the FBC is below this path.
    Catalog(String),
    /// A registry+v1 bundle.
    Bundle,
}

/// Classifies an image by its labels.
pub fn kind(what: &str, labels: &BTreeMap<String, String>) -> Result<Kind, String> {
    if let Some(p) = labels.get(CONFIGS_LABEL) {
        return Ok(Kind::Catalog(p.clone()));
    }
    if labels.contains_key(PACKAGE_LABEL) {
        return Ok(Kind::Bundle);
    }
    if labels.contains_key(DATABASE_LABEL) {
        return Err(format!(
            "{what}: sqlite-based index images are no longer supported, migrate to a file-based catalog"
        ));
    }
    Err(format!(
        "{what}: image type could not be determined, found labels {:?}",
        labels.keys().collect::<Vec<_>>()
    ))
}

/// A pulled image.
#[derive(Debug)]
pub struct Pulled {
    /// The resolved image.
    pub image: Resolved,
    /// Files written.
    pub files: u64,
    /// Uncompressed bytes read.
    pub bytes: u64,
}

/// Makes `dest` an empty directory (refusing a non-empty one); returns whether it was created.
pub fn prepare_dest(dest: &Path) -> Result<bool, String> {
    match std::fs::read_dir(dest) {
        Ok(mut rd) => {
            if rd.next().is_some() {
                Err(format!(
                    "{}: directory is not empty; give a new or empty directory",
                    dest.display()
                ))
            } else {
                Ok(false)
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
            Ok(true)
        }
        Err(e) => Err(format!("{}: {e}", dest.display())),
    }
}

/// Extracts the layers of `image` into `dest` (which must exist and be empty).
pub async fn extract_image(
    reg: &Registry,
    image: &Resolved,
    dest: &Path,
    select: &Select,
    limits: Limits,
) -> Result<(u64, u64), String> {
    let what = image.reference.whole();
    let diff_ids = image.diff_ids();
    if diff_ids.len() != image.layers.len() {
        return Err(format!(
            "{what}: config lists {} diff_ids for {} layers",
            diff_ids.len(),
            image.layers.len()
        ));
    }
    let mut budget = Budget::new(limits);
    for (i, (d, diff)) in image.layers.iter().zip(&diff_ids).enumerate() {
        let mt = d.media_type.as_str();
        let known = [
            media::OCI_LAYER_GZIP,
            media::OCI_LAYER_TAR,
            media::DOCKER_LAYER_GZIP,
            media::OCI_LAYER_ZSTD,
        ];
        if !known.contains(&mt) {
            return Err(format!(
                "{what}: layer {i} has unsupported media type {mt:?}"
            ));
        }
        let blob = reg.fetch_blob(&image.reference, d).await?;
        apply_layer(
            &blob,
            &format!("{what} layer {i} ({})", d.digest),
            Some(diff),
            dest,
            select,
            &mut budget,
        )?;
    }
    Ok((budget.files, budget.bytes()))
}

/// Pulls `r` into `dest`: resolve (index → `platform`), then extract everything below
/// `select`. A directory created here is removed again when the pull fails.
pub async fn pull_into(
    reg: &Registry,
    r: &Reference,
    platform: &Platform,
    dest: &Path,
    mut want: impl FnMut(&Resolved) -> Result<Select, String>,
    limits: Limits,
) -> Result<Pulled, String> {
    let image = reg.resolve(r, platform).await?;
    let select = want(&image)?;
    let created = prepare_dest(dest)?;
    match extract_image(reg, &image, dest, &select, limits).await {
        Ok((files, bytes)) => Ok(Pulled {
            image,
            files,
            bytes,
        }),
        Err(e) => {
            if created {
                let _ = std::fs::remove_dir_all(dest);
            } else if let Ok(d) = crate::outdir::Dir::open(dest) {
                // What was extracted, through no link (a link itself is removed).
                for n in d.names().unwrap_or_default() {
                    let _ = d.remove_all(&n);
                }
            }
            Err(e)
        }
    }
}
