//! The bundle's metadata as `bundle generate` writes it: `metadata/annotations.yaml` and the
//! `LABEL`s of `bundle.Dockerfile`, which hold the same annotations, and the scorecard config.
//!
//! operator-sdk writes both files from one template (`internal/util/bundleutil/template.go`,
//! `GenerateMetadata` in `bundleutil.go`: "annotations.yaml and bundle.Dockerfile ... should
//! hold the same set of values always"): the core bundle annotations, its own other labels,
//! then, when `tests/scorecard/config.yaml` exists in the bundle directory
//! (`IsScoreConfigPresent` in `internal/cmd/operator-sdk/generate/bundle/bundle.go ::
//! runMetadata`), `operators.operatorframework.io.test.mediatype.v1: scorecard+v1` and
//! `operators.operatorframework.io.test.config.v1: tests/scorecard/`, with `COPY
//! tests/scorecard /tests/scorecard/` in the Dockerfile. It does not merge: with `--overwrite`
//! (its default) both files are rewritten from the template and annotations added by hand
//! (`com.redhat.openshift.versions`, which the certified and community pipelines read) are
//! lost; without it the old metadata is kept whole and never updated. olmctl keeps what it does
//! not own instead: the annotations of the existing `annotations.yaml` and the labels of the
//! existing `bundle.Dockerfile` whose keys are not [`OWNED`], in their order, in both files.

use std::path::Path;

use crate::bundle::load::{BundleError, err, keys, parse_file};
use crate::fbc::node::{Pos, Value};

/// The scorecard config's directory in a bundle (operator-sdk's `scorecard.DefaultConfigDir`).
pub const SCORECARD_DIR: &str = "tests/scorecard/";
/// The scorecard config file (`DefaultConfigDir` + `ConfigFileName`).
pub const SCORECARD_CONFIG: &str = "tests/scorecard/config.yaml";
/// The test media type annotation.
pub const TEST_MEDIATYPE: &str = "operators.operatorframework.io.test.mediatype.v1";
/// The test config annotation.
pub const TEST_CONFIG: &str = "operators.operatorframework.io.test.config.v1";

/// The annotations `bundle generate` owns: it writes them from its flags (and the test ones
/// when a scorecard config is there) and never keeps an earlier value.
pub const OWNED: &[&str] = &[
    keys::MEDIATYPE,
    keys::MANIFESTS,
    keys::METADATA,
    keys::PACKAGE,
    keys::CHANNELS,
    keys::DEFAULT_CHANNEL,
    TEST_MEDIATYPE,
    TEST_CONFIG,
];

/// The flag that sets an owned annotation, for messages.
pub fn owner_flag(key: &str) -> Option<&'static str> {
    Some(match key {
        keys::MEDIATYPE | keys::MANIFESTS | keys::METADATA => "(fixed: registry+v1)",
        keys::PACKAGE => "--package",
        keys::CHANNELS => "--channels",
        keys::DEFAULT_CHANNEL => "--default-channel",
        TEST_MEDIATYPE | TEST_CONFIG => "(set when tests/scorecard/config.yaml is there)",
        _ => return None,
    })
}

/// Why `key` = `value` cannot be written into both files, if it cannot: the key must be an
/// annotation key the API server accepts (`IsQualifiedName` of the lower-cased key, as
/// apimachinery's `ValidateAnnotations` checks it) and the value may hold no line break or
/// control character (it is a YAML value and a `LABEL` of one line).
pub fn problem(key: &str, value: &str) -> Option<String> {
    let p = crate::names::problems(crate::names::Rule::QualifiedName, &key.to_lowercase());
    if !p.is_empty() {
        return Some(format!(
            "annotation key {}: {}",
            crate::range::go_quote(key),
            p.join("; ")
        ));
    }
    if value.chars().any(crate::text::needs_escape) {
        return Some(format!(
            "annotation {key}: the value {} may not contain line breaks, control characters or bidirectional marks",
            crate::range::go_quote(value)
        ));
    }
    None
}

/// The annotations of an earlier bundle in `dir` that `bundle generate` does not own: those
/// of `metadata/annotations.yaml` in their order, then the labels of `bundle.Dockerfile` that
/// the annotations do not have, in theirs. Missing files give nothing; a file that cannot be
/// read, or a key or value that could not be written back, is an error naming the file.
pub fn kept(dir: &Path) -> Result<Vec<(String, String)>, BundleError> {
    // The output directory is never read (nor written) through a link.
    let present = |p: &Path| match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(err(
            p,
            Pos::default(),
            "a symbolic link: the output directory's files are not read or written through links; replace it with the file",
        )),
        Ok(_) => Ok(true),
        Err(_) => Ok(false),
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let ann = dir.join("metadata/annotations.yaml");
    if present(&ann)? {
        let docs = parse_file(&ann)?;
        let block = docs
            .first()
            .and_then(|d| crate::bundle::load::field(d, &["annotations"]));
        if let Some(Value::Map(entries)) = block.map(|b| &b.value) {
            for e in entries {
                if OWNED.contains(&e.key.as_str()) {
                    continue;
                }
                let Some(v) = e.value.as_str() else {
                    return Err(err(
                        &ann,
                        e.value.pos,
                        format!(
                            "annotation {}: the value must be a string (quote it): annotations are a map of strings",
                            e.key
                        ),
                    ));
                };
                if let Some(p) = problem(&e.key, v) {
                    return Err(err(&ann, e.value.pos, p));
                }
                match out.iter_mut().find(|(k, _)| *k == e.key) {
                    // A repeated key: the last one wins, as Go's YAML decoding of a map does.
                    Some(slot) => slot.1 = v.to_string(),
                    None => out.push((e.key.clone(), v.to_string())),
                }
            }
        }
    }
    let file = dir.join("bundle.Dockerfile");
    if present(&file)? {
        let text = crate::input::read_text(&file)
            .map_err(|e| err(&file, Pos::default(), e.to_string()))?;
        for (k, v, line) in labels(&text).map_err(|(line, m)| err(&file, Pos::new(line, 1), m))? {
            if OWNED.contains(&k.as_str()) || out.iter().any(|(ok, _)| *ok == k) {
                continue;
            }
            if let Some(p) = problem(&k, &v) {
                return Err(err(&file, Pos::new(line, 1), p));
            }
            out.push((k, v));
        }
    }
    Ok(out)
}

/// A Dockerfile label: key, value, and the line its instruction starts on.
pub type Label = (String, String, u32);

/// The `LABEL`s of a Dockerfile, `(key, value, line)` in order, as BuildKit's parser reads
/// them (`frontend/dockerfile/parser`: instructions case-insensitive, `#` comment lines, a
/// trailing `\` continues the line; `parseNameVal`: `key=value` pairs, or the legacy `LABEL key
/// value`; quotes removed as `shell/lex.go` does, without variable expansion). A later label of
/// the same key replaces the earlier one. Errors are `(line, message)`.
pub fn labels(text: &str) -> Result<Vec<Label>, (u32, String)> {
    let mut out: Vec<Label> = Vec::new();
    let mut instr = String::new();
    let mut start = 0u32;
    for (i, raw) in text.lines().enumerate() {
        let line = i as u32 + 1;
        let t = raw.trim_start();
        if instr.is_empty() {
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            start = line;
        } else if t.starts_with('#') {
            // Comment lines inside a continued instruction are dropped.
            continue;
        }
        match raw.trim_end().strip_suffix('\\') {
            Some(cont) => {
                instr.push_str(cont);
                instr.push(' ');
            }
            None => {
                instr.push_str(raw);
                label_instruction(&instr, start, &mut out)?;
                instr.clear();
            }
        }
    }
    if !instr.is_empty() {
        label_instruction(&instr, start, &mut out)?;
    }
    Ok(out)
}

fn label_instruction(instr: &str, line: u32, out: &mut Vec<Label>) -> Result<(), (u32, String)> {
    let t = instr.trim();
    let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
    if !word.eq_ignore_ascii_case("LABEL") {
        return Ok(());
    }
    let words = shell_words(rest).map_err(|m| (line, m))?;
    let mut put = |k: String, v: String| match out.iter_mut().find(|(ok, _, _)| *ok == k) {
        Some(slot) => *slot = (k, v, line),
        None => out.push((k, v, line)),
    };
    match words.first() {
        None => return Err((line, "LABEL without a key".to_string())),
        // The legacy form: `LABEL key value words`.
        Some((w, false)) => {
            let v: Vec<&str> = words[1..].iter().map(|(w, _)| w.as_str()).collect();
            put(w.clone(), v.join(" "));
        }
        Some(_) => {
            for (w, has_eq) in &words {
                if !has_eq {
                    return Err((
                        line,
                        format!("LABEL {w}: expected key=value (every pair needs its '=')"),
                    ));
                }
                let (k, v) = w.split_once('=').unwrap_or((w, ""));
                if k.is_empty() {
                    return Err((line, format!("LABEL {w}: the key is empty")));
                }
                put(k.to_string(), v.to_string());
            }
        }
    }
    Ok(())
}

/// Splits on unquoted white space and removes quotes: `'...'` literal, `"..."` with `\`
/// escaping only `"`, `$` and `\` (`processDoubleQuote`), elsewhere `\` escaping any
/// character. Each word comes with whether it had an unquoted `=`.
fn shell_words(s: &str) -> Result<Vec<(String, bool)>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut in_word, mut has_eq) = (false, false);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push((std::mem::take(&mut cur), has_eq));
                    (in_word, has_eq) = (false, false);
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some('"' | '$' | '\\') => cur.extend(chars.next()),
                            _ => cur.push('\\'),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            c => {
                in_word = true;
                if c == '=' && !has_eq {
                    has_eq = true;
                }
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push((cur, has_eq));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dockerfile_labels_are_read_as_buildkit_reads_them() {
        let text = "FROM scratch\n# LABEL commented=out\nlabel a=1 b=\"two words\"\nLABEL c='x \"y\"' \\\n  d=\"q\\\"\\$\\n\"\nLABEL legacy value with words\nLABEL a=again\nCOPY manifests /manifests/\n";
        let got = labels(text).unwrap();
        assert_eq!(
            got,
            [
                ("a".to_string(), "again".to_string(), 7),
                ("b".to_string(), "two words".to_string(), 3),
                ("c".to_string(), "x \"y\"".to_string(), 4),
                ("d".to_string(), "q\"$\\n".to_string(), 4),
                ("legacy".to_string(), "value with words".to_string(), 6),
            ]
        );
        assert_eq!(labels("LABEL a=1 b\n").unwrap_err().0, 1);
        assert!(labels("LABEL a=\"open\n").is_err());
    }

    #[test]
    fn annotation_problems_name_the_key() {
        assert_eq!(
            problem("com.redhat.openshift.versions", "v4.12-v4.21"),
            None
        );
        assert!(
            problem("a b", "x")
                .unwrap()
                .starts_with("annotation key \"a b\": ")
        );
        assert!(
            problem("ok", "line\nbreak")
                .unwrap()
                .contains("line breaks")
        );
    }
}
