//! Custom-schema rules opm leaves to serve time: safe names (FBC070) and the documented
//! `(schema, package, name)` uniqueness (FBC071).

use std::collections::HashMap;

use super::Sink;
use super::codes::*;
use crate::diag::Subject;
use crate::fbc::decl::Other;
use crate::model::Index;

/// `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`, the cache meta-key rule of `opm serve`.
pub fn safe_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Runs the custom-schema rules.
pub fn check(idx: &Index<'_>, sink: &mut Sink) {
    let all = idx
        .packages
        .values()
        .flat_map(|v| v.others.iter())
        .chain(idx.global_others.iter());
    let mut seen: HashMap<(&str, &str, &str), &Other> = HashMap::new();
    for o in all {
        let subj = if o.package.is_empty() {
            Subject::default()
        } else {
            Subject::package(&o.package)
        };
        if !safe_name(&o.schema) {
            sink.push(&CUSTOM_SCHEMA_NAME, format!("invalid custom schema meta: invalid schema \"{}\": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$", o.schema), &o.src.file, o.src.pos, subj.clone());
        }
        if !o.package.is_empty() && !safe_name(&o.package) {
            sink.push(&CUSTOM_SCHEMA_NAME, format!("invalid custom schema meta: invalid package \"{}\": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$", o.package), &o.src.file, o.src.pos, subj.clone());
        }
        if let Some(first) = seen.insert((&o.schema, &o.package, &o.name), o) {
            sink.push(
                &DUPLICATE_CUSTOM,
                format!(
                    "duplicate {} blob (package \"{}\", name \"{}\")",
                    o.schema, o.package, o.name
                ),
                &o.src.file,
                o.src.pos,
                subj,
            )
            .help = Some(format!(
                "the other one is at {}:{}",
                first.src.file.display(),
                first.src.pos.line
            ));
        }
    }
}
