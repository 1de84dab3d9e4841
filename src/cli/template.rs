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

/// The template's images resolved to bundle directories: from the `--bundles` map first, then
/// from the bundle cache (by digest), then pulled, all pulls at once, into the cache.
fn resolve(
    file: &Path,
    refs: &[template::ImageRef],
    map: HashMap<String, PathBuf>,
    registry: &super::oci::RegistryArgs,
    pull: &super::oci::PullArgs,
    cache: &Path,
) -> Result<HashMap<String, PathBuf>, String> {
    use crate::oci::bundle_cache::{lookup, scratch, store};
    let at = |r: &template::ImageRef, e: &dyn std::fmt::Display| {
        format!("{}:{}:{}: {e}", file.display(), r.pos.line, r.pos.col)
    };
    let mut dirs = HashMap::new();
    let mut to_pull = Vec::new();
    for r in refs {
        if let Some(d) = map.get(&r.image) {
            dirs.insert(r.image.clone(), d.clone());
            continue;
        }
        let parsed = crate::oci::registry::parse_ref(&r.image)
            .map_err(|e| at(r, &format!("{e} (and the image is not in --bundles)")))?;
        // Pinned by digest and cached: no registry is asked.
        if let Some(d) = parsed.digest().and_then(|d| lookup(cache, d)) {
            dirs.insert(r.image.clone(), d);
            continue;
        }
        to_pull.push((r, parsed));
    }
    if to_pull.is_empty() {
        return Ok(dirs);
    }
    let all: Vec<&oci_client::Reference> = to_pull.iter().map(|(_, p)| p).collect();
    let reg = super::oci::registry(registry, &all, &all, pull.max_size)?;
    let rt = super::oci::runtime().map_err(|_| "cannot start the async runtime".to_string())?;
    std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    if progress {
        eprintln!(
            "pulling {} bundle image{}",
            to_pull.len(),
            if to_pull.len() == 1 { "" } else { "s" }
        );
    }
    let done = std::cell::Cell::new(0usize);
    let total = to_pull.len();
    let pulls = to_pull.iter().map(|(r, parsed)| {
        let (reg, done) = (&reg, &done);
        async move {
            // A tag is resolved to the digest it names now (its manifest or index, one
            // request); a digest names itself.
            let key = match parsed.digest() {
                Some(d) => d.to_string(),
                None => reg.fetch_manifest(parsed).await?.1,
            };
            let dir = match lookup(cache, &key) {
                Some(d) => d,
                None => {
                    let tmp = scratch(cache);
                    super::oci::pull_image(reg, &r.image, &tmp, pull, super::oci::Want::Bundle)
                        .await?;
                    store(cache, &key, &tmp)?
                }
            };
            done.set(done.get() + 1);
            if progress {
                eprintln!("  [{}/{total}] {}", done.get(), crate::text::esc(&r.image));
            }
            Ok::<PathBuf, String>(dir)
        }
    });
    let results = rt.block_on(futures_util::future::join_all(pulls));
    for ((r, _), res) in to_pull.iter().zip(results) {
        let dir = res.map_err(|e| at(r, &format!("{}: {e}", r.image)))?;
        dirs.insert(r.image.clone(), dir);
    }
    Ok(dirs)
}

/// Bundle directories for `refs`: the `--bundles` map, then the cache (`cache_dir` or the
/// default), then the registry.
fn sources(
    file: &Path,
    refs: &[template::ImageRef],
    bundles: Option<&Path>,
    cache_dir: Option<&Path>,
    registry: &super::oci::RegistryArgs,
    pull: &super::oci::PullArgs,
) -> Result<HashMap<String, PathBuf>, String> {
    let cache = cache_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(crate::oci::bundle_cache::default_root);
    let map = bundles
        .map(|b| template::sources::read_map(b, &cache))
        .transpose()?
        .unwrap_or_default();
    resolve(file, refs, map, registry, pull, &cache)
}

#[allow(clippy::too_many_arguments)]
pub fn run(
    file: &Path,
    bundles: Option<&Path>,
    cache_dir: Option<&Path>,
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
    let dirs = match sources(file, &refs, bundles, cache_dir, registry, pull) {
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

/// The canonical YAML of `cfg`.
fn canonical_yaml(cfg: &crate::fbc::decl::DeclarativeConfig) -> String {
    let mut s = String::new();
    for (_, nodes) in canonical(cfg) {
        write_blobs(&nodes, Format::Yaml, &mut s);
    }
    s
}

/// `catalog build OPERATOR_DIR`: every template/catalog pair of ci.yaml's
/// `fbc.catalog_mapping` rendered to `<catalogs-dir>/<catalog>/<package>/catalog.yaml` (with the
/// csv-metadata migration from v4.17 on, as the community pipeline does), then validated and
/// linted; with `check`, nothing is written and a committed catalog that differs from its
/// template is a finding.
#[allow(clippy::too_many_arguments)]
pub fn build(
    dir: &Path,
    catalogs_dir: Option<&Path>,
    bundles: Option<&Path>,
    cache_dir: Option<&Path>,
    check: bool,
    registry: &super::oci::RegistryArgs,
    pull: &super::oci::PullArgs,
    output: super::Output,
) -> u8 {
    let fail = |e: String| {
        super::error(e);
        EXIT_USAGE
    };
    let mappings = match template::ci::read_mapping(&dir.join("ci.yaml")) {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    let catalogs_root = catalogs_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join("../../catalogs"));
    // Every template read once, every image resolved once.
    let mut docs = Vec::new();
    let mut refs: Vec<template::ImageRef> = Vec::new();
    for m in &mappings {
        let file = dir.join("catalog-templates").join(&m.template);
        let text = match crate::input::read(&file).map(String::from_utf8) {
            Ok(Ok(t)) => t,
            Ok(Err(_)) => return fail(format!("{}: not UTF-8 text", file.display())),
            Err(e) => return fail(format!("{}: {e}", file.display())),
        };
        let doc = match template::first_document(&file, &text) {
            Ok(d) => d,
            Err(e) => return fail(e.to_string()),
        };
        match template::images(&file, &doc) {
            Ok(r) => refs.extend(r),
            Err(e) => return fail(e.to_string()),
        }
        docs.push((file, doc));
    }
    let mut seen = std::collections::HashSet::new();
    refs.retain(|r| seen.insert(r.image.clone()));
    let first_file = docs.first().map_or(dir.join("ci.yaml"), |d| d.0.clone());
    let dirs = match sources(&first_file, &refs, bundles, cache_dir, registry, pull) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let mut rendered: HashMap<(usize, bool), (String, String)> = HashMap::new();
    let mut written = Vec::new();
    let mut differs = Vec::new();
    for (i, m) in mappings.iter().enumerate() {
        for catalog in &m.catalogs {
            let migrate = template::ci::migrates(catalog);
            let key = (i, migrate);
            let (package, text): &(String, String) = match rendered.entry(key) {
                std::collections::hash_map::Entry::Occupied(o) => &*o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    let level = if migrate {
                        MigrateLevel::CsvMetadata
                    } else {
                        MigrateLevel::None
                    };
                    let cfg = match template::render(&docs[i].0, &docs[i].1, &dirs, level) {
                        Ok(c) => c,
                        Err(e) => return fail(e.to_string()),
                    };
                    let package = cfg
                        .packages
                        .first()
                        .map(|p| p.name.clone())
                        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .unwrap_or_default();
                    &*v.insert((package, canonical_yaml(&cfg)))
                }
            };
            let rel = Path::new(catalog).join(package).join("catalog.yaml");
            if check {
                let committed = std::fs::read(catalogs_root.join(&rel)).unwrap_or_default();
                if committed != text.as_bytes() {
                    differs.push(format!(
                        "{} differs from what {} renders",
                        catalogs_root.join(&rel).display(),
                        docs[i].0.display()
                    ));
                }
                continue;
            }
            if let Err(e) = crate::outdir::write(&catalogs_root, &rel, text.as_bytes()) {
                return fail(e.to_string());
            }
            written.push(catalogs_root.join(catalog).join(package));
        }
    }
    if check {
        for d in &differs {
            super::error(d);
        }
        if !differs.is_empty() {
            eprintln!(
                "error: {} catalog{} out of date: run `olmctl catalog build {}`",
                differs.len(),
                if differs.len() == 1 { " is" } else { "s are" },
                dir.display()
            );
            return super::EXIT_FINDINGS;
        }
        eprintln!("ok: every catalog equals what its template renders");
        return EXIT_OK;
    }
    // Validate and lint what was written (each catalog on its own: they are separate
    // indexes), as the pipeline does before it commits.
    let mut findings = Vec::new();
    for w in &written {
        eprintln!("wrote {}", w.join("catalog.yaml").display());
        let loaded = match super::graph::load_catalog(std::slice::from_ref(w)) {
            Ok(l) => l,
            Err(c) => return c,
        };
        findings.extend(crate::checks::fbc::validate(&loaded));
        findings.extend(crate::checks::graph::lint(&loaded.cfg));
    }
    crate::diag::sort_findings(&mut findings);
    let what = format!("{} catalogs written", written.len());
    super::catalog::report_findings(&findings, &what, output, false)
}

/// `catalog template convert DIR...`.
pub fn convert(dirs: &[PathBuf], output: FmtFormat) -> u8 {
    let loaded = match super::graph::load_whole_catalog(dirs) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let node = template::convert::to_basic(&loaded.cfg);
    let mut s = String::new();
    let format = match output {
        FmtFormat::Yaml => Format::Yaml,
        FmtFormat::Json => Format::Json,
    };
    write_blobs(std::slice::from_ref(&node), format, &mut s);
    out(&s);
    EXIT_OK
}
