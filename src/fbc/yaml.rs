//! YAML documents to positioned [`Node`] trees, resolving plain scalars the way opm does: opm
//! reads YAML with go-yaml v2 (YAML 1.1 resolution: `yes`/`on` are booleans, `0x1F` and `017` are
//! integers, ...) and converts the result to JSON before decoding.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use super::ParseError;
use super::node::{Entry, Node, Pos, Value};

enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<Entry>,
        merges: Vec<Node>,
        key: Option<(KeyText, Pos)>,
    },
}

enum KeyText {
    Key(String),
    Merge,
}

fn pos_of(span: &Span) -> Pos {
    Pos::new(span.start.line() as u32, span.start.col() as u32 + 1)
}

/// Parses every YAML document of `text`, calling `on_doc` with the root node of each non-empty
/// document. Stops at the first syntax error.
pub fn parse_documents(text: &str, mut on_doc: impl FnMut(Node)) -> Result<(), ParseError> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut root: Option<Node> = None;
    for ev in Parser::new_from_str(text) {
        let (event, span) = ev.map_err(|e| ParseError {
            line: e.marker().line() as u32,
            column: e.marker().col() as u32 + 1,
            message: e.info().to_string(),
        })?;
        let pos = pos_of(&span);
        let done: Node = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => continue,
            Event::DocumentStart(_) => {
                root = None;
                anchors.clear();
                continue;
            }
            Event::DocumentEnd => {
                if let Some(n) = root.take()
                    && n.value != Value::Null
                {
                    on_doc(n);
                }
                continue;
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(n) => Node::new(pos, n.value.clone()),
                None => {
                    return Err(ParseError::at(pos, "alias refers to an unknown anchor"));
                }
            },
            Event::Scalar(text, style, anchor, tag) => {
                let is_plain = matches!(style, ScalarStyle::Plain);
                // `<<` as a plain mapping key is a merge key in go-yaml v2.
                if is_plain
                    && tag.is_none()
                    && text == "<<"
                    && let Some(Frame::Map { key: k @ None, .. }) = stack.last_mut()
                {
                    *k = Some((KeyText::Merge, pos));
                    continue;
                }
                let core_suffix = tag
                    .as_ref()
                    .filter(|t| t.is_yaml_core_schema())
                    .map(|t| t.suffix.as_str());
                let value = match (core_suffix, is_plain) {
                    (Some("str"), _) | (Some("binary"), _) => Value::Str(text.into_owned()),
                    (_, false) => Value::Str(text.into_owned()),
                    (_, true) => resolve_plain(&text).map_err(|m| ParseError::at(pos, m))?,
                };
                let node = Node::new(pos, value);
                if anchor != 0 {
                    anchors.insert(anchor, node.clone());
                }
                node
            }
            Event::SequenceStart(anchor, _) => {
                if stack.len() >= super::json::MAX_DEPTH {
                    return Err(ParseError::at(
                        pos,
                        format!("nesting is deeper than {} levels", super::json::MAX_DEPTH),
                    ));
                }
                stack.push(Frame::Seq {
                    pos,
                    anchor,
                    items: Vec::new(),
                });
                continue;
            }
            Event::MappingStart(anchor, _) => {
                if stack.len() >= super::json::MAX_DEPTH {
                    return Err(ParseError::at(
                        pos,
                        format!("nesting is deeper than {} levels", super::json::MAX_DEPTH),
                    ));
                }
                stack.push(Frame::Map {
                    pos,
                    anchor,
                    entries: Vec::new(),
                    merges: Vec::new(),
                    key: None,
                });
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq { pos, anchor, items }) => {
                    let node = Node::new(pos, Value::Seq(items));
                    if anchor != 0 {
                        anchors.insert(anchor, node.clone());
                    }
                    node
                }
                _ => return Err(ParseError::at(pos, "unbalanced sequence end")),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map {
                    pos,
                    anchor,
                    mut entries,
                    merges,
                    ..
                }) => {
                    apply_merges(&mut entries, merges, pos)?;
                    let node = Node::new(pos, Value::Map(entries));
                    if anchor != 0 {
                        anchors.insert(anchor, node.clone());
                    }
                    node
                }
                _ => return Err(ParseError::at(pos, "unbalanced mapping end")),
            },
        };
        // Attach the finished node to its parent, or make it the document root.
        match stack.last_mut() {
            None => root = Some(done),
            Some(Frame::Seq { items, .. }) => items.push(done),
            Some(Frame::Map {
                entries,
                merges,
                key,
                ..
            }) => match key.take() {
                None => {
                    let k = key_text(&done).ok_or_else(|| {
                        ParseError::at(
                            done.pos,
                            format!("{} cannot be used as a mapping key", done.kind()),
                        )
                    })?;
                    *key = Some((KeyText::Key(k), done.pos));
                }
                Some((KeyText::Merge, _)) => merges.push(done),
                Some((KeyText::Key(k), key_pos)) => entries.push(Entry {
                    key: k,
                    key_pos,
                    value: done,
                }),
            },
        }
    }
    Ok(())
}

/// go-yaml v2 merge keys: merged entries never override explicit ones.
fn apply_merges(entries: &mut Vec<Entry>, merges: Vec<Node>, pos: Pos) -> Result<(), ParseError> {
    for m in merges {
        let sources = match m.value {
            Value::Map(e) => vec![e],
            Value::Seq(items) => {
                let mut v = Vec::new();
                for it in items {
                    match it.value {
                        Value::Map(e) => v.push(e),
                        _ => {
                            return Err(ParseError::at(
                                it.pos,
                                "map merge requires a map or a list of maps",
                            ));
                        }
                    }
                }
                v
            }
            _ => {
                return Err(ParseError::at(
                    pos,
                    "map merge requires a map or a list of maps",
                ));
            }
        };
        for src in sources {
            for e in src {
                if !entries.iter().any(|x| x.key == e.key) {
                    entries.push(e);
                }
            }
        }
    }
    Ok(())
}

/// A scalar key as sigs.k8s.io/yaml turns it into a JSON object key.
fn key_text(n: &Node) -> Option<String> {
    match &n.value {
        Value::Str(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(f) => {
            let mut s = String::new();
            super::node::write_go_float(&mut s, *f);
            Some(s)
        }
        Value::Null => Some("null".to_string()),
        Value::Seq(_) | Value::Map(_) => None,
    }
}

/// Resolves an untagged plain scalar with go-yaml v2's YAML 1.1 rules.
pub fn resolve_plain(s: &str) -> Result<Value, String> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            return Ok(Value::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return Ok(Value::Bool(false));
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            return Err(format!(
                "`{s}` is a YAML infinity/NaN, which JSON cannot represent (quote it to make it a string)"
            ));
        }
        _ => {}
    }
    let first = s.as_bytes()[0];
    if first == b'.' {
        // go-yaml v2 hands text starting with `.` to strconv.ParseFloat as written (no
        // underscore removal), so `._0` stays a string.
        if is_yaml_float(s)
            && let Ok(f) = s.parse::<f64>()
        {
            return Ok(Value::Number(f));
        }
        return Ok(Value::Str(s.to_string()));
    }
    if first.is_ascii_digit() || matches!(first, b'+' | b'-') {
        let plain: String = s.chars().filter(|c| *c != '_').collect();
        if let Some(f) = parse_go_int(&plain) {
            return Ok(Value::Number(f));
        }
        if is_yaml_float(&plain)
            && let Ok(f) = plain.parse::<f64>()
        {
            return Ok(Value::Number(f));
        }
    }
    Ok(Value::Str(s.to_string()))
}

/// Go `strconv.ParseInt(s, 0, 64)` then `ParseUint(s, 0, 64)`, returned as f64.
fn parse_go_int(s: &str) -> Option<f64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(r) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, r)
    } else if let Some(r) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (8, r)
    } else if let Some(r) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (2, r)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = u64::from_str_radix(digits, radix).ok()?;
    if neg {
        if v > (i64::MAX as u64) + 1 {
            return None;
        }
        Some(-(v as f64))
    } else {
        Some(v as f64)
    }
}

/// go-yaml v2's float pattern `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - st
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<Node> {
        let mut v = Vec::new();
        parse_documents(text, |n| v.push(n)).expect("parses");
        v
    }

    #[test]
    fn yaml11_resolution_like_go_yaml_v2() {
        assert_eq!(resolve_plain("yes"), Ok(Value::Bool(true)));
        assert_eq!(resolve_plain("Off"), Ok(Value::Bool(false)));
        assert_eq!(resolve_plain("0x1F"), Ok(Value::Number(31.0)));
        assert_eq!(resolve_plain("017"), Ok(Value::Number(15.0)));
        assert_eq!(resolve_plain("08"), Ok(Value::Number(8.0)));
        assert_eq!(resolve_plain("1_000"), Ok(Value::Number(1000.0)));
        assert_eq!(resolve_plain("1.0"), Ok(Value::Number(1.0)));
        assert_eq!(resolve_plain(".5"), Ok(Value::Number(0.5)));
        assert_eq!(resolve_plain("._0"), Ok(Value::Str("._0".into())));
        assert_eq!(resolve_plain("1_0.5"), Ok(Value::Number(10.5)));
        assert_eq!(resolve_plain("1.2.3"), Ok(Value::Str("1.2.3".into())));
        assert_eq!(resolve_plain("~"), Ok(Value::Null));
        assert_eq!(resolve_plain("v1"), Ok(Value::Str("v1".into())));
        assert!(resolve_plain(".inf").is_err());
    }

    #[test]
    fn documents_positions_and_empty_documents() {
        let d = docs(
            "---\n---\nschema: olm.package\nname: foo\n---\n# only a comment\n---\nschema: x\n",
        );
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].pos, Pos::new(3, 1));
        let e = d[0].sorted_entries();
        assert_eq!(e[0].key, "name");
        assert_eq!(e[0].key_pos, Pos::new(4, 1));
        assert_eq!(e[0].value.pos, Pos::new(4, 7));
    }

    #[test]
    fn quoted_scalars_stay_strings_and_tags_apply() {
        let d = docs("a: 'yes'\nb: !!str 12\nc: \"1.0\"\nd: |\n  x\n");
        assert_eq!(
            d[0].to_json(),
            r#"{"a":"yes","b":"12","c":"1.0","d":"x\n"}"#
        );
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let d = docs("base: &b {p: 1, q: 2}\nc:\n  <<: *b\n  q: 3\n");
        assert_eq!(
            d[0].to_json(),
            r#"{"base":{"p":1,"q":2},"c":{"p":1,"q":3}}"#
        );
    }

    #[test]
    fn yaml11_boolean_keys_like_go_yaml_v2() {
        // go-yaml v2 resolves `y`/`n`/`on`/`off` to booleans even as keys; sigs.k8s.io/yaml then
        // writes them as "true"/"false" JSON keys.
        let d = docs("y: 1\nOff: 2\n");
        assert_eq!(d[0].to_json(), r#"{"false":2,"true":1}"#);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = parse_documents("a: b\n  c: d\n", |_| {}).expect_err("bad yaml");
        assert_eq!(err.line, 2);
        assert!(err.column > 0);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(20_000);
        let err = parse_documents(&text, |_| {}).expect_err("too deep");
        assert_eq!(err.line, 1);
        // saphyr's own recursion limit fires first for flow collections; our cap is the backstop.
        assert!(
            err.message.contains("recursion limit") || err.message.contains("deeper than 10000"),
            "{}",
            err.message
        );
        assert!(err.column > 1);
    }

    #[test]
    fn numeric_keys_become_strings() {
        let d = docs("1: a\ntrue: b\n");
        assert_eq!(d[0].to_json(), r#"{"1":"a","true":"b"}"#);
    }

    proptest::proptest! {
        /// Arbitrary text never panics the reader: it either parses or reports a position.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse_documents(&text, |_| {});
        }

        /// YAML-ish text built from catalog-like tokens never panics either, and any error
        /// points inside the text.
        #[test]
        fn structured_noise_never_panics(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "schema: olm.bundle\n", "- ", "  ", "name: a\n", "---\n", "{", "}", "[", "]",
                ": ", "&a ", "*a", "<<: *a\n", "'", "\"", "|\n", ">-\n", "#c\n", "\t", "? ",
                "!!str ", "\n", "x", ",",
            ]),
            0..40,
        )) {
            let text: String = parts.concat();
            if let Err(e) = parse_documents(&text, |_| {}) {
                let lines = text.lines().count().max(1) as u32 + 1;
                proptest::prop_assert!(e.line <= lines, "line {} beyond {}", e.line, lines);
            }
        }
    }
}
