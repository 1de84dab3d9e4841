//! `spec.relatedImages`: what the base CSV lists, then every image the deployments run
//! (containers and init containers, named after the container) and every `RELATED_IMAGE_<NAME>`
//! environment value (named `<name>` lower-cased with `_` as `-`), each image once. A name
//! already taken by another image is prefixed with `<deployment>-<container>-`.

use super::collect::Obj;
use crate::bundle::load::{BundleError, field, list_at, str_at};
use crate::bundle::tree::{obj, s};
use crate::fbc::node::Node;

/// The related images of a CSV whose base lists `base` and that installs `deployments`.
pub fn build(base: &[Node], deployments: &[Obj]) -> Result<Vec<Node>, BundleError> {
    let mut out: Vec<(String, String)> = base
        .iter()
        .map(|n| {
            (
                str_at(n, &["name"]).unwrap_or("").to_string(),
                str_at(n, &["image"]).unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut nodes: Vec<Node> = base.to_vec();
    for d in deployments {
        for list in ["initContainers", "containers"] {
            for c in list_at(&d.doc, &["spec", "template", "spec", list]) {
                let cname = str_at(c, &["name"]).unwrap_or("");
                let mut found: Vec<(String, String)> = Vec::new();
                if let Some(img) = str_at(c, &["image"]).filter(|i| !i.is_empty()) {
                    found.push((cname.to_string(), img.to_string()));
                }
                for e in list_at(c, &["env"]) {
                    let Some(var) = str_at(e, &["name"]) else {
                        continue;
                    };
                    let Some(suffix) = var.strip_prefix("RELATED_IMAGE_") else {
                        continue;
                    };
                    if field(e, &["valueFrom"]).is_some() {
                        return Err(d.error(format!(
                            "Deployment \"{}\" container \"{cname}\": {var} uses valueFrom; \
                             related images must be literal values so they can be listed in \
                             the CSV",
                            d.name()
                        )));
                    }
                    if let Some(img) = str_at(e, &["value"]).filter(|i| !i.is_empty()) {
                        found.push((suffix.to_lowercase().replace('_', "-"), img.to_string()));
                    }
                }
                for (name, image) in found {
                    if out.iter().any(|(_, i)| *i == image) {
                        continue;
                    }
                    let name = if out.iter().any(|(n, _)| *n == name) {
                        if name == cname {
                            format!("{}-{cname}", d.name())
                        } else {
                            format!("{}-{cname}-{name}", d.name())
                        }
                    } else {
                        name
                    };
                    nodes.push(obj(vec![("name", s(&name)), ("image", s(&image))]));
                    out.push((name, image));
                }
            }
        }
    }
    Ok(nodes)
}
