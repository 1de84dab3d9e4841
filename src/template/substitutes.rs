//! The substitutes template (`olm.template.substitutes`, operator-registry
//! `alpha/template/substitutes`): valid FBC under `entries`, and `substitutions` that put a new
//! bundle (`name`, an image) in the place of an existing one (`base`, a bundle name), the
//! FBC-native replacement of the CSV `olm.substitutesFor` annotation.
//!
//! Per substitution, in every channel: a new entry for the substitute takes the base entry's
//! `replaces`, `skips` and `skipRange` and also skips the base; the base entry's edges are
//! cleared; entries that replaced the base replace the substitute (and skip the base), entries
//! that skipped the base skip the substitute instead. The entries must be valid FBC before, and
//! the result after each substitution; the substitute must be a higher version (and release)
//! than the base.

use std::path::Path;
use std::sync::Arc;

use super::{ImageRef, Renderer, TemplateError, field};
use crate::diag::Severity;
use crate::fbc::decl::{ChannelEntry, DeclarativeConfig};
use crate::fbc::node::{Node, Value};

/// The schema of a substitutes template.
pub const SCHEMA: &str = "olm.template.substitutes";

/// One substitution: the image of the new bundle, the name of the bundle it replaces.
struct Substitution<'a> {
    name: String,
    base: String,
    node: &'a Node,
}

fn substitutions<'a>(file: &Path, doc: &'a Node) -> Result<Vec<Substitution<'a>>, TemplateError> {
    let list = match field(doc, "substitutions").map(|n| (&n.value, n.pos)) {
        None | Some((Value::Null, _)) => return Ok(Vec::new()),
        Some((Value::Seq(items), _)) => items,
        Some((_, pos)) => {
            return Err(TemplateError::at(
                file,
                pos,
                "unmarshalling template: substitutions must be a list",
            ));
        }
    };
    list.iter()
        .map(|s| {
            let get = |k: &str| match field(s, k).map(|n| &n.value) {
                Some(Value::Str(v)) => Ok(v.clone()),
                None | Some(Value::Null) => Ok(String::new()),
                Some(_) => Err(TemplateError::at(
                    file,
                    s.pos,
                    format!("unmarshalling template: substitution {k} must be a string"),
                )),
            };
            Ok(Substitution {
                name: get("name")?,
                base: get("base")?,
                node: s,
            })
        })
        .collect()
}

/// The substitute images, in order.
pub fn images(file: &Path, doc: &Node) -> Result<Vec<ImageRef>, TemplateError> {
    Ok(substitutions(file, doc)?
        .into_iter()
        // Substitutions refused before their image is rendered need no bundle source.
        .filter(|s| !s.name.is_empty() && !s.base.is_empty() && s.name != s.base)
        .map(|s| ImageRef {
            pos: field(s.node, "name").map_or(s.node.pos, |n| n.pos),
            image: s.name,
        })
        .collect())
}

/// The first error-level finding of opm's rules on `cfg`, if any.
fn invalid(cfg: &DeclarativeConfig) -> Option<String> {
    let loaded = crate::fbc::load::Loaded {
        cfg: cfg.clone(),
        problems: Vec::new(),
        files: 0,
    };
    crate::checks::fbc::validate(&loaded)
        .into_iter()
        .find(|f| f.severity == Severity::Error)
        .map(|f| format!("{}: {}", f.code, f.message))
}

/// Renders a substitutes template.
pub fn render(
    file: &Path,
    doc: &Node,
    r: &mut Renderer<'_>,
) -> Result<DeclarativeConfig, TemplateError> {
    let arc: Arc<Path> = Arc::from(file);
    let mut cfg = DeclarativeConfig::default();
    let entries = super::basic::entries(file, doc)?;
    for e in entries {
        super::decode_into(file, &arc, e.clone(), &mut cfg)?;
    }
    if let Some(why) = invalid(&cfg) {
        return Err(TemplateError::at(
            file,
            doc.pos,
            format!("render: entries are not valid FBC: {why}"),
        ));
    }
    for s in substitutions(file, doc)? {
        let at = |msg: String| {
            TemplateError::at(
                file,
                s.node.pos,
                format!(
                    "render: error processing substitution {}->{}: {msg}",
                    s.base, s.name
                ),
            )
        };
        if s.name.is_empty() {
            return Err(at("substitution name cannot be empty".into()));
        }
        if s.base.is_empty() {
            return Err(at("substitution base cannot be empty".into()));
        }
        if s.name == s.base {
            return Err(at("substitution name and base cannot be the same".into()));
        }
        let blob = r.bundle(
            &s.name,
            field(s.node, "name").map_or(s.node.pos, |n| n.pos),
            s.node.pos,
        )?;
        let mut one = DeclarativeConfig::default();
        super::decode_into(file, &arc, blob, &mut one)?;
        let Some(sub) = one.bundles.pop() else {
            return Err(at(format!(
                "rendered bundle image reference {:?} contains no bundles",
                s.name
            )));
        };
        let key = |b: &crate::fbc::decl::Bundle| {
            b.properties
                .iter()
                .find_map(|p| p.as_package())
                .map(|(_, v, r)| (semver::Version::parse(v).ok(), r.map(str::to_string)))
        };
        let Some(base) = cfg.bundles.iter().find(|b| b.name == s.base) else {
            return Err(at(format!(
                "base bundle {:?} does not exist in catalog",
                s.base
            )));
        };
        let (Some(b), Some(n)) = (key(base), key(&sub)) else {
            return Err(at(
                "the versions of the base and the substitute cannot be compared".into(),
            ));
        };
        if b.0.is_none() || n.0.is_none() {
            return Err(at(
                "the versions of the base and the substitute cannot be compared".into(),
            ));
        }
        let cmp = crate::graph::compare_versions(
            (n.0.as_ref(), n.1.as_deref()),
            (b.0.as_ref(), b.1.as_deref()),
        );
        if !cmp.is_gt() {
            return Err(at(format!(
                "the substitute {} must have a higher version (and release) than its base {}",
                sub.name, s.base
            )));
        }
        for ch in &mut cfg.channels {
            let at_base: Vec<usize> = ch
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.name == s.base)
                .map(|(i, _)| i)
                .collect();
            for &i in at_base.iter().rev() {
                let base = &mut ch.entries[i];
                let mut skips = std::mem::take(&mut base.skips);
                skips.push(s.base.clone());
                let new = ChannelEntry {
                    name: sub.name.clone(),
                    replaces: std::mem::take(&mut base.replaces),
                    skips,
                    skip_range: std::mem::take(&mut base.skip_range),
                    pos: base.pos,
                    skip_range_pos: base.skip_range_pos,
                };
                ch.entries.push(new);
            }
            let original = ch.entries.len() - at_base.len();
            for e in &mut ch.entries[..original] {
                if e.replaces == s.base {
                    e.replaces = sub.name.clone();
                    e.skips.push(s.base.clone());
                } else if e.skips.contains(&s.base) {
                    e.skips.push(sub.name.clone());
                    e.skips.retain(|x| *x != s.base);
                }
            }
        }
        cfg.bundles.push(sub);
        if let Some(why) = invalid(&cfg) {
            return Err(at(format!("resulting config is not valid FBC: {why}")));
        }
    }
    Ok(cfg)
}
