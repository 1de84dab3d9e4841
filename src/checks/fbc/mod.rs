//! Validation of File-Based Catalogs: every rule `opm validate` applies (`ConvertToModel` and
//! `model.Validate`), reported all at once with file and line, plus the serve-time and OLM
//! runtime failures opm misses. Rules are grouped by the object they concern.

mod bundle;
mod channel;
pub mod codes;
mod custom;
mod deprecation;
mod load;
mod package;

use std::path::Path;
use std::sync::Arc;

pub use codes::CODES;

use crate::diag::Code;
use crate::diag::{Finding, Location, Subject, sort_findings};
use crate::fbc::load::Loaded;
use crate::fbc::node::Pos;
use crate::model::Index;

/// Collects findings.
#[derive(Default)]
pub struct Sink {
    /// The findings so far.
    pub findings: Vec<Finding>,
}

impl Sink {
    /// Records a finding of `code` at `file:pos` about `subject`.
    pub fn push(
        &mut self,
        code: &'static Code,
        message: impl Into<String>,
        file: &Arc<Path>,
        pos: Pos,
        subject: Subject,
    ) -> &mut Finding {
        self.findings.push(
            Finding::new(code, message)
                .at(Some(Location::new(file.clone(), pos.line, pos.col)))
                .about(subject),
        );
        let n = self.findings.len();
        &mut self.findings[n - 1]
    }
}

/// The error-level findings about files and blobs that did not load (syntax, envelopes, field
/// types): what opm refuses to load at all. Commands other than `validate` report these and
/// fail rather than work on the rest of the catalog.
pub fn load_errors(loaded: &Loaded) -> Vec<Finding> {
    let mut sink = Sink::default();
    load::check(&loaded.problems, &mut sink);
    let mut f: Vec<Finding> = sink
        .findings
        .into_iter()
        .filter(|f| f.severity == crate::diag::Severity::Error)
        .collect();
    sort_findings(&mut f);
    f
}

/// Validates a loaded catalog and returns every finding, sorted by file and line.
pub fn validate(loaded: &Loaded) -> Vec<Finding> {
    let mut sink = Sink::default();
    load::check(&loaded.problems, &mut sink);
    let idx = Index::new(&loaded.cfg);
    package::check(&idx, &mut sink);
    channel::check(&idx, &mut sink);
    bundle::check(&idx, &mut sink);
    deprecation::check(&idx, &mut sink);
    custom::check(&idx, &mut sink);
    let mut f = sink.findings;
    sort_findings(&mut f);
    f
}
