//! Problems found while reading files: syntax (FBC001), blob envelopes (FBC002) and fields
//! (FBC003 type errors, FBC004 unknown fields, FBC005 mis-cased fields, FBC006 bad base64,
//! FBC043 property values of the wrong shape).

use super::Sink;
use super::codes::*;
use crate::diag::Subject;
use crate::fbc::decl::{BlobIssue, EnvelopeOrField};
use crate::fbc::decode::Issue;
use crate::fbc::load::LoadProblem;

fn subject(b: &BlobIssue) -> Subject {
    let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
    match b.schema.as_str() {
        "olm.package" => Subject {
            package: opt(&b.name),
            ..Subject::default()
        },
        "olm.channel" => Subject {
            package: opt(&b.package),
            channel: opt(&b.name),
            bundle: None,
        },
        _ => Subject {
            package: opt(&b.package),
            channel: None,
            bundle: opt(&b.name).filter(|_| b.schema == "olm.bundle"),
        },
    }
}

fn blob_label(b: &BlobIssue) -> String {
    if b.schema.is_empty() {
        "blob".to_string()
    } else {
        format!("{} blob", b.schema)
    }
}

/// Reports load problems.
pub fn check(problems: &[LoadProblem], sink: &mut Sink) {
    for p in problems {
        match p {
            LoadProblem::Syntax { file, error } => {
                sink.push(
                    &SYNTAX,
                    format!("cannot parse file: {}", error.message),
                    file,
                    crate::fbc::node::Pos::new(error.line, error.column),
                    Subject::default(),
                )
                .help = Some("fix the syntax, or list the file in .indexignore if it is not part of the catalog".into());
            }
            LoadProblem::Blob { file, issue } => blob(file, issue, sink),
        }
    }
}

fn blob(file: &std::sync::Arc<std::path::Path>, b: &BlobIssue, sink: &mut Sink) {
    let what = blob_label(b);
    let subj = subject(b);
    match &b.issue {
        EnvelopeOrField::NotAnObject { found, pos } => {
            sink.push(
                &ENVELOPE,
                format!("a catalog blob must be an object, found {found}"),
                file,
                *pos,
                subj,
            );
        }
        EnvelopeOrField::MissingSchema { pos } => {
            sink.push(&ENVELOPE, "blob is missing root schema field", file, *pos, subj).help =
                Some("add `schema: olm.package`, `olm.channel`, `olm.bundle`, `olm.deprecations` or a custom schema".into());
        }
        EnvelopeOrField::DuplicateEnvelopeKey { key, keys, pos } => {
            sink.push(
                &ENVELOPE,
                format!("duplicate keys for key \"{key}\": [{}]", keys.join(" ")),
                file,
                *pos,
                subj,
            );
        }
        EnvelopeOrField::Field(issue) => field(file, &what, issue, subj, sink),
    }
}

fn field(
    file: &std::sync::Arc<std::path::Path>,
    what: &str,
    issue: &Issue,
    subj: Subject,
    sink: &mut Sink,
) {
    match issue {
        Issue::Type {
            path,
            expected,
            found,
            pos,
        } => {
            let in_property = path.starts_with("properties[") && path.contains(".value");
            let code = if in_property {
                &BAD_PROPERTY
            } else {
                &FIELD_TYPE
            };
            sink.push(
                code,
                format!("{what}: `{path}` must be {expected}, found {found}"),
                file,
                *pos,
                subj,
            );
        }
        Issue::Unknown {
            path,
            suggestion,
            pos,
        } => {
            let f = sink.push(
                &UNKNOWN_FIELD,
                format!("{what}: unknown field `{path}` is ignored by OLM"),
                file,
                *pos,
                subj,
            );
            if let Some(s) = suggestion {
                f.help = Some(format!("did you mean `{s}`?"));
            }
        }
        Issue::Miscased {
            path,
            canonical,
            pos,
        } => {
            sink.push(
                &MISCASED_FIELD,
                format!("{what}: field `{path}` matches `{canonical}` only case-insensitively"),
                file,
                *pos,
                subj,
            )
            .help = Some(format!("write it as `{canonical}`"));
        }
        Issue::Invalid { path, message, pos } => {
            sink.push(
                &BAD_BASE64,
                format!("{what}: `{path}`: {message}"),
                file,
                *pos,
                subj,
            );
        }
    }
}
