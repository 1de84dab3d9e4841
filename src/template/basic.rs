//! The basic template (`olm.template.basic`, operator-registry `alpha/template/basic`): FBC
//! blobs under `entries`, where each `olm.bundle` blob has only `schema` and `image` and is
//! replaced by the rendered bundle. Packages, channels, deprecations and other blobs pass
//! through as opm decodes them.

use std::path::Path;
use std::sync::Arc;

use super::{ImageRef, Renderer, TemplateError, field};
use crate::fbc::decl::{DeclarativeConfig, EnvelopeOrField, decode_blob};
use crate::fbc::decode::Issue;
use crate::fbc::node::{Node, Value};

/// The schema of a basic template.
pub const SCHEMA: &str = "olm.template.basic";

/// The `entries` of the template.
pub(crate) fn entries<'a>(file: &Path, doc: &'a Node) -> Result<&'a [Node], TemplateError> {
    match field(doc, "entries").map(|n| (&n.value, n.pos)) {
        None | Some((Value::Null, _)) => Ok(&[]),
        Some((Value::Seq(items), _)) => Ok(items),
        Some((_, pos)) => Err(TemplateError::at(
            file,
            pos,
            "unmarshalling template: entries must be a list of FBC blobs",
        )),
    }
}

fn is_bundle(n: &Node) -> bool {
    matches!(field(n, "schema").map(|s| &s.value), Some(Value::Str(s)) if s == "olm.bundle")
}

/// The bundle images, in order.
pub fn images(file: &Path, doc: &Node) -> Result<Vec<ImageRef>, TemplateError> {
    let mut out = Vec::new();
    for e in entries(file, doc)?.iter().filter(|e| is_bundle(e)) {
        if let Some(Node {
            value: Value::Str(image),
            pos,
        }) = field(e, "image")
            && !image.is_empty()
        {
            out.push(ImageRef {
                image: image.clone(),
                pos: *pos,
            });
        }
    }
    Ok(out)
}

/// Decodes one blob as opm's `declcfg.LoadSlice` does: a value of the wrong type fails.
pub(crate) fn decode(
    file: &Path,
    arc: &Arc<Path>,
    node: Node,
    cfg: &mut DeclarativeConfig,
) -> Result<(), TemplateError> {
    let mut problems = Vec::new();
    let pos = node.pos;
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
        let _ = pos;
        return Err(TemplateError::at(
            file,
            at,
            format!("load template entries: {what}"),
        ));
    }
    Ok(())
}

/// Renders a basic template.
pub fn render(
    file: &Path,
    doc: &Node,
    r: &mut Renderer<'_>,
) -> Result<DeclarativeConfig, TemplateError> {
    let arc: Arc<Path> = Arc::from(file);
    let mut cfg = DeclarativeConfig::default();
    for e in entries(file, doc)? {
        if !is_bundle(e) {
            decode(file, &arc, e.clone(), &mut cfg)?;
            continue;
        }
        // opm's isBundleTemplate: a schema and an image, and no package, properties or
        // relatedImages (other keys are dropped by the decoder).
        let mut probe = DeclarativeConfig::default();
        decode(file, &arc, e.clone(), &mut probe)?;
        let b = probe.bundles.pop().expect("a decoded olm.bundle entry");
        let mut extra = Vec::new();
        if !b.package.is_empty() {
            extra.push("package");
        }
        if !b.properties.is_empty() {
            extra.push("properties");
        }
        if !b.related_images.is_empty() {
            extra.push("relatedImages");
        }
        if b.image.is_empty() {
            return Err(TemplateError::at(
                file,
                e.pos,
                "unexpected fields present in basic template bundle: a bundle entry needs an image",
            ));
        }
        if !extra.is_empty() {
            return Err(TemplateError::at(
                file,
                e.pos,
                format!(
                    "unexpected fields present in basic template bundle: {} (a bundle entry has only schema and image)",
                    extra.join(", ")
                ),
            ));
        }
        let mut blob = r.bundle(&b.image, field(e, "image").map_or(e.pos, |n| n.pos))?;
        relocate(&mut blob, e.pos);
        decode(file, &arc, blob, &mut cfg)?;
    }
    Ok(cfg)
}

/// Places a rendered blob at the template entry it replaces, so that findings on it point there.
pub(crate) fn relocate(n: &mut Node, pos: crate::fbc::node::Pos) {
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
