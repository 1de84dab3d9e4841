//! `olmctl catalog template`: renders a catalog template to FBC on stdout.

use std::path::{Path, PathBuf};

use crate::args::FmtFormat;
use crate::args::MigrateArg;
use crate::term::{EXIT_OK, EXIT_USAGE, out};
use olmctl::fbc::write::{canonical_text, write_blobs};
use olmctl::template::catalogs::{Build, Built};
use olmctl::template::pull::Sources;
use olmctl::template::{self, MigrateLevel};

/// Where the bundles come from, from the flags.
fn sources(
    bundles: Option<&Path>,
    cache_dir: Option<&Path>,
    registry: &crate::args::RegistryArgs,
    pull: &crate::args::PullArgs,
) -> Result<Sources, String> {
    Ok(Sources {
        bundles: bundles.map(Path::to_path_buf),
        cache_dir: cache_dir.map(Path::to_path_buf),
        registry: crate::args::registry_options(registry, pull.max_size)?,
        pull: crate::args::pull_options(pull)?,
    })
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
    let level = match migrate {
        MigrateArg::None => MigrateLevel::None,
        MigrateArg::BundleObjectToCsvMetadata => MigrateLevel::CsvMetadata,
    };
    let cfg = (|| {
        let sources = sources(bundles, cache_dir, registry, pull)?;
        let rt =
            crate::term::runtime().map_err(|_| "cannot start the async runtime".to_string())?;
        let events = crate::report::stderr_events();
        rt.block_on(template::file::render_file(
            file,
            &sources,
            level,
            events.as_ref(),
        ))
    })();
    let cfg = match cfg {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    out(&canonical_text(&cfg, output.into()));
    EXIT_OK
}

/// `catalog build OPERATOR_DIR`: every template/catalog pair of ci.yaml's
/// `fbc.catalog_mapping` rendered to `<catalogs-dir>/<catalog>/<operator-dir>/catalog.yaml` (with the
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
    output: crate::term::Report,
) -> u8 {
    let fail = |e: String| {
        crate::term::error(e);
        EXIT_USAGE
    };
    let built = (|| {
        let b = Build {
            dir: dir.to_path_buf(),
            catalogs_dir: catalogs_dir.map(Path::to_path_buf),
            check,
            sources: sources(bundles, cache_dir, registry, pull)?,
        };
        let rt =
            crate::term::runtime().map_err(|_| "cannot start the async runtime".to_string())?;
        let events = crate::report::stderr_events();
        rt.block_on(template::catalogs::build(&b, events.as_ref()))
    })();
    match built {
        Err(e) => fail(e),
        Ok(Built::Checked { stale }) => {
            // The difference on stdout (a unified diff, as `git diff` shows it; a missing
            // catalog is named, not printed whole), what is wrong on stderr.
            let mut diffs = String::new();
            for s in &stale {
                crate::term::error(s.message());
                if s.committed.is_some() {
                    for line in s.diff().lines() {
                        diffs.push_str(&format!("{}\n", olmctl::text::esc(line)));
                    }
                }
            }
            out(&diffs);
            if !stale.is_empty() {
                eprintln!(
                    "error: {} catalog{} out of date: run `olmctl catalog build {}`",
                    stale.len(),
                    if stale.len() == 1 { " is" } else { "s are" },
                    olmctl::text::esc(dir.display())
                );
                return crate::term::EXIT_FINDINGS;
            }
            eprintln!("ok: every catalog equals what its template renders");
            EXIT_OK
        }
        Ok(Built::Written { written, findings }) => {
            let what = format!("{} catalogs written", written.len());
            crate::report::findings_of(&findings, &what, output, false)
        }
    }
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
