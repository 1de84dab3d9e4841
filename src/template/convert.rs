//! FBC to a basic template, as `opm alpha convert-template basic` does (operator-registry
//! `basic.FromReader`): every blob kept, bundles reduced to `schema` and `image`, under
//! `{schema: olm.template.basic, entries: [...]}`, keys sorted as sigs.k8s.io/yaml writes them.

use crate::fbc::decl::DeclarativeConfig;
use crate::fbc::node::{Node, Pos, Value};
use crate::fbc::write::{canonical, map, sorted};

fn s(v: &str) -> Node {
    Node::new(Pos::default(), Value::Str(v.to_string()))
}

/// The basic template of `cfg`: its blobs in canonical order (per package: package, channels,
/// bundles, others, deprecations), each bundle as `{image, schema}`.
pub fn to_basic(cfg: &DeclarativeConfig) -> Node {
    let mut entries = Vec::new();
    for (_, nodes) in canonical(cfg) {
        for n in nodes {
            let is_bundle = matches!(
                super::field(&n, "schema").map(|x| &x.value),
                Some(Value::Str(t)) if t == "olm.bundle"
            );
            if is_bundle {
                let image = match super::field(&n, "image").map(|x| &x.value) {
                    Some(Value::Str(i)) => i.clone(),
                    _ => String::new(),
                };
                entries.push(map(vec![("image", s(&image)), ("schema", s("olm.bundle"))]));
            } else {
                entries.push(sorted(&n));
            }
        }
    }
    map(vec![
        ("entries", Node::new(Pos::default(), Value::Seq(entries))),
        ("schema", s(super::basic::SCHEMA)),
    ])
}
