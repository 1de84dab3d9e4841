//! `olmctl catalog template`: renders a catalog template to FBC on stdout.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::args::FmtFormat;
use crate::args::MigrateArg;
use crate::term::{EXIT_OK, EXIT_USAGE, out};
use olmctl::fbc::write::{Format, canonical_text, write_blobs};
use olmctl::template::{self, MigrateLevel};

/// The template's images resolved to bundle directories: from the `--bundles` map first, then
/// from the bundle cache (by digest), then pulled, all pulls at once, into the cache.
fn resolve(
    file: &Path,
    refs: &[template::ImageRef],
    map: HashMap<String, PathBuf>,
    registry: &crate::args::RegistryArgs,
    pull: &crate::args::PullArgs,
    cache: &Path,
) -> Result<HashMap<String, PathBuf>, String> {
    use olmctl::oci::bundle_cache::{lookup, scratch, store};
    let at = |r: &template::ImageRef, e: &dyn std::fmt::Display| {
        format!("{}:{}:{}: {e}", file.display(), r.pos.line, r.pos.col)
    };
    let plat = crate::args::platform(&pull.platform)?;
    let mut dirs = HashMap::new();
    let mut to_pull = Vec::new();
    for r in refs {
        if let Some(d) = map.get(&r.image) {
            dirs.insert(r.image.clone(), d.clone());
            continue;
        }
        let parsed = olmctl::oci::registry::parse_ref(&r.image)
            .map_err(|e| at(r, &format!("{e} (and the image is not in --bundles)")))?;
        // Pinned by digest and cached: no registry is asked.
        if let Some(d) = parsed.digest().and_then(|d| lookup(cache, d, &plat)) {
            dirs.insert(r.image.clone(), d);
            continue;
        }
        to_pull.push((r, parsed));
    }
    if to_pull.is_empty() {
        return Ok(dirs);
    }
    let all: Vec<&oci_client::Reference> = to_pull.iter().map(|(_, p)| p).collect();
    let opts = crate::args::registry_options(registry, pull.max_size)?;
    let reg = olmctl::oci::deliver::client(&opts, &all, &all);
    let pull = &crate::args::pull_options(pull)?;
    let rt = crate::term::runtime().map_err(|_| "cannot start the async runtime".to_string())?;
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
        let (reg, done, plat) = (&reg, &done, &plat);
        async move {
            // A tag is resolved to the digest it names now (its manifest or index, one
            // request) and pulled by that digest; a digest names itself.
            let digest = match parsed.digest() {
                Some(d) => d.to_string(),
                None => reg.fetch_manifest(parsed).await?.1,
            };
            let dir = match lookup(cache, &digest, plat) {
                Some(d) => d,
                None => {
                    let by_digest =
                        format!("{}/{}@{digest}", parsed.registry(), parsed.repository());
                    let tmp = scratch(cache)?;
                    let pulled = olmctl::oci::deliver::pull_image(
                        reg,
                        &by_digest,
                        &tmp,
                        pull,
                        olmctl::oci::deliver::Want::Bundle,
                    )
                    .await;
                    let pulled = match pulled {
                        Ok((_, p)) => p,
                        Err(e) => {
                            let _ = std::fs::remove_dir_all(&tmp);
                            return Err(e);
                        }
                    };
                    let through_index = pulled.image.index_digest.is_some().then_some(plat);
                    store(cache, &digest, through_index, &tmp)?
                }
            };
            done.set(done.get() + 1);
            if progress {
                eprintln!("  [{}/{total}] {}", done.get(), olmctl::text::esc(&r.image));
            }
            Ok::<PathBuf, String>(dir)
        }
    });
    // At most 8 pulls at a time.
    use futures_util::StreamExt;
    let results: Vec<Result<PathBuf, String>> = rt.block_on(
        futures_util::stream::iter(pulls)
            .buffered(8)
            .collect::<Vec<_>>(),
    );
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
    registry: &crate::args::RegistryArgs,
    pull: &crate::args::PullArgs,
) -> Result<HashMap<String, PathBuf>, String> {
    let cache = cache_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(olmctl::oci::bundle_cache::default_root);
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
    registry: &crate::args::RegistryArgs,
    pull: &crate::args::PullArgs,
) -> u8 {
    let fail = |e: String| {
        crate::term::error(e);
        EXIT_USAGE
    };
    let doc = match read_template(file) {
        Ok(d) => d,
        Err(e) => return fail(e),
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
    out(&canonical_text(&cfg, output.into()));
    EXIT_OK
}

/// The first document of a template file.
fn read_template(file: &Path) -> Result<olmctl::fbc::node::Node, String> {
    let text = olmctl::input::read_text(file).map_err(|e| format!("{}: {e}", file.display()))?;
    template::first_document(file, &text).map_err(|e| e.to_string())
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
    registry: &crate::args::RegistryArgs,
    pull: &crate::args::PullArgs,
    output: crate::term::Output,
) -> u8 {
    let fail = |e: String| {
        crate::term::error(e);
        EXIT_USAGE
    };
    // ci.yaml and the templates are read only where they resolve inside the package
    // directory (a link committed there may point anywhere).
    let tree = match olmctl::input::tree::Tree::new(dir) {
        Ok(t) => t,
        Err(e) => return fail(format!("{}: {e}", dir.display())),
    };
    let inside = |f: &Path| {
        tree.check(f).or_else(|e| match e.kind() {
            // A missing file is the reader's error, with its own message.
            std::io::ErrorKind::NotFound => Ok(()),
            _ => Err(format!("{}: {e}", f.display())),
        })
    };
    let ci = dir.join("ci.yaml");
    if let Err(e) = inside(&ci) {
        return fail(e);
    }
    let mappings = match template::ci::read_mapping(&ci) {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    let catalogs_root = catalogs_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join("../../catalogs"));
    // The package is the directory's name, as in the community pipeline: a template cannot
    // write another package's catalog.
    let package_dir = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if package_dir.is_empty() || package_dir.starts_with('.') {
        return fail(format!("{}: not a package directory", dir.display()));
    }
    // Every template read once, every image resolved once (from the first template naming it).
    let mut docs = Vec::new();
    let mut dirs: HashMap<String, PathBuf> = HashMap::new();
    for m in &mappings {
        let file = dir.join("catalog-templates").join(&m.template);
        if let Err(e) = inside(&file) {
            return fail(e);
        }
        let doc = match read_template(&file) {
            Ok(d) => d,
            Err(e) => return fail(e),
        };
        let kind = match template::kind(&file, &doc) {
            Ok(k) => k,
            Err(e) => return fail(e.to_string()),
        };
        if !m.kind.is_empty() && m.kind != kind.schema() {
            return fail(format!(
                "{}:{}:{}: catalog_mapping says {} is {}, but its schema is {}",
                dir.join("ci.yaml").display(),
                m.pos.line,
                m.pos.col,
                m.template,
                m.kind,
                kind.schema()
            ));
        }
        let mut refs = match template::images(&file, &doc) {
            Ok(r) => r,
            Err(e) => return fail(e.to_string()),
        };
        refs.retain(|r| !dirs.contains_key(&r.image));
        match sources(&file, &refs, bundles, cache_dir, registry, pull) {
            Ok(x) => dirs.extend(x),
            Err(e) => return fail(e),
        }
        docs.push((file, doc));
    }
    let mut rendered: HashMap<(usize, bool), (String, String)> = HashMap::new();
    let mut written = Vec::new();
    let mut differs = Vec::new();
    let mut outputs: Vec<(usize, String, PathBuf, String)> = Vec::new();
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
                    let named: Vec<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
                    if named != [package_dir.as_str()] {
                        return fail(format!(
                            "{}: renders package {} but the package directory is {package_dir}; nothing was written",
                            docs[i].0.display(),
                            if named.is_empty() {
                                "<none>".to_string()
                            } else {
                                named.join(", ")
                            }
                        ));
                    }
                    &*v.insert((package_dir.clone(), canonical_text(&cfg, Format::Yaml)))
                }
            };
            let rel = Path::new(catalog).join(package).join("catalog.yaml");
            outputs.push((i, catalog.clone(), rel, text.clone()));
        }
    }
    // Everything rendered: now compare or write.
    for (i, catalog, rel, text) in outputs {
        if check {
            // Read as every input, and as the write below would go (through no link).
            let committed = match olmctl::input::committed::read_committed(&catalogs_root, &rel) {
                Ok(c) => c,
                Err(e) => {
                    return fail(format!(
                        "{e}; --check compares what {} renders with the regular file \
                         `olmctl catalog build {}` writes there",
                        docs[i].0.display(),
                        dir.display()
                    ));
                }
            };
            if committed.as_deref() != Some(text.as_bytes()) {
                differs.push(format!(
                    "{} differs from what {} renders",
                    catalogs_root.join(&rel).display(),
                    docs[i].0.display()
                ));
            }
            continue;
        }
        if let Err(e) = olmctl::outdir::write(&catalogs_root, &rel, text.as_bytes()) {
            return fail(e.to_string());
        }
        written.push(catalogs_root.join(catalog).join(&package_dir));
    }
    if check {
        for d in &differs {
            crate::term::error(d);
        }
        if !differs.is_empty() {
            eprintln!(
                "error: {} catalog{} out of date: run `olmctl catalog build {}`",
                differs.len(),
                if differs.len() == 1 { " is" } else { "s are" },
                dir.display()
            );
            return crate::term::EXIT_FINDINGS;
        }
        eprintln!("ok: every catalog equals what its template renders");
        return EXIT_OK;
    }
    // Validate and lint what was written (each catalog on its own: they are separate
    // indexes), as the pipeline does before it commits.
    let mut findings = Vec::new();
    for w in &written {
        eprintln!("wrote {}", w.join("catalog.yaml").display());
        let loaded = match crate::inputs::catalog(std::slice::from_ref(w)) {
            Ok(l) => l,
            Err(c) => return c,
        };
        findings.extend(olmctl::checks::fbc::validate(&loaded));
        findings.extend(olmctl::checks::graph::lint(&loaded.cfg));
    }
    olmctl::diag::sort_findings(&mut findings);
    let what = format!("{} catalogs written", written.len());
    crate::report::findings_of(&findings, &what, output, false)
}

/// `catalog template convert DIR...`.
pub fn convert(dirs: &[PathBuf], output: FmtFormat) -> u8 {
    let loaded = match crate::inputs::whole_catalog(dirs) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let node = template::convert::to_basic(&loaded.cfg);
    let mut s = String::new();
    write_blobs(std::slice::from_ref(&node), output.into(), &mut s);
    out(&s);
    EXIT_OK
}
