//! `olmctl catalog template`: renders a catalog template to FBC on stdout.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::catalog::FmtFormat;
use super::{EXIT_OK, EXIT_USAGE, out};
use crate::fbc::write::{Format, canonical, write_blobs};
use crate::template::{self, MigrateLevel};

/// `--migrate-level`, as opm names the levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MigrateArg {
    /// Bundles carry every manifest as `olm.bundle.object` (opm's default).
    None,
    /// Bundles carry the CSV as `olm.csv.metadata` (what catalogs for OpenShift 4.17 and later
    /// carry).
    BundleObjectToCsvMetadata,
}

/// The template's images resolved to bundle directories: from the map first, then pulled
/// (into scratch directories kept alive by the returned guard).
fn resolve(
    file: &Path,
    refs: &[template::ImageRef],
    map: HashMap<String, PathBuf>,
    registry: &super::oci::RegistryArgs,
    pull: &super::oci::PullArgs,
) -> Result<(HashMap<String, PathBuf>, super::oci::Pulled), String> {
    let mut dirs = HashMap::new();
    let mut missing = Vec::new();
    for r in refs {
        match map.get(&r.image) {
            Some(d) => {
                dirs.insert(r.image.clone(), d.clone());
            }
            None => missing.push(r),
        }
    }
    let images: Vec<&str> = missing.iter().map(|r| r.image.as_str()).collect();
    let pulled = super::oci::pull_inputs(&images, registry, pull, super::oci::Want::Bundle)
        .map_err(|e| {
            // Name the template line of the image that failed.
            match missing
                .iter()
                .find(|r| e.starts_with(&format!("{}:", r.image)))
            {
                Some(r) => format!("{}:{}:{}: {e}", file.display(), r.pos.line, r.pos.col),
                None => format!("{}: {e}", file.display()),
            }
        })?;
    for (r, p) in missing.iter().zip(&pulled.0) {
        match p {
            Some((_, dir)) => {
                dirs.insert(r.image.clone(), dir.clone());
            }
            None => {
                return Err(format!(
                    "{}:{}:{}: bundle image {} is in no bundle source (not in --bundles, and not an image reference)",
                    file.display(),
                    r.pos.line,
                    r.pos.col,
                    r.image
                ));
            }
        }
    }
    Ok((dirs, pulled))
}

pub fn run(
    file: &Path,
    bundles: Option<&Path>,
    migrate: MigrateArg,
    output: FmtFormat,
    registry: &super::oci::RegistryArgs,
    pull: &super::oci::PullArgs,
) -> u8 {
    let fail = |e: String| {
        super::error(e);
        EXIT_USAGE
    };
    let text = match crate::input::read(file) {
        Ok(b) => match String::from_utf8(b) {
            Ok(t) => t,
            Err(_) => return fail(format!("{}: not UTF-8 text", file.display())),
        },
        Err(e) => return fail(format!("{}: {e}", file.display())),
    };
    let doc = match template::first_document(file, &text) {
        Ok(d) => d,
        Err(e) => return fail(e.to_string()),
    };
    let refs = match template::images(file, &doc) {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    let map = match bundles.map(template::sources::read_map).transpose() {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => return fail(e),
    };
    let (dirs, _scratch) = match resolve(file, &refs, map, registry, pull) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let level = match migrate {
        MigrateArg::None => MigrateLevel::None,
        MigrateArg::BundleObjectToCsvMetadata => MigrateLevel::CsvMetadata,
    };
    let cfg = match template::render(file, &doc, &dirs, level) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    let format = match output {
        FmtFormat::Yaml => Format::Yaml,
        FmtFormat::Json => Format::Json,
    };
    let mut s = String::new();
    for (_, nodes) in canonical(&cfg) {
        write_blobs(&nodes, format, &mut s);
    }
    out(&s);
    EXIT_OK
}
