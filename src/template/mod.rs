//! Catalog templates (`olmctl catalog template`), rendered as `opm alpha render-template` does
//! (operator-registry `alpha/template/`): the type comes from the first document's `schema`
//! (`olm.template.basic`, `olm.semver`), bundle images are rendered to `olm.bundle` blobs, and
//! the result is a [`DeclarativeConfig`] that the canonical writer prints as `catalog fmt` does.
//!
//! Rendering is split in two so that where bundles come from is decided apart: [`images`] lists
//! every bundle image the template names (with its position), [`pull`] finds a bundle
//! directory for each (a `--bundles` map, the bundle cache, a registry), and [`render`] renders
//! the template from those directories without touching the network. [`file`] (`catalog
//! template`) and [`catalogs`] (`catalog build`) are the commands' operations over them.

pub mod basic;
pub mod catalogs;
pub mod ci;
pub mod convert;
pub mod file;
pub mod pull;
pub mod semver;
pub mod sources;
pub mod substitutes;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::bundle::render::{ObjectMode, render_dir};
use std::sync::Arc;

use crate::fbc::decl::{DeclarativeConfig, EnvelopeOrField, decode_blob};
use crate::fbc::decode::Issue;
use crate::fbc::node::{Node, Pos, Value};

/// The template types opm registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `olm.template.basic`.
    Basic,
    /// `olm.semver`.
    Semver,
    /// `olm.template.substitutes`.
    Substitutes,
}

impl Kind {
    /// The template's schema.
    pub fn schema(self) -> &'static str {
        match self {
            Kind::Basic => basic::SCHEMA,
            Kind::Semver => semver::SCHEMA,
            Kind::Substitutes => substitutes::SCHEMA,
        }
    }
}

/// A template error: the file, the place when known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// The template file.
    pub file: PathBuf,
    /// Where in it.
    pub pos: Option<Pos>,
    /// What is wrong (opm's wording where opm has one).
    pub message: String,
}

impl TemplateError {
    /// An error at `pos` of `file`.
    pub fn at(file: &Path, pos: Pos, message: impl Into<String>) -> Self {
        TemplateError {
            file: file.to_path_buf(),
            pos: Some(pos),
            message: message.into(),
        }
    }

    /// An error about the whole of `file`.
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        TemplateError {
            file: file.to_path_buf(),
            pos: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(p) => write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                p.line,
                p.col,
                self.message
            ),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for TemplateError {}

/// How rendered bundles carry their manifests: opm's `--migrate-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrateLevel {
    /// `none` (opm's default): one `olm.bundle.object` per manifest.
    None,
    /// `bundle-object-to-csv-metadata`: `olm.csv.metadata` instead.
    CsvMetadata,
}

impl MigrateLevel {
    fn mode(self) -> ObjectMode {
        match self {
            MigrateLevel::None => ObjectMode::BundleObjects,
            MigrateLevel::CsvMetadata => ObjectMode::CsvMetadata,
        }
    }
}

/// A bundle image the template names, where it names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// The reference, exactly as written.
    pub image: String,
    /// Where.
    pub pos: Pos,
}

/// The first document of a template file (opm decodes only the first one).
pub fn first_document(file: &Path, text: &str) -> Result<Node, TemplateError> {
    crate::fbc::yaml::first_document(text)
        .map_err(|e| {
            TemplateError::at(
                file,
                Pos::new(e.line, e.column),
                format!("decoding template schema: {}", e.message),
            )
        })?
        .ok_or_else(|| TemplateError::file(file, "decoding template schema: EOF"))
}

/// The value of `key` in a map node as opm reads templates: the YAML becomes JSON through a Go
/// map (keys sorted, a repeated key's last value), and `encoding/json` assigns every key that
/// matches the field case-insensitively in that order, so the byte-wise greatest of the
/// case-folded matches wins.
pub fn field<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    let mut best: Option<&crate::fbc::node::Entry> = None;
    for e in entries.iter().filter(|e| e.key.eq_ignore_ascii_case(key)) {
        if best.is_none_or(|b| e.key >= b.key) {
            best = Some(e);
        }
    }
    best.map(|e| &e.value)
}

/// The template type, from the first document's `schema` (operator-registry#1330).
pub fn kind(file: &Path, doc: &Node) -> Result<Kind, TemplateError> {
    let schema = match field(doc, "schema").map(|n| &n.value) {
        Some(Value::Str(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(TemplateError::at(
                file,
                doc.pos,
                "template input missing required 'schema' field",
            ));
        }
    };
    match schema.as_str() {
        basic::SCHEMA => Ok(Kind::Basic),
        semver::SCHEMA => Ok(Kind::Semver),
        substitutes::SCHEMA => Ok(Kind::Substitutes),
        _ => Err(TemplateError::at(
            file,
            field(doc, "schema").map_or(doc.pos, |n| n.pos),
            format!("unknown template schema: {schema}"),
        )),
    }
}

/// Every bundle image `doc` names, in order, each once (the first place it is named).
pub fn images(file: &Path, doc: &Node) -> Result<Vec<ImageRef>, TemplateError> {
    let all = match kind(file, doc)? {
        Kind::Basic => basic::images(file, doc)?,
        Kind::Semver => semver::Spec::parse(file, doc)?.images(),
        Kind::Substitutes => substitutes::images(file, doc)?,
    };
    let mut seen = std::collections::HashSet::new();
    Ok(all
        .into_iter()
        .filter(|r| seen.insert(r.image.clone()))
        .collect())
}

/// Renders the template `doc` of `file`, every bundle image from its directory in `dirs`.
pub fn render(
    file: &Path,
    doc: &Node,
    dirs: &HashMap<String, PathBuf>,
    level: MigrateLevel,
) -> Result<DeclarativeConfig, TemplateError> {
    let mut r = Renderer {
        file,
        dirs,
        level,
        cache: HashMap::new(),
    };
    match kind(file, doc)? {
        Kind::Basic => basic::render(file, doc, &mut r),
        Kind::Semver => semver::render(file, doc, &mut r),
        Kind::Substitutes => substitutes::render(file, doc, &mut r),
    }
}

/// Renders bundle images from their directories, each once.
pub struct Renderer<'a> {
    file: &'a Path,
    dirs: &'a HashMap<String, PathBuf>,
    level: MigrateLevel,
    cache: HashMap<String, Node>,
}

impl Renderer<'_> {
    /// The `olm.bundle` blob of `image` (named at `pos`), placed at `at` of the template (the
    /// entry it stands for), so that findings on it point there.
    pub fn bundle(&mut self, image: &str, pos: Pos, at: Pos) -> Result<Node, TemplateError> {
        let mut blob = self.rendered(image, pos)?;
        relocate(&mut blob, at);
        Ok(blob)
    }

    fn rendered(&mut self, image: &str, pos: Pos) -> Result<Node, TemplateError> {
        if let Some(b) = self.cache.get(image) {
            return Ok(b.clone());
        }
        let Some(dir) = self.dirs.get(image) else {
            return Err(TemplateError::at(
                self.file,
                pos,
                format!(
                    "bundle image {image} is in no bundle source (add it to --bundles, or make the registry reachable)"
                ),
            ));
        };
        let r = render_dir(dir, image, self.level.mode()).map_err(|e| {
            TemplateError::at(self.file, pos, format!("render bundle {image}: {e}"))
        })?;
        self.cache.insert(image.to_string(), r.blob.clone());
        Ok(r.blob)
    }

    /// The description and icon of the CSV of `image`'s bundle.
    pub fn csv_description_icon(
        &self,
        image: &str,
    ) -> Result<(String, Option<crate::fbc::decl::Icon>), TemplateError> {
        let Some(dir) = self.dirs.get(image) else {
            return Ok((String::new(), None));
        };
        let b = crate::bundle::load::load_bundle(dir)
            .map_err(|e| TemplateError::file(self.file, format!("bundle {image}: {e}")))?;
        Ok(b.csv()
            .map(|(_, csv)| semver::description_icon(csv))
            .unwrap_or_default())
    }
}

/// Decodes one blob as opm's `declcfg.LoadSlice` does: a value of the wrong type fails.
pub(crate) fn decode_into(
    file: &Path,
    arc: &Arc<Path>,
    node: Node,
    cfg: &mut DeclarativeConfig,
) -> Result<(), TemplateError> {
    let mut problems = Vec::new();
    decode_blob(node, arc, cfg, &mut problems);
    for (_, p) in problems {
        let (at, what) = match &p.issue {
            EnvelopeOrField::NotAnObject { found, pos } => {
                (*pos, format!("an entry must be an object, found {found}"))
            }
            EnvelopeOrField::MissingSchema { pos } => (*pos, "an entry has no schema".to_string()),
            EnvelopeOrField::DuplicateEnvelopeKey { key, keys, pos } => {
                (*pos, format!("duplicate {key} keys: {}", keys.join(", ")))
            }
            EnvelopeOrField::Field(Issue::Type {
                path,
                expected,
                found,
                pos,
            }) => (*pos, format!("{path} must be {expected}, found {found}")),
            EnvelopeOrField::Field(Issue::Invalid { path, message, pos }) => {
                (*pos, format!("{path}: {message}"))
            }
            EnvelopeOrField::Field(Issue::Unknown { .. } | Issue::Miscased { .. }) => continue,
        };
        return Err(TemplateError::at(
            file,
            at,
            format!("load template entries: {what}"),
        ));
    }
    Ok(())
}

/// Places a rendered blob at the template entry it replaces, so that findings on it point there.
pub(crate) fn relocate(n: &mut Node, pos: Pos) {
    n.pos = pos;
    match &mut n.value {
        Value::Map(entries) => {
            for e in entries {
                e.key_pos = pos;
                relocate(&mut e.value, pos);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| relocate(i, pos)),
        _ => {}
    }
}
