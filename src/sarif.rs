//! Findings as SARIF 2.1.0 (the Static Analysis Results Interchange Format), which code-scanning
//! UIs (GitHub code scanning, GitLab, Azure DevOps) show next to the source lines.
//!
//! One run, the tool `olmctl` with a rule per code that occurs; each result carries its code,
//! level (`error`, `warning`, `note`), message and, when known, a physical location whose URI is
//! relative to the current directory when the file lies below it. Output is deterministic.

use serde_json::{Value, json};

use crate::diag::{Finding, Severity};

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A path as a SARIF artifact URI: relative to `base` when below it (`..` resolved by name),
/// with `/` separators, each segment percent-encoded; an absolute path outside the base becomes
/// a `file://` URI.
fn uri(file: &std::path::Path, base: Option<&std::path::Path>) -> String {
    let rel = crate::diag::relative_path(file, base);
    let (absolute, rel) = match rel.strip_prefix('/') {
        Some(r) => (true, r),
        None => (false, rel.as_str()),
    };
    let joined = rel
        .split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/");
    if absolute {
        format!("file:///{joined}")
    } else {
        joined
    }
}

/// Percent-encodes a path segment for a URI: everything but RFC 3986 unreserved characters and
/// the sub-delimiters, `:` and `@` that a segment may hold.
fn encode_segment(seg: &str) -> String {
    let mut out = String::with_capacity(seg.len());
    for b in seg.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Renders `findings` as one SARIF log. File URIs are made relative to `base` (usually the
/// current directory) where possible.
pub fn render(findings: &[Finding], base: Option<&std::path::Path>) -> String {
    render_known(findings, None, base)
}

/// [`render`] against a baseline: each result carries `baselineState` (`unchanged` when
/// `known[i]`, else `new`). Every result carries `partialFingerprints["olmctl/v1"]`, the
/// [`crate::baseline::fingerprint`] (file paths relative to `base`), which code-scanning UIs
/// use to follow a result across line moves.
pub fn render_known(
    findings: &[Finding],
    known: Option<&[bool]>,
    base: Option<&std::path::Path>,
) -> String {
    let mut codes: Vec<&'static str> = findings.iter().map(|f| f.code).collect();
    codes.sort_unstable();
    codes.dedup();
    let rules: Vec<Value> = codes
        .iter()
        .map(|c| {
            let code = crate::codes::find(c);
            json!({
                "id": c,
                "shortDescription": {"text": code.map_or("", |k| k.summary)},
                "defaultConfiguration": {"level": code.map_or("warning", |k| level(k.severity))},
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut text = f.message.clone();
            for n in &f.notes {
                text.push_str("\nnote: ");
                text.push_str(n);
            }
            if let Some(h) = &f.help {
                text.push_str("\nhelp: ");
                text.push_str(h);
            }
            let mut r = json!({
                "ruleId": f.code,
                "ruleIndex": codes.binary_search(&f.code).unwrap_or(0),
                "level": level(f.severity),
                "message": {"text": text},
                "partialFingerprints": {"olmctl/v1": crate::baseline::fingerprint(f, base)},
            });
            if let Some(k) = known {
                let state = if k.get(i).copied().unwrap_or(false) {
                    "unchanged"
                } else {
                    "new"
                };
                r["baselineState"] = json!(state);
            }
            if let Some(loc) = &f.location {
                let mut region = serde_json::Map::new();
                if loc.line > 0 {
                    region.insert("startLine".into(), json!(loc.line));
                    if loc.column > 0 {
                        region.insert("startColumn".into(), json!(loc.column));
                    }
                }
                let mut phys = json!({"artifactLocation": {"uri": uri(&loc.file, base)}});
                if !region.is_empty() {
                    phys["region"] = Value::Object(region);
                }
                r["locations"] = json!([{"physicalLocation": phys}]);
            }
            let mut props = serde_json::Map::new();
            for (k, v) in [
                ("package", &f.subject.package),
                ("channel", &f.subject.channel),
                ("bundle", &f.subject.bundle),
                ("path", &f.path),
            ] {
                if let Some(v) = v {
                    props.insert(k.into(), json!(v));
                }
            }
            if !props.is_empty() {
                r["properties"] = Value::Object(props);
            }
            r
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "olmctl",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Location;
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn results_rules_and_relative_uris() {
        let f = Finding::new(&crate::checks::safety::skew::NOT_UPWARDS, "a -> b: down")
            .at(Some(Location::new(
                Arc::from(Path::new("/w/x/m/csv.yaml")),
                3,
                5,
            )))
            .help("fix");
        let g = Finding::new(&crate::checks::safety::walk::UNCHECKED, "not checked");
        let v: Value = serde_json::from_str(&render(&[f, g], Some(Path::new("/w")))).unwrap();
        let run = &v["runs"][0];
        assert_eq!(v["version"], "2.1.0");
        assert_eq!(run["tool"]["driver"]["rules"][0]["id"], "EDGE001");
        assert_eq!(run["tool"]["driver"]["rules"][1]["id"], "SKW001");
        let r0 = &run["results"][0];
        assert_eq!(r0["ruleIndex"], 1);
        assert_eq!(r0["level"], "error");
        assert_eq!(r0["message"]["text"], "a -> b: down\nhelp: fix");
        let pl = &r0["locations"][0]["physicalLocation"];
        assert_eq!(pl["artifactLocation"]["uri"], "x/m/csv.yaml");
        assert_eq!(pl["region"]["startLine"], 3);
        assert_eq!(run["results"][1]["level"], "note");
        assert_eq!(
            uri(Path::new("/etc/x.yaml"), Some(Path::new("/w"))),
            "file:///etc/x.yaml"
        );
        assert_eq!(uri(Path::new("./a/b.yaml"), None), "a/b.yaml");
        assert_eq!(uri(Path::new("a b/c#1%.yaml"), None), "a%20b/c%231%25.yaml");
        assert_eq!(uri(Path::new("é.yaml"), None), "%C3%A9.yaml");
        assert!(run["results"][1].get("locations").is_none());
    }
}
