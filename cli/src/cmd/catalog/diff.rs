//! `olmctl catalog diff OLD NEW`: catalogs from directories or images, compared package by
//! package with the `check-upgrades` verdict beside. Exit 0 when identical, 1 when different,
//! 2 when either side cannot be read.

use std::path::PathBuf;

use crate::args::DiffOutput;
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, out};

/// Loads one side: a directory, or an image pulled into `scratch`.
fn side(
    input: &str,
    registry: &crate::args::RegistryArgs,
    pull: &crate::args::PullArgs,
    scratch: &mut Vec<olmctl::oci::deliver::ScratchDir>,
) -> Result<olmctl::fbc::load::Loaded, u8> {
    let (pulled, dirs) = crate::inputs::pulled(
        &[input],
        registry,
        pull,
        olmctl::oci::deliver::Want::Catalog,
    )
    .map_err(|e| {
        crate::term::error(e);
        EXIT_USAGE
    })?;
    scratch.extend(dirs);
    let dir = match &pulled[0] {
        Some((_, dir)) => dir.clone(),
        None => PathBuf::from(input),
    };
    let loaded = crate::inputs::catalog(&[dir])?;
    let errors = olmctl::checks::fbc::load_errors(&loaded);
    if !errors.is_empty() {
        eprint!("{}", olmctl::diag::render_text(&errors, false));
        crate::term::error(format_args!(
            "{}: {} problem{} in files that do not load; not comparing a partial catalog",
            olmctl::text::esc(input),
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ));
        return Err(EXIT_USAGE);
    }
    Ok(loaded)
}

/// Runs `catalog diff`.
pub fn diff(
    old: &str,
    new: &str,
    output: DiffOutput,
    registry: &crate::args::RegistryArgs,
    pull: &crate::args::PullArgs,
) -> u8 {
    let mut scratch = Vec::new();
    let (o, n) = match (
        side(old, registry, pull, &mut scratch),
        side(new, registry, pull, &mut scratch),
    ) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    // One set of graphs per side, for the diff, check-upgrades and the page.
    let og = olmctl::graph::CatalogGraphs::build(&o.cfg, None);
    let ng = olmctl::graph::CatalogGraphs::build(&n.cfg, None);
    let d = olmctl::diff::diff(&o.cfg, &n.cfg, &og, &ng);
    let mut findings = olmctl::checks::upgrades::check_graphs(&og, &ng);
    olmctl::diag::sort_findings(&mut findings);
    match output {
        DiffOutput::Text => out(&olmctl::diff::render::text(&d, &findings)),
        DiffOutput::Json => {
            let mut s = serde_json::to_string_pretty(&olmctl::diff::render::json(&d, &findings))
                .unwrap_or_else(|_| "{}".into());
            s.push('\n');
            out(&s);
        }
        DiffOutput::Markdown => out(&olmctl::diff::render::markdown(&d, &findings)),
        DiffOutput::Html => {
            let title = format!(
                "Catalog diff: {} → {}",
                olmctl::text::esc(old),
                olmctl::text::esc(new)
            );
            let mut buf = Vec::new();
            let lines = olmctl::diff::render::package_lines(&d);
            if let Err(e) = olmctl::graph::html::diff_html(
                (&o.cfg, &og),
                (&n.cfg, &ng),
                &lines,
                &title,
                &mut buf,
            ) {
                crate::term::error(format_args!("cannot write the page: {e}"));
                return EXIT_USAGE;
            }
            out(&String::from_utf8_lossy(&buf));
        }
    }
    if d.is_empty() { EXIT_OK } else { EXIT_FINDINGS }
}
