//! `catalog template FILE`: a template file read, its images resolved to bundle directories
//! ([`super::pull`]) and rendered to a declarative config.

use std::path::Path;

use super::pull::{Sources, bundle_dirs};
use super::{MigrateLevel, first_document, images, render};
use crate::fbc::decl::DeclarativeConfig;
use crate::fbc::node::Node;
use crate::oci::events::Events;

/// The first document of a template file.
pub fn read(file: &Path) -> Result<Node, String> {
    let text = crate::input::read_text(file).map_err(|e| format!("{}: {e}", file.display()))?;
    first_document(file, &text).map_err(|e| e.to_string())
}

/// Renders the template `file` with its bundles from `sources`.
pub async fn render_file(
    file: &Path,
    sources: &Sources,
    level: MigrateLevel,
    events: &dyn Events,
) -> Result<DeclarativeConfig, String> {
    let doc = read(file)?;
    let refs = images(file, &doc).map_err(|e| e.to_string())?;
    let dirs = bundle_dirs(file, &refs, sources, events).await?;
    render(file, &doc, &dirs, level).map_err(|e| e.to_string())
}
