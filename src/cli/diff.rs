//! `olmctl catalog diff OLD NEW`: catalogs from directories or images, compared package by
//! package with the `check-upgrades` verdict beside. Exit 0 when identical, 1 when different,
//! 2 when either side cannot be read.

use std::path::PathBuf;

use clap::ValueEnum;

use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, out};

/// `catalog diff --output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffOutput {
    /// For a terminal.
    Text,
    /// One JSON document.
    Json,
    /// A pull-request comment.
    Markdown,
    /// One self-contained page: both catalogs' upgrade graphs in one, what was added in green,
    /// what was removed in red, each package's changes beside.
    Html,
}

/// Loads one side: a directory, or an image pulled into `scratch`.
fn side(
    input: &str,
    registry: &super::oci::RegistryArgs,
    pull: &super::oci::PullArgs,
    scratch: &mut Vec<super::oci::ScratchDir>,
) -> Result<crate::fbc::load::Loaded, u8> {
    let (pulled, dirs) =
        super::oci::pull_inputs(&[input], registry, pull, super::oci::Want::Catalog).map_err(
            |e| {
                super::error(e);
                EXIT_USAGE
            },
        )?;
    scratch.extend(dirs);
    let dir = match &pulled[0] {
        Some((_, dir)) => dir.clone(),
        None => PathBuf::from(input),
    };
    let loaded = super::graph::load_catalog(&[dir])?;
    let errors = crate::checks::fbc::load_errors(&loaded);
    if !errors.is_empty() {
        eprint!("{}", crate::diag::render_text(&errors, false));
        super::error(format_args!(
            "{}: {} problem{} in files that do not load; not comparing a partial catalog",
            crate::text::esc(input),
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
    registry: &super::oci::RegistryArgs,
    pull: &super::oci::PullArgs,
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
    let og = crate::graph::CatalogGraphs::build(&o.cfg, None);
    let ng = crate::graph::CatalogGraphs::build(&n.cfg, None);
    let d = crate::diff::diff(&o.cfg, &n.cfg, &og, &ng);
    let mut findings = crate::checks::upgrades::check_graphs(&og, &ng);
    crate::diag::sort_findings(&mut findings);
    match output {
        DiffOutput::Text => out(&crate::diff::render::text(&d, &findings)),
        DiffOutput::Json => {
            let mut s = serde_json::to_string_pretty(&crate::diff::render::json(&d, &findings))
                .unwrap_or_else(|_| "{}".into());
            s.push('\n');
            out(&s);
        }
        DiffOutput::Markdown => out(&crate::diff::render::markdown(&d, &findings)),
        DiffOutput::Html => {
            let title = format!(
                "Catalog diff: {} → {}",
                crate::text::esc(old),
                crate::text::esc(new)
            );
            let mut buf = Vec::new();
            let lines = crate::diff::render::package_lines(&d);
            if let Err(e) = crate::graph::html::diff_html(
                (&o.cfg, &og),
                (&n.cfg, &ng),
                &lines,
                &title,
                &mut buf,
            ) {
                super::error(format_args!("cannot write the page: {e}"));
                return EXIT_USAGE;
            }
            out(&String::from_utf8_lossy(&buf));
        }
    }
    if d.is_empty() { EXIT_OK } else { EXIT_FINDINGS }
}
