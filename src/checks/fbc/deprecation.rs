//! `olm.deprecations` rules (FBC060-066), as `ConvertToModel` applies them.

use std::collections::HashSet;

use super::Sink;
use super::codes::*;
use crate::diag::Subject;
use crate::model::Index;

/// Runs the deprecation rules.
pub fn check(idx: &Index<'_>, sink: &mut Sink) {
    for (pkg, view) in &idx.packages {
        let known = view.package().is_some() && !pkg.is_empty();
        for (n, d) in view.deprecations.iter().enumerate() {
            let file = &d.src.file;
            let subj = Subject::package(pkg);
            if pkg.is_empty() {
                sink.push(
                    &DEPRECATION_NO_PACKAGE,
                    "package name must be set for deprecation item",
                    file,
                    d.src.pos,
                    Subject::default(),
                );
                continue;
            }
            if !known {
                sink.push(
                    &DEPRECATION_UNKNOWN_PACKAGE,
                    format!("cannot apply deprecations to an unknown package \"{pkg}\""),
                    file,
                    d.src.pos,
                    subj.clone(),
                );
            }
            if n > 0 {
                sink.push(
                    &DUPLICATE_DEPRECATIONS,
                    format!("expected a maximum of one deprecation per package: \"{pkg}\""),
                    file,
                    d.src.pos,
                    subj.clone(),
                );
            }
            let mut seen = HashSet::new();
            for (i, e) in d.entries.iter().enumerate() {
                let r = &e.reference;
                if r.schema.is_empty() {
                    sink.push(
                        &DEPRECATION_NO_SCHEMA,
                        format!(
                            "schema must be set for deprecation entry [{i}] for package \"{pkg}\""
                        ),
                        file,
                        e.pos,
                        subj.clone(),
                    );
                    continue;
                }
                if !seen.insert(r.clone()) {
                    sink.push(&DUPLICATE_DEPRECATION_ENTRY, format!("duplicate deprecation entry {{schema: {}, name: {}}} for package \"{pkg}\"", r.schema, r.name), file, e.pos, subj.clone());
                }
                if e.message.is_empty() {
                    sink.push(
                        &DEPRECATION_NO_MESSAGE,
                        "invalid deprecation: message must be set",
                        file,
                        e.pos,
                        subj.clone(),
                    );
                }
                if !known {
                    continue;
                }
                let problem = match r.schema.as_str() {
                    "olm.package" if !r.name.is_empty() => Some(format!(
                        "package name must be empty for deprecated package \"{pkg}\" (specified \"{}\")",
                        r.name
                    )),
                    "olm.package" => None,
                    "olm.channel" if !view.channels.contains_key(r.name.as_str()) => Some(format!(
                        "cannot deprecate channel \"{}\" for package \"{pkg}\": channel not found",
                        r.name
                    )),
                    "olm.bundle" if !view.bundles.contains_key(r.name.as_str()) => Some(format!(
                        "cannot deprecate bundle \"{}\" for package \"{pkg}\": bundle not found",
                        r.name
                    )),
                    "olm.channel" | "olm.bundle" => None,
                    other => Some(format!(
                        "cannot deprecate object {{schema: {other}, name: {}}} referenced by entry [{i}] for package \"{pkg}\": object schema unknown",
                        r.name
                    )),
                };
                if let Some(m) = problem {
                    sink.push(&DEPRECATION_BAD_REFERENCE, m, file, e.pos, subj.clone());
                }
            }
        }
    }
}
