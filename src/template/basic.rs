//! The basic template (`olm.template.basic`, operator-registry `alpha/template/basic`): FBC
//! blobs under `entries`, where each `olm.bundle` blob has only `schema` and `image` and is
//! replaced by the rendered bundle. Packages, channels, deprecations and other blobs pass
//! through as opm decodes them.

use std::path::Path;
use std::sync::Arc;

use super::{ImageRef, Renderer, TemplateError, field};
use crate::fbc::decl::DeclarativeConfig;
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
            super::decode_into(file, &arc, e.clone(), &mut cfg)?;
            continue;
        }
        // opm's isBundleTemplate: a schema and an image, and no package, properties or
        // relatedImages (other keys are dropped by the decoder).
        let mut probe = DeclarativeConfig::default();
        super::decode_into(file, &arc, e.clone(), &mut probe)?;
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
        let blob = r.bundle(&b.image, field(e, "image").map_or(e.pos, |n| n.pos), e.pos)?;
        super::decode_into(file, &arc, blob, &mut cfg)?;
    }
    Ok(cfg)
}
