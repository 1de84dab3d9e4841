//! YAML documents to positioned [`Node`] trees, resolving plain scalars the way opm does: opm
//! reads YAML with go-yaml v2 (YAML 1.1 resolution: `yes`/`on` are booleans, `0x1F` and `017` are
//! integers, ...) and converts the result to JSON before decoding.

use std::collections::HashMap;

use saphyr_parser::{Event, ScalarStyle, Span, StrParser};

use super::ParseError;
use super::node::{Entry, Node, Pos, Value};

enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Node>,
        /// Nodes in this list (itself included), for the alias limit.
        count: u64,
        /// Its approximate size in bytes.
        bytes: u64,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<Entry>,
        merges: Vec<Node>,
        key: Option<(KeyText, Pos)>,
        /// Nodes in this object (itself included).
        count: u64,
        /// Its approximate size in bytes.
        bytes: u64,
    },
}

enum KeyText {
    Key(String),
    Merge,
}

fn pos_of(span: &Span) -> Pos {
    Pos::new(span.start.line() as u32, span.start.col() as u32 + 1)
}

/// go-yaml v2 counts decoded nodes per document and refuses "excessive aliasing" when more
/// than this many come from alias expansion (and the ratio rule of [`allowed_alias_ratio`]
/// fails): a small document may be mostly aliases, a billion-laughs one may not.
const ALIAS_MIN_COUNT: u64 = 100;

/// go-yaml v2 does not apply the ratio rule below this many decoded nodes.
const ALIAS_MIN_DECODES: u64 = 1000;

/// Bytes alias expansion may add to one document. go-yaml shares aliased strings; here they
/// are copied, so a few anchored megabyte strings aliased a thousand times would cost
/// gigabytes although go-yaml's node-count rule admits them.
pub const MAX_ALIAS_BYTES: u64 = 64 << 20;

/// What a node costs beyond its text, for [`MAX_ALIAS_BYTES`].
const NODE_COST: u64 = std::mem::size_of::<Node>() as u64;

/// go-yaml v2's `allowedAliasRatio`: 99% of decodes may come from aliases up to 400,000
/// decodes, 10% from 4,000,000 on, scaled linearly between.
fn allowed_alias_ratio(decodes: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    if decodes <= LOW {
        0.99
    } else if decodes >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decodes - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

/// What a document's root may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roots {
    /// Any value (annotation values, test snippets).
    Any,
    /// Objects only (catalog blobs, manifests, policy files): a list at the root is handed
    /// over empty and ends the text (opm's decoder stops at the first document it cannot
    /// decode), so that a huge top-level list costs neither memory nor time before the caller
    /// rejects it by its kind.
    Objects,
}

/// Parses every YAML document of `text`, calling `on_doc` with the root node of each non-empty
/// document. Stops at the first syntax error.
pub fn parse_documents(text: &str, on_doc: impl FnMut(Node)) -> Result<(), ParseError> {
    parse_with(text, Roots::Any, on_doc)
}

/// The first non-empty YAML document of `text`, if any (what decoders that read one document
/// take: templates, policies, maps, `ci.yaml`, bundle files). Their documents are objects, so a
/// root list comes back empty ([`Roots::Objects`]): its kind is all a caller needs to refuse it.
pub fn first_document(text: &str) -> Result<Option<Node>, ParseError> {
    let mut first = None;
    parse_objects(text, |n| {
        if first.is_none() {
            first = Some(n);
        }
    })?;
    Ok(first)
}

/// Reads `path` as input text ([`crate::input::read_text`]) and returns its first YAML document;
/// errors name the file (and line and column).
pub fn read_first_document(path: &std::path::Path) -> Result<Option<Node>, String> {
    let text = crate::input::read_text(path).map_err(|e| format!("{}: {e}", path.display()))?;
    first_document(&text)
        .map_err(|e| format!("{}:{}:{}: {}", path.display(), e.line, e.column, e.message))
}

/// [`parse_documents`] for files whose documents must be objects ([`Roots::Objects`]).
pub fn parse_objects(text: &str, on_doc: impl FnMut(Node)) -> Result<(), ParseError> {
    parse_with(text, Roots::Objects, on_doc)
}

/// Per-document counters for go-yaml's alias limit.
#[derive(Default)]
struct AliasBudget {
    /// Nodes built, directly or by alias expansion.
    decodes: u64,
    /// Nodes built by alias expansion.
    aliased: u64,
    /// Bytes built by alias expansion.
    aliased_bytes: u64,
}

impl AliasBudget {
    /// Accounts for expanding an alias of `count` nodes and `bytes` bytes, refusing it as
    /// go-yaml v2 does ("excessive aliasing") or when it would copy too many bytes.
    fn expand(&mut self, count: u64, bytes: u64, pos: Pos) -> Result<(), ParseError> {
        let aliased = self.aliased.saturating_add(count);
        let decodes = self.decodes.saturating_add(count);
        let aliased_bytes = self.aliased_bytes.saturating_add(bytes);
        if aliased > ALIAS_MIN_COUNT
            && decodes > ALIAS_MIN_DECODES
            && aliased as f64 / decodes as f64 > allowed_alias_ratio(decodes)
        {
            return Err(ParseError::at(
                pos,
                format!(
                    "document contains excessive aliasing ({aliased} of {decodes} values come \
                     from aliases; go-yaml refuses it too)"
                ),
            ));
        }
        if aliased_bytes > MAX_ALIAS_BYTES {
            return Err(ParseError::at(
                pos,
                format!(
                    "document contains excessive aliasing (aliases expand to more than {})",
                    crate::input::human_size(MAX_ALIAS_BYTES)
                ),
            ));
        }
        self.aliased = aliased;
        self.decodes = decodes;
        self.aliased_bytes = aliased_bytes;
        Ok(())
    }
}

/// A finished node with its size: how many nodes it holds and roughly how many bytes.
struct Sized {
    node: Node,
    count: u64,
    bytes: u64,
}

/// Parses every YAML document of `text` in one pass, calling `on_doc` with the root of each
/// non-empty document (roots as `roots` allows). Stops at the first syntax error.
///
/// The tokenizer is the vendored saphyr-parser, patched to read quoted scalars as go-yaml v2
/// does (`yaml_parser_scan_flow_scalar` in go.yaml.in/yaml/v2 `scannerc.go`, v2.4.4, the
/// version operator-registry's `NewYAMLOrJSONDecoder` reaches through sigs.k8s.io/yaml v1.6.0):
/// a continuation line may start left of its key, as in CRDs generated by older controller-gen.
pub fn parse_with(
    text: &str,
    roots: Roots,
    mut on_doc: impl FnMut(Node),
) -> Result<(), ParseError> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Sized> = HashMap::new();
    let mut root: Option<Node> = None;
    let mut budget = AliasBudget::default();
    for ev in StrParser::new(text) {
        let (event, span) = ev.map_err(|e| ParseError {
            line: e.marker().line() as u32,
            column: e.marker().col() as u32 + 1,
            message: e.info().to_string(),
        })?;
        let pos = pos_of(&span);
        let done: Sized = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => continue,
            Event::DocumentStart(_) => {
                root = None;
                anchors.clear();
                budget = AliasBudget::default();
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
                Some(a) => {
                    budget.expand(a.count, a.bytes, pos)?;
                    Sized {
                        node: Node::new(pos, a.node.value.clone()),
                        count: a.count,
                        bytes: a.bytes,
                    }
                }
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
                let bytes = NODE_COST + text.len() as u64;
                let value = match (core_suffix, is_plain) {
                    (Some("str"), _) | (Some("binary"), _) => Value::Str(text.into_owned()),
                    (_, false) => Value::Str(text.into_owned()),
                    (_, true) => resolve_plain(&text).map_err(|m| ParseError::at(pos, m))?,
                };
                budget.decodes += 1;
                let done = Sized {
                    node: Node::new(pos, value),
                    count: 1,
                    bytes,
                };
                if anchor != 0 {
                    anchors.insert(anchor, done.clone_sized());
                }
                done
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= super::json::MAX_DEPTH {
                    return Err(ParseError::at(
                        pos,
                        format!("nesting is deeper than {} levels", super::json::MAX_DEPTH),
                    ));
                }
                let is_seq = matches!(event, Event::SequenceStart(..));
                if is_seq && stack.is_empty() && roots == Roots::Objects {
                    // The document is not an object: the caller rejects it by its kind, and
                    // the file ends here, as opm's decoder stops at the first document it
                    // cannot decode. Nothing of the list is read, however long it is.
                    on_doc(Node::new(pos, Value::Seq(Vec::new())));
                    return Ok(());
                }
                stack.push(if is_seq {
                    Frame::Seq {
                        pos,
                        anchor,
                        items: Vec::new(),
                        count: 1,
                        bytes: NODE_COST,
                    }
                } else {
                    Frame::Map {
                        pos,
                        anchor,
                        entries: Vec::new(),
                        merges: Vec::new(),
                        key: None,
                        count: 1,
                        bytes: NODE_COST,
                    }
                });
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq {
                    pos,
                    anchor,
                    items,
                    count,
                    bytes,
                }) => {
                    budget.decodes += 1;
                    let done = Sized {
                        node: Node::new(pos, Value::Seq(items)),
                        count,
                        bytes,
                    };
                    if anchor != 0 {
                        anchors.insert(anchor, done.clone_sized());
                    }
                    done
                }
                _ => return Err(ParseError::at(pos, "unbalanced sequence end")),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map {
                    pos,
                    anchor,
                    mut entries,
                    merges,
                    count,
                    bytes,
                    ..
                }) => {
                    apply_merges(&mut entries, merges, pos)?;
                    budget.decodes += 1;
                    let done = Sized {
                        node: Node::new(pos, Value::Map(entries)),
                        count,
                        bytes,
                    };
                    if anchor != 0 {
                        anchors.insert(anchor, done.clone_sized());
                    }
                    done
                }
                _ => return Err(ParseError::at(pos, "unbalanced mapping end")),
            },
        };
        // Attach the finished node to its parent, or make it the document root.
        let Sized {
            node: done,
            count,
            bytes,
        } = done;
        match stack.last_mut() {
            None => root = Some(done),
            Some(Frame::Seq {
                items,
                count: c,
                bytes: b,
                ..
            }) => {
                *c = c.saturating_add(count);
                *b = b.saturating_add(bytes);
                items.push(done);
            }
            Some(Frame::Map {
                entries,
                merges,
                key,
                count: c,
                bytes: b,
                ..
            }) => {
                *c = c.saturating_add(count);
                *b = b.saturating_add(bytes);
                match key.take() {
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
                }
            }
        }
    }
    Ok(())
}

impl Sized {
    fn clone_sized(&self) -> Sized {
        Sized {
            node: self.node.clone(),
            count: self.count,
            bytes: self.bytes,
        }
    }
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

    /// go-yaml accepts quoted scalars whose continuation lines sit at the key's indentation
    /// (saphyr-parser alone refuses them); the folded value and the positions are unaffected.
    #[test]
    fn under_indented_quoted_scalars_parse_like_go_yaml() {
        let text = "a:\n  d: 'it''s\n  folded'\n  e: \"x\\\n  y\n  z\"\n  f: 1\n";
        let mut docs = Vec::new();
        parse_documents(text, |n| docs.push(n)).expect("parses");
        assert_eq!(docs.len(), 1);
        let a = &docs[0].sorted_entries()[0].value;
        let e = a.sorted_entries();
        assert_eq!(e[0].value.as_str(), Some("it's folded"));
        assert_eq!(e[1].value.as_str(), Some("xy z"));
        assert_eq!((e[2].key_pos.line, e[2].key_pos.col), (7, 3));
    }

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

    /// Billion laughs: nested anchors whose expansion grows tenfold per level end with go-yaml's
    /// "excessive aliasing" at the alias where the ratio is exceeded, before anything large is
    /// built.
    #[test]
    fn alias_expansion_is_bounded_like_go_yaml() {
        let mut text = String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        let names: Vec<char> = ('b'..='z').collect();
        for w in names.windows(2).take(20) {
            let (prev, cur) = (
                if w[0] == 'b' {
                    'a'
                } else {
                    (w[0] as u8 - 1) as char
                },
                w[0],
            );
            let refs = vec![format!("*{prev}"); 10].join(",");
            text.push_str(&format!("{cur}: &{cur} [{refs}]\n"));
        }
        let err = parse_objects(&text, |_| {}).expect_err("refused");
        assert!(
            err.message.contains("excessive aliasing"),
            "{}",
            err.message
        );
        assert!(err.line >= 2 && err.column > 0, "{err}");
        // A few aliases in a small document are fine, as in go-yaml.
        let d = docs("a: &a {x: [1, 2]}\nb: *a\nc: *a\nd: [*a, *a]\n");
        assert_eq!(d[0].to_json().matches(r#"{"x":[1,2]}"#).count(), 5);
    }

    /// go-yaml counts nodes; a few anchored large strings aliased many times pass that rule
    /// but would be copied here, so expanded bytes are capped too.
    #[test]
    fn aliased_bytes_are_capped() {
        let big = "x".repeat(1 << 20);
        let mut text = format!("a: &a {big}\nb: [");
        text.push_str(&vec!["*a"; 200].join(","));
        text.push_str("]\n");
        let err = parse_objects(&text, |_| {}).expect_err("refused");
        assert!(err.message.contains("more than 64 MiB"), "{}", err.message);
        assert_eq!(err.line, 2);
    }

    /// A bare carriage return inside an under-indented quoted scalar is a line break, folded
    /// as go-yaml folds it (`read_line` turns `\r`, `\r\n` and `\n` into one `\n`).
    #[test]
    fn bare_carriage_returns_in_under_indented_scalars() {
        let d = docs("a:\n  b: \"x\n  y\rz\n  w\"\n  c: 'p\r\nq\rr'\n");
        assert_eq!(d[0].to_json(), r#"{"a":{"b":"x y z w","c":"p q r"}}"#);
    }

    /// Continuation lines of quoted scalars are not checked against the block's indentation,
    /// as in go-yaml v2's `yaml_parser_scan_flow_scalar`: at column 0, behind tabs, thousands
    /// in one document (the file is read once; they used to be repaired one re-parse at a
    /// time, and a budget refused the 501 of a real 740 KB CRD). An unterminated quote is
    /// still an error with a line.
    #[test]
    fn under_indented_quoted_scalars_need_no_repair() {
        let d = docs("a:\n  b:\n    c: \"x\ny\n\n\tz\"\n    d: 'p\n  q'\n  e: 1\n");
        assert_eq!(
            d[0].to_json(),
            r#"{"a":{"b":{"c":"x y\nz","d":"p q"},"e":1}}"#
        );
        let err = parse_documents("a:\n  b: \"x\ny\n", |_| {}).expect_err("unterminated");
        assert!(err.line > 0, "{err}");
        let mut text = String::from("a:\n");
        for i in 0..4000 {
            text.push_str(&format!("  k{i}: \"x\ny\"\n"));
        }
        let d = docs(&text);
        let e = d[0].sorted_entries()[0].value.sorted_entries();
        assert_eq!(e.len(), 4000);
        assert!(e.iter().all(|e| e.value.as_str() == Some("x y")));
        // A document indicator at column 0 inside a quoted scalar ends it, as in go-yaml.
        let err = parse_documents("a: \"x\n---\ny\"\n", |_| {}).expect_err("indicator");
        assert!(err.message.contains("document indicator"), "{err}");
    }

    /// Documents that must be objects: a root list is handed over empty (its kind is all the
    /// caller needs) and ends the text; scalars and objects before it come as they are.
    #[test]
    fn root_lists_end_object_documents() {
        let mut v = Vec::new();
        parse_objects("a: [1, 2]\n---\n[1, [2, {a: *x}], 3]\n---\nb: 1\n", |n| {
            v.push(n)
        })
        .expect("nothing of the list is read, not even its unknown anchor");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].to_json(), r#"{"a":[1,2]}"#);
        assert_eq!(
            (v[1].value.clone(), v[1].pos),
            (Value::Seq(Vec::new()), Pos::new(3, 1))
        );
        let mut v = Vec::new();
        parse_objects("x: 1\n---\n- 1\n- 2\n", |n| v.push(n)).expect("parses");
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[1].value.clone(), v[1].pos),
            (Value::Seq(Vec::new()), Pos::new(3, 1))
        );
        // A syntax error before the list is still one.
        parse_objects("a: [\n---\n[1]\n", |_| {}).expect_err("unclosed");
        // The same text with any root kept builds the lists.
        assert_eq!(docs("[1, [2]]\n")[0].to_json(), "[1,[2]]");
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
