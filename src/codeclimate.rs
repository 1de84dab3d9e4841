//! Findings as a Code Climate report: the JSON array of issues GitLab reads as a merge request's
//! code quality report (`artifacts: reports: codequality:`).
//!
//! Each issue has what GitLab's "Code Quality report format" requires (`description`,
//! `check_name`, `fingerprint`, `severity`, `location.path`, `location.lines.begin`) and what the
//! Code Climate analyzer spec (SPEC.md, "Issues") requires beside them (`type: issue`,
//! `categories`). Severities: error `major`, warning `minor`, info `info`. Paths are relative to
//! `base` (the project directory: `$CI_PROJECT_DIR`); a finding without a file is placed on the
//! project (`.`, line 1). The fingerprint is the SHA-256 of the code, path, text and how many
//! identical findings came before, so it stays the same when lines move and differs between
//! findings, as GitLab compares reports by fingerprint. Output is deterministic.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::diag::{Finding, Severity};

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

/// The report: a JSON array, one issue per finding in the findings' order.
pub fn render(findings: &[Finding], base: Option<&Path>) -> String {
    let mut seen: HashMap<(String, String, &str), u32> = HashMap::new();
    let issues: Vec<Value> = findings
        .iter()
        .map(|f| {
            let (path, line) = match &f.location {
                Some(l) => (l.relative_path(base), l.line.max(1)),
                None => (".".to_string(), 1),
            };
            let details = f.details();
            let n = seen
                .entry((path.clone(), details.clone(), f.code))
                .or_insert(0);
            let mut h = Sha256::new();
            for part in [f.code, &path, &details, &n.to_string()] {
                h.update(part.as_bytes());
                h.update([0]);
            }
            *n += 1;
            let fingerprint: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            json!({
                "type": "issue",
                "check_name": f.code,
                "description": details.replace('\n', "; "),
                "categories": ["Bug Risk"],
                "severity": severity(f.severity),
                "fingerprint": fingerprint,
                "location": {"path": path, "lines": {"begin": line}},
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Location;
    use std::sync::Arc;

    #[test]
    fn issues_are_placed_and_fingerprinted_apart() {
        let at = |line| {
            Some(Location::new(
                Arc::from(Path::new("/w/catalog/p/catalog.yaml")),
                line,
                3,
            ))
        };
        let f = Finding::new(&crate::checks::fbc::codes::ENTRY_NO_BUNDLE, "missing")
            .at(at(9))
            .help("add it");
        let same_text_elsewhere = f.clone().at(at(12));
        let unplaced = Finding::new(&crate::checks::safety::walk::UNCHECKED, "not checked");
        let v: Value = serde_json::from_str(&render(
            &[f.clone(), same_text_elsewhere, unplaced],
            Some(Path::new("/w")),
        ))
        .unwrap();
        assert_eq!(v[0]["type"], "issue");
        assert_eq!(v[0]["check_name"], "FBC025");
        assert_eq!(v[0]["description"], "missing; help: add it");
        assert_eq!(v[0]["severity"], "major");
        assert_eq!(v[0]["location"]["path"], "catalog/p/catalog.yaml");
        assert_eq!(v[0]["location"]["lines"]["begin"], 9);
        assert_eq!(v[1]["location"]["lines"]["begin"], 12);
        assert_ne!(v[0]["fingerprint"], v[1]["fingerprint"]);
        assert_eq!(
            v[2]["location"],
            json!({"path": ".", "lines": {"begin": 1}})
        );
        assert_eq!(v[2]["severity"], "info");
        // Moving a finding to another line keeps its fingerprint.
        let moved: Value =
            serde_json::from_str(&render(&[f.at(at(30))], Some(Path::new("/w")))).unwrap();
        assert_eq!(moved[0]["fingerprint"], v[0]["fingerprint"]);
    }
}
