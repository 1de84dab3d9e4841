//! JSON streams to positioned [`Node`] trees, decoding values the way opm does.
//!
//! opm reads a catalog file whose first non-blank byte is `{` with k8s' `YAMLOrJSONDecoder`,
//! which hands it to Go's `json.Decoder`: the file is a stream of JSON values separated by
//! optional whitespace (no commas), each decoded into `interface{}`. This module reproduces
//! those semantics:
//!
//! - values are tokenized greedily and need no separator (`{"a":1}{"b":2}`, `truefalse`, `1-2`
//!   are two values each); non-object values are handed over too, the caller rejects them;
//! - whitespace is only space, tab, CR and LF (a UTF-8 byte-order mark at the very start of the
//!   input is skipped, since the loader treats it as leading blank space);
//! - numbers follow the JSON grammar (no `+1`, `.5`, `1.`, `0x1`, `01`) and become `f64`, rounded
//!   correctly like `strconv.ParseFloat`; a number too large for `f64` is an error (Go:
//!   "cannot unmarshal number 1e400 into Go value of type float64"), one too small becomes 0;
//! - strings accept exactly the JSON escapes; `\u` surrogate pairs are combined and any other
//!   surrogate escape becomes U+FFFD; raw control characters (< 0x20) are errors; with
//!   [`parse_stream_bytes`], every byte of an invalid UTF-8 sequence inside a string becomes one
//!   U+FFFD (like Go's `utf8.DecodeRune` loop) and invalid UTF-8 elsewhere is a syntax error;
//! - duplicate object keys are all kept, in order (the last one wins later, see
//!   [`Node::sorted_entries`]);
//! - containers may nest [`MAX_DEPTH`] levels deep, as in Go's scanner; the parser keeps its own
//!   stack on the heap, so deep input cannot overflow the thread stack while parsing.
//!
//! Positions are 1-based lines and columns counted in characters (for invalid UTF-8, in bytes
//! that are not UTF-8 continuation bytes). Columns are computed only where a node or error needs
//! one, incrementally from the previous one on the same line, so the work stays linear even for
//! a whole catalog on a single line.

use super::ParseError;
use super::node::{Entry, Node, Pos, Value};

/// The deepest container nesting accepted, as in Go's `encoding/json` scanner (`maxNestingDepth`):
/// the 10001st nested `[` or `{` is an error.
pub const MAX_DEPTH: usize = 10_000;

/// Parses every JSON value of `text`, calling `on_doc` with each top-level value in order.
/// Stops at the first syntax error; values before it have already been handed over.
pub fn parse_stream(text: &str, on_doc: impl FnMut(Node)) -> Result<(), ParseError> {
    Parser::new(text.as_bytes(), Some(text)).run(on_doc)
}

/// Like [`parse_stream`] for files whose values must be objects (catalog blobs, manifests): a
/// top-level array is checked for syntax but not built, and handed over empty, so a huge
/// array costs no memory before the caller rejects it by its kind.
pub fn parse_object_stream(text: &str, on_doc: impl FnMut(Node)) -> Result<(), ParseError> {
    let mut p = Parser::new(text.as_bytes(), Some(text));
    p.objects_only = true;
    p.run(on_doc)
}

/// Like [`parse_stream`] for raw file bytes that may not be valid UTF-8: invalid bytes inside
/// strings become U+FFFD, one per byte, as Go's decoder does; anywhere else they are an error.
pub fn parse_stream_bytes(bytes: &[u8], on_doc: impl FnMut(Node)) -> Result<(), ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_stream(text, on_doc),
        Err(_) => Parser::new(bytes, None).run(on_doc),
    }
}

/// An open container while parsing.
enum Frame {
    Seq {
        pos: Pos,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        entries: Vec<Entry>,
        /// The key whose value is being parsed.
        key: String,
        key_pos: Pos,
    },
}

impl Frame {
    fn into_node(self) -> Node {
        match self {
            Frame::Seq { pos, items } => Node::new(pos, Value::Seq(items)),
            Frame::Map { pos, entries, .. } => Node::new(pos, Value::Map(entries)),
        }
    }
}

struct Parser<'a> {
    src: &'a [u8],
    /// `src` as text when it is known to be valid UTF-8.
    text: Option<&'a str>,
    /// The next byte to read.
    i: usize,
    /// The current 1-based line.
    line: u32,
    /// Where the current line starts.
    line_start: usize,
    /// A byte offset on the current line whose column is `col` (the last one computed).
    col_off: usize,
    col: u32,
    /// Top-level arrays are not built (see [`parse_object_stream`]).
    objects_only: bool,
    /// Inside such an array: values are parsed and dropped.
    discard: bool,
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Characters in `bytes`: bytes that are not UTF-8 continuation bytes (a loop that vectorizes).
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// The first index at or after `i` holding `"`, `\` or a control character (< 0x20), or the
/// length of `s`. Looks at eight bytes at a time.
fn scan_plain(s: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const QUOTES: u64 = LO * b'"' as u64;
    const BACKSLASHES: u64 = LO * b'\\' as u64;
    while let Some(chunk) = s.get(i..).and_then(|r| r.first_chunk::<8>()) {
        let w = u64::from_le_bytes(*chunk);
        let q = w ^ QUOTES;
        let b = w ^ BACKSLASHES;
        // Non-zero iff some byte of `q` or `b` is zero, or some byte of `w` is below 0x20.
        let hit = (q.wrapping_sub(LO) & !q)
            | (b.wrapping_sub(LO) & !b)
            | (w.wrapping_sub(LO * 0x20) & !w);
        if hit & HI != 0 {
            break;
        }
        i += 8;
    }
    while let Some(&c) = s.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

/// Appends `bytes` replacing each byte of an invalid UTF-8 sequence with U+FFFD, as Go's
/// `utf8.DecodeRune` loop does (each maximal invalid subpart is replaced byte by byte).
fn push_lossy(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for _ in chunk.invalid() {
            out.push('\u{FFFD}');
        }
    }
}

fn hex_val(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some(u32::from(b - b'0')),
        b'a'..=b'f' => Some(u32::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u32::from(b - b'A' + 10)),
        _ => None,
    }
}

/// A message-friendly rendering of a long number.
fn shorten(s: &str) -> String {
    const MAX: usize = 40;
    if s.len() <= MAX {
        s.to_string()
    } else {
        format!("{}...", &s[..MAX])
    }
}

impl<'a> Parser<'a> {
    fn new(src: &'a [u8], text: Option<&'a str>) -> Self {
        // Skip a byte-order mark: the loader counts it as leading blank space.
        let start = if src.starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        Parser {
            src,
            text,
            i: start,
            line: 1,
            line_start: start,
            col_off: start,
            col: 1,
            objects_only: false,
            discard: false,
        }
    }

    fn run(mut self, mut on_doc: impl FnMut(Node)) -> Result<(), ParseError> {
        loop {
            self.skip_ws();
            if self.i >= self.src.len() {
                return Ok(());
            }
            on_doc(self.parse_value()?);
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(&b) = self.src.get(self.i) {
            match b {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\n' => {
                    self.i += 1;
                    self.line = self.line.saturating_add(1);
                    self.line_start = self.i;
                    self.col_off = self.i;
                    self.col = 1;
                }
                _ => break,
            }
        }
    }

    /// The position of byte offset `off` on the current line.
    fn pos_at(&mut self, off: usize) -> Pos {
        if off < self.col_off {
            self.col_off = self.line_start;
            self.col = 1;
        }
        let off = off.min(self.src.len());
        let n = count_chars(&self.src[self.col_off..off]);
        self.col = self.col.saturating_add(saturate(n));
        self.col_off = off;
        Pos::new(self.line, self.col)
    }

    /// The character at `off` for messages: `'x'` (escaped if not printable) or `byte 0xNN`.
    fn describe(&self, off: usize) -> String {
        let rest = self.src.get(off..).unwrap_or_default();
        let head = &rest[..rest.len().min(4)];
        match head.utf8_chunks().next() {
            None => "end of input".to_string(),
            Some(chunk) => match chunk.valid().chars().next() {
                Some(c) => format!("'{}'", c.escape_debug()),
                None => format!("byte 0x{:02X}", head[0]),
            },
        }
    }

    fn error(&mut self, off: usize, message: impl Into<String>) -> ParseError {
        let pos = self.pos_at(off);
        ParseError::at(pos, message)
    }

    /// "expected X, found 'c'" at `off`, or "unexpected end of input, expected X" there.
    fn unexpected(&mut self, off: usize, expected: &str) -> ParseError {
        let message = if off >= self.src.len() {
            format!("unexpected end of input, expected {expected}")
        } else {
            format!("expected {expected}, found {}", self.describe(off))
        };
        self.error(off, message)
    }

    /// Parses one value starting at `self.i` (whitespace already skipped). Iterative: open
    /// containers live in `stack`, so nesting depth costs heap, not thread stack.
    fn parse_value(&mut self) -> Result<Node, ParseError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            let start = self.i;
            let pos = self.pos_at(start);
            let mut node = match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    if stack.is_empty() {
                        self.discard = self.objects_only && open == b'[';
                    }
                    if stack.len() >= MAX_DEPTH {
                        return Err(self.error(
                            start,
                            format!("exceeded maximum nesting depth of {MAX_DEPTH}"),
                        ));
                    }
                    self.i += 1;
                    self.skip_ws();
                    match (open, self.peek()) {
                        (b'{', Some(b'}')) => {
                            self.i += 1;
                            Node::new(pos, Value::Map(Vec::new()))
                        }
                        (b'{', Some(b'"')) => {
                            let (key, key_pos) = self.parse_key()?;
                            stack.push(Frame::Map {
                                pos,
                                entries: Vec::new(),
                                key,
                                key_pos,
                            });
                            continue;
                        }
                        (b'{', _) => {
                            return Err(self.unexpected(self.i, "string key or '}' in object"));
                        }
                        (_, Some(b']')) => {
                            self.i += 1;
                            Node::new(pos, Value::Seq(Vec::new()))
                        }
                        _ => {
                            stack.push(Frame::Seq {
                                pos,
                                items: Vec::new(),
                            });
                            continue;
                        }
                    }
                }
                Some(b'"') => Node::new(pos, Value::Str(self.parse_string()?)),
                Some(b't') => {
                    self.parse_literal("true")?;
                    Node::new(pos, Value::Bool(true))
                }
                Some(b'f') => {
                    self.parse_literal("false")?;
                    Node::new(pos, Value::Bool(false))
                }
                Some(b'n') => {
                    self.parse_literal("null")?;
                    Node::new(pos, Value::Null)
                }
                Some(b'-' | b'0'..=b'9') => Node::new(pos, Value::Number(self.parse_number(pos)?)),
                _ => return Err(self.unexpected(start, "a value")),
            };
            // Hand the finished value to its container, closing containers that end here.
            loop {
                let Some(mut frame) = stack.pop() else {
                    return Ok(node);
                };
                self.skip_ws();
                let c = self.peek();
                let closed = match &mut frame {
                    Frame::Seq { items, .. } => {
                        if !self.discard {
                            items.push(node);
                        }
                        match c {
                            Some(b',') => false,
                            Some(b']') => true,
                            _ => {
                                return Err(
                                    self.unexpected(self.i, "',' or ']' after array element")
                                );
                            }
                        }
                    }
                    Frame::Map {
                        entries,
                        key,
                        key_pos,
                        ..
                    } => {
                        let key = std::mem::take(key);
                        if !self.discard {
                            entries.push(Entry {
                                key,
                                key_pos: *key_pos,
                                value: node,
                            });
                        }
                        match c {
                            Some(b',') => false,
                            Some(b'}') => true,
                            _ => {
                                return Err(
                                    self.unexpected(self.i, "',' or '}' after object value")
                                );
                            }
                        }
                    }
                };
                self.i += 1;
                if closed {
                    node = frame.into_node();
                    continue;
                }
                // After a ',': the next element, or the next key of an object.
                self.skip_ws();
                match &mut frame {
                    Frame::Seq { .. } => {
                        if self.peek() == Some(b']') {
                            return Err(self.unexpected(self.i, "a value after ',' in array"));
                        }
                    }
                    Frame::Map { key, key_pos, .. } => {
                        if self.peek() != Some(b'"') {
                            return Err(self.unexpected(self.i, "string key after ',' in object"));
                        }
                        (*key, *key_pos) = self.parse_key()?;
                    }
                }
                stack.push(frame);
                break;
            }
        }
    }

    /// Parses `"key"` and the `:` after it, leaving `self.i` at the value.
    fn parse_key(&mut self) -> Result<(String, Pos), ParseError> {
        let key_pos = self.pos_at(self.i);
        let key = self.parse_string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected(self.i, "':' after object key"));
        }
        self.i += 1;
        self.skip_ws();
        Ok((key, key_pos))
    }

    /// Checks the rest of `word` after its first byte (already matched).
    fn parse_literal(&mut self, word: &str) -> Result<(), ParseError> {
        for (k, &want) in word.as_bytes().iter().enumerate().skip(1) {
            let off = self.i + k;
            match self.src.get(off) {
                Some(&b) if b == want => {}
                None => {
                    return Err(
                        self.error(off, format!("unexpected end of input in literal '{word}'"))
                    );
                }
                Some(_) => {
                    let found = self.describe(off);
                    return Err(self.error(
                        off,
                        format!(
                            "invalid literal, expected '{}' of '{word}', found {found}",
                            want as char
                        ),
                    ));
                }
            }
        }
        self.i += word.len();
        Ok(())
    }

    /// Parses a number per the JSON grammar and converts it like `strconv.ParseFloat(s, 64)`.
    fn parse_number(&mut self, pos: Pos) -> Result<f64, ParseError> {
        let s = self.src;
        let start = self.i;
        let is_digit = |i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
        let mut i = start;
        let negative = s.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => {
                i += 1;
                if is_digit(i) {
                    return Err(self.error(i, "invalid number: leading zeros are not allowed"));
                }
            }
            Some(b'1'..=b'9') => {
                while is_digit(i) {
                    i += 1;
                }
            }
            _ => return Err(self.unexpected(i, "digit after '-' in number")),
        }
        let int_end = i;
        if s.get(i) == Some(&b'.') {
            i += 1;
            if !is_digit(i) {
                return Err(self.unexpected(i, "digit after decimal point in number"));
            }
            while is_digit(i) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = s.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = s.get(i) {
                i += 1;
            }
            if !is_digit(i) {
                return Err(self.unexpected(i, "digit in exponent of number"));
            }
            while is_digit(i) {
                i += 1;
            }
        }
        self.i = i;
        let digits_start = start + usize::from(negative);
        // Integers of up to 15 digits are exact in f64: skip the general conversion.
        if int_end == i && int_end - digits_start <= 15 {
            let v = s[digits_start..int_end]
                .iter()
                .fold(0u64, |v, &d| v * 10 + u64::from(d - b'0'));
            let f = v as f64;
            return Ok(if negative { -f } else { f });
        }
        // The bytes are ASCII by construction; Rust's parse rounds correctly, like Go's.
        let text = std::str::from_utf8(&s[start..i]).unwrap_or_default();
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(f),
            _ => Err(ParseError::at(
                pos,
                format!("number {} is out of range of float64", shorten(text)),
            )),
        }
    }

    /// Parses a string starting at the opening quote at `self.i`.
    fn parse_string(&mut self) -> Result<String, ParseError> {
        let start = self.i + 1;
        let mut out = String::new();
        // The start of the pending unescaped run.
        let mut run = start;
        let mut i = start;
        loop {
            i = scan_plain(self.src, i);
            match self.src.get(i) {
                Some(b'"') => {
                    self.push_run(&mut out, run, i);
                    self.i = i + 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.push_run(&mut out, run, i);
                    i = self.parse_escape(i, &mut out)?;
                    run = i;
                }
                Some(&c) => {
                    return Err(self.error(
                        i,
                        format!("invalid control character U+{c:04X} in string (must be escaped)"),
                    ));
                }
                None => return Err(self.error(i, "unexpected end of input in string")),
            }
        }
    }

    /// Appends the unescaped bytes `a..b` (both ends at ASCII bytes or the string start).
    fn push_run(&self, out: &mut String, a: usize, b: usize) {
        match self.text.and_then(|t| t.get(a..b)) {
            Some(s) => out.push_str(s),
            None => push_lossy(out, &self.src[a..b]),
        }
    }

    /// Four hex digits at `off`, if they are there.
    fn hex4(&self, off: usize) -> Option<u32> {
        let digits = self.src.get(off..off + 4)?;
        digits
            .iter()
            .try_fold(0u32, |v, &b| Some(v << 4 | hex_val(b)?))
    }

    /// Decodes the escape whose backslash is at `i` into `out`; returns the offset after it.
    fn parse_escape(&mut self, i: usize, out: &mut String) -> Result<usize, ParseError> {
        let c = match self.src.get(i + 1) {
            None => return Err(self.error(i + 1, "unexpected end of input in string")),
            Some(&c) => c,
        };
        let decoded = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let Some(r) = self.hex4(i + 2) else {
                    // Point at the first character that is not a hex digit.
                    let mut off = i + 2;
                    while self.src.get(off).copied().and_then(hex_val).is_some() {
                        off += 1;
                    }
                    if off >= self.src.len() {
                        return Err(self.error(off, "unexpected end of input in string"));
                    }
                    let found = self.describe(off);
                    return Err(self.error(
                        off,
                        format!(
                            "invalid '\\u' escape in string, expected 4 hex digits, found {found}"
                        ),
                    ));
                };
                if (0xD800..0xE000).contains(&r) {
                    // A high surrogate followed by an escaped low one is a pair; any other
                    // surrogate becomes U+FFFD, and what follows it is decoded on its own.
                    if r < 0xDC00
                        && self.src.get(i + 6) == Some(&b'\\')
                        && self.src.get(i + 7) == Some(&b'u')
                        && let Some(r2) = self.hex4(i + 8)
                        && (0xDC00..0xE000).contains(&r2)
                    {
                        let cp = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                        out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        return Ok(i + 12);
                    }
                    out.push('\u{FFFD}');
                } else {
                    out.push(char::from_u32(r).unwrap_or('\u{FFFD}'));
                }
                return Ok(i + 6);
            }
            _ => {
                let found = self.describe(i + 1);
                let message = match found.strip_prefix('\'') {
                    Some(quoted) => format!("invalid escape '\\{quoted} in string"),
                    None => format!("invalid escape in string: '\\' followed by {found}"),
                };
                return Err(self.error(i, message));
            }
        };
        out.push(decoded);
        Ok(i + 2)
    }
}

#[cfg(test)]
mod tests {

    /// Object streams: a top-level array is checked but not built; arrays inside objects are.
    #[test]
    fn object_streams_do_not_build_root_arrays() {
        let mut v = Vec::new();
        parse_object_stream(r#"[1,[2,{"a":3}]] {"b":[4]} "s""#, |n| v.push(n)).expect("parses");
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].value, Value::Seq(Vec::new()));
        assert_eq!(v[1].to_json(), r#"{"b":[4]}"#);
        assert_eq!(v[2].as_str(), Some("s"));
        let e = parse_object_stream("[1,,2]", |_| {}).expect_err("syntax still checked");
        assert_eq!((e.line, e.column), (1, 4));
    }
    use super::*;
    use proptest::prelude::*;

    fn docs(text: &str) -> Vec<Node> {
        let mut v = Vec::new();
        parse_stream(text, |n| v.push(n)).expect("parses");
        v
    }

    fn one(text: &str) -> Node {
        let mut d = docs(text);
        assert_eq!(d.len(), 1, "{text:?}");
        d.remove(0)
    }

    fn err(text: &str) -> ParseError {
        parse_stream(text, |_| {}).expect_err(text)
    }

    fn string_of(json: &str) -> String {
        match one(json).value {
            Value::Str(s) => s,
            v => panic!("not a string: {v:?}"),
        }
    }

    fn number_of(json: &str) -> f64 {
        match one(json).value {
            Value::Number(f) => f,
            v => panic!("not a number: {v:?}"),
        }
    }

    /// The node as a serde_json value, every number as f64 and the last duplicate key winning.
    fn to_serde(n: &Node) -> serde_json::Value {
        use serde_json::Value as J;
        match &n.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(f) => J::Number(serde_json::Number::from_f64(*f).expect("finite")),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(to_serde).collect()),
            Value::Map(entries) => {
                let mut m = serde_json::Map::new();
                for e in entries {
                    m.insert(e.key.clone(), to_serde(&e.value));
                }
                J::Object(m)
            }
        }
    }

    /// A serde_json value with every number turned into f64.
    fn normalize(v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value as J;
        match v {
            J::Number(n) => J::Number(serde_json::Number::from_f64(n.as_f64().unwrap()).unwrap()),
            J::Array(a) => J::Array(a.into_iter().map(normalize).collect()),
            J::Object(m) => J::Object(m.into_iter().map(|(k, v)| (k, normalize(v))).collect()),
            v => v,
        }
    }

    /// serde_json's compact output with Go's escaping of U+2028/U+2029 (serde_json's `Map` is
    /// sorted by key, like Go's map encoding).
    fn serde_go_json(v: &serde_json::Value) -> String {
        serde_json::to_string(v)
            .unwrap()
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029")
    }

    #[test]
    fn concatenated_values_with_and_without_whitespace() {
        let d = docs("{\"a\":1}\n{\"b\":2}{\"c\":3}");
        let got: Vec<String> = d.iter().map(Node::to_json).collect();
        assert_eq!(got, [r#"{"a":1}"#, r#"{"b":2}"#, r#"{"c":3}"#]);
        assert_eq!(d[1].pos, Pos::new(2, 1));
        assert_eq!(d[2].pos, Pos::new(2, 8));

        let d = docs(" \t\r\n {  \"a\" :\t[ 1 ,2\r\n, {} , [ ] ] }\r\n\r\n  {}  \n");
        let got: Vec<String> = d.iter().map(Node::to_json).collect();
        assert_eq!(got, [r#"{"a":[1,2,{},[]]}"#, "{}"]);
        assert_eq!(d[0].pos, Pos::new(2, 2));
        assert_eq!(d[1].pos, Pos::new(5, 3));

        assert!(docs("").is_empty());
        assert!(docs(" \n\t\r\n").is_empty());
    }

    #[test]
    fn top_level_values_are_tokenized_greedily_like_go() {
        let d = docs(r#"1 "x"[1]true null truefalse 1-2 "a""b" {}"#);
        let got: Vec<String> = d.iter().map(Node::to_json).collect();
        assert_eq!(
            got,
            [
                "1", r#""x""#, "[1]", "true", "null", "true", "false", "1", "-2", r#""a""#,
                r#""b""#, "{}"
            ]
        );
        assert_eq!(d[1].kind(), "a string");
        // Values before an error are handed over.
        let mut seen = Vec::new();
        let e = parse_stream("{\"a\":1}\n{\"b\" 2}", |n| seen.push(n.to_json())).unwrap_err();
        assert_eq!(seen, [r#"{"a":1}"#]);
        assert_eq!((e.line, e.column), (2, 6));
        assert_eq!(e.message, "expected ':' after object key, found '2'");
    }

    #[test]
    fn positions_of_nodes_and_keys() {
        let text = "{\"schema\": \"olm.package\",\n  \"é\": [true,\n    {\"ü\": null}, -1.5e3],\n\"k\"\n:\n\"v\"}";
        let n = one(text);
        assert_eq!(n.pos, Pos::new(1, 1));
        let Value::Map(entries) = &n.value else {
            panic!()
        };
        assert_eq!(entries[0].key, "schema");
        assert_eq!(entries[0].key_pos, Pos::new(1, 2));
        assert_eq!(entries[0].value.pos, Pos::new(1, 12));
        assert_eq!(entries[1].key, "é");
        assert_eq!(entries[1].key_pos, Pos::new(2, 3));
        assert_eq!(entries[1].value.pos, Pos::new(2, 8));
        let Value::Seq(items) = &entries[1].value.value else {
            panic!()
        };
        assert_eq!(items[0].pos, Pos::new(2, 9));
        assert_eq!(items[1].pos, Pos::new(3, 5));
        let Value::Map(inner) = &items[1].value else {
            panic!()
        };
        assert_eq!(inner[0].key_pos, Pos::new(3, 6));
        assert_eq!(inner[0].value.pos, Pos::new(3, 11));
        assert_eq!(items[2].pos, Pos::new(3, 18));
        assert_eq!(items[2].value, Value::Number(-1500.0));
        assert_eq!(entries[2].key_pos, Pos::new(4, 1));
        assert_eq!(entries[2].value.pos, Pos::new(6, 1));
        // Columns count characters, also after multi-byte ones on the same line.
        let n = one("{\"😀😀\":\"ééé\",\"x\":1}");
        let Value::Map(entries) = &n.value else {
            panic!()
        };
        assert_eq!(entries[0].value.pos, Pos::new(1, 7));
        assert_eq!(entries[1].key_pos, Pos::new(1, 13));
        assert_eq!(entries[1].value.pos, Pos::new(1, 17));
    }

    #[test]
    fn duplicate_keys_are_kept_in_order() {
        let n = one(r#"{"b":1,"a":2,"b":3}"#);
        let Value::Map(entries) = &n.value else {
            panic!()
        };
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["b", "a", "b"]);
        assert_eq!(n.to_json(), r#"{"a":2,"b":3}"#);
    }

    #[test]
    fn byte_order_mark_at_start_is_skipped() {
        let d = docs("\u{feff}{\"a\":1}\n{}");
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].pos, Pos::new(1, 1));
        let e = err("{}\u{feff}");
        assert_eq!((e.line, e.column), (1, 3));
        assert_eq!(e.message, "expected a value, found '\\u{feff}'");
    }

    #[test]
    fn all_escapes_and_surrogates() {
        assert_eq!(
            string_of(r#""q\" b\\ s\/ \b\f\n\r\t \u0041\u00e9\u20AC\ud83d\ude00 \u0000""#),
            "q\" b\\ s/ \u{8}\u{c}\n\r\t Aé€😀 \u{0}"
        );
        // Lone or mismatched surrogates become U+FFFD; what follows is decoded on its own.
        assert_eq!(string_of(r#""\ud83d""#), "\u{FFFD}");
        assert_eq!(string_of(r#""\ude00x""#), "\u{FFFD}x");
        assert_eq!(string_of(r#""\ud83dx""#), "\u{FFFD}x");
        assert_eq!(string_of(r#""\ud83d\u0041""#), "\u{FFFD}A");
        assert_eq!(string_of(r#""\ud83d\ud83d\ude00""#), "\u{FFFD}😀");
        assert_eq!(string_of(r#""\ude00\ud83d""#), "\u{FFFD}\u{FFFD}");
        assert_eq!(string_of(r#""\udbff\udfff""#), "\u{10FFFF}");
        // Raw non-ASCII passes through untouched.
        assert_eq!(
            string_of("\"h\u{e9}llo \u{2028} 😀\""),
            "h\u{e9}llo \u{2028} 😀"
        );
        assert_eq!(string_of(r#""""#), "");
    }

    #[test]
    fn string_scanning_finds_specials_at_every_offset() {
        for len in 0..40 {
            let body = "a".repeat(len);
            assert_eq!(string_of(&format!("\"{body}\"")), body);
            assert_eq!(
                string_of(&format!("\"{body}\\n{body}\"")),
                format!("{body}\n{body}")
            );
            let e = err(&format!("[\"{body}\u{1f}\"]"));
            assert_eq!((e.line, e.column), (1, 3 + len as u32), "{len}");
            let e = err(&format!("\"{body}"));
            assert_eq!(e.message, "unexpected end of input in string");
            assert_eq!((e.line, e.column), (1, 2 + len as u32), "{len}");
        }
        // Bytes >= 0x80 in the same word as a special byte.
        assert_eq!(string_of("\"éééé\\\"ü\""), "éééé\"ü");
    }

    #[test]
    fn invalid_utf8_in_strings_becomes_replacement_characters() {
        let mut d = Vec::new();
        parse_stream_bytes(
            b"{\"a\xff\":\"x\xe2\x82y\xed\xa0\x80\xf0\x9f\x98\x80\"}",
            |n| d.push(n),
        )
        .unwrap();
        assert_eq!(d.len(), 1);
        let Value::Map(entries) = &d[0].value else {
            panic!()
        };
        assert_eq!(entries[0].key, "a\u{FFFD}");
        assert_eq!(
            entries[0].value.as_str(),
            Some("x\u{FFFD}\u{FFFD}y\u{FFFD}\u{FFFD}\u{FFFD}😀")
        );
        // Escapes still work on the byte path, and valid input takes the text path.
        let mut d = Vec::new();
        parse_stream_bytes(b"[\"\\u00e9\xff\"] {\"\xc3\xa9\":1}", |n| {
            d.push(n.to_json())
        })
        .unwrap();
        assert_eq!(d, ["[\"é\u{FFFD}\"]", "{\"é\":1}"]);
        // Outside strings, invalid bytes are syntax errors.
        let e = parse_stream_bytes(b"{\"a\":1}\n \xff", |_| {}).unwrap_err();
        assert_eq!((e.line, e.column), (2, 2));
        assert_eq!(e.message, "expected a value, found byte 0xFF");
    }

    #[test]
    fn numbers_follow_the_json_grammar_and_go_conversion() {
        let cases: [(&str, f64); 14] = [
            ("0", 0.0),
            ("-0", -0.0),
            ("7", 7.0),
            ("-12", -12.0),
            ("1.5", 1.5),
            ("-0.25", -0.25),
            ("1e3", 1000.0),
            ("1E+3", 1000.0),
            ("25e-1", 2.5),
            ("0.1", 0.1),
            ("123456789012345", 123456789012345.0),
            ("12345678901234567890", 12345678901234567890.0),
            ("9007199254740993", 9007199254740992.0),
            ("1e-400", 0.0),
        ];
        for (text, want) in cases {
            let got = number_of(text);
            assert_eq!(got, want, "{text}");
            assert_eq!(got.is_sign_negative(), want.is_sign_negative(), "{text}");
        }
        assert_eq!(number_of("1.7976931348623157e308"), f64::MAX);
        assert_eq!(one("[-0]").to_json(), "[-0]");
        let e = err("{\"a\":\n  1e400}");
        assert_eq!((e.line, e.column), (2, 3));
        assert!(
            e.message.starts_with("number 1e400 is out of range"),
            "{}",
            e.message
        );
        assert!(err("-1e309").message.contains("out of range"));
    }

    #[test]
    fn invalid_inputs_report_line_and_column() {
        let cases: &[(&str, u32, u32, &str)] = &[
            ("{\"a\":\"abc", 1, 10, "unexpected end of input in string"),
            (
                "{\"a\":1,}",
                1,
                8,
                "expected string key after ',' in object, found '}'",
            ),
            (
                "[1,]",
                1,
                4,
                "expected a value after ',' in array, found ']'",
            ),
            (
                "[1 2]",
                1,
                4,
                "expected ',' or ']' after array element, found '2'",
            ),
            (
                "{\"a\":1 x}",
                1,
                8,
                "expected ',' or '}' after object value, found 'x'",
            ),
            (
                "{\"a\":01}",
                1,
                7,
                "invalid number: leading zeros are not allowed",
            ),
            (
                "{\"a\":-01}",
                1,
                8,
                "invalid number: leading zeros are not allowed",
            ),
            (
                "{\"a\":\n \"x\ty\"}",
                2,
                4,
                "invalid control character U+0009 in string (must be escaped)",
            ),
            (
                "{\"a\":\"x\ny\"}",
                1,
                8,
                "invalid control character U+000A in string (must be escaped)",
            ),
            (
                "{\"a\":tru}",
                1,
                9,
                "invalid literal, expected 'e' of 'true', found '}'",
            ),
            ("[nul", 1, 5, "unexpected end of input in literal 'null'"),
            (
                "{\"a\":fals",
                1,
                10,
                "unexpected end of input in literal 'false'",
            ),
            ("{\"a\":", 1, 6, "unexpected end of input, expected a value"),
            (
                "{\"a\"",
                1,
                5,
                "unexpected end of input, expected ':' after object key",
            ),
            (
                "{",
                1,
                2,
                "unexpected end of input, expected string key or '}' in object",
            ),
            (
                "{\"a\":[1,\n2",
                2,
                2,
                "unexpected end of input, expected ',' or ']' after array element",
            ),
            (
                "{\"a\":1",
                1,
                7,
                "unexpected end of input, expected ',' or '}' after object value",
            ),
            (
                "{1:2}",
                1,
                2,
                "expected string key or '}' in object, found '1'",
            ),
            (
                "{'a':2}",
                1,
                2,
                "expected string key or '}' in object, found '\\''",
            ),
            ("{\"a\":+1}", 1, 6, "expected a value, found '+'"),
            ("{\"a\":.5}", 1, 6, "expected a value, found '.'"),
            (
                "{\"a\":1.}",
                1,
                8,
                "expected digit after decimal point in number, found '}'",
            ),
            (
                "{\"a\":1e}",
                1,
                8,
                "expected digit in exponent of number, found '}'",
            ),
            (
                "{\"a\":1e+}",
                1,
                9,
                "expected digit in exponent of number, found '}'",
            ),
            (
                "{\"a\":-}",
                1,
                7,
                "expected digit after '-' in number, found '}'",
            ),
            (
                "{\"a\":0x1F}",
                1,
                7,
                "expected ',' or '}' after object value, found 'x'",
            ),
            ("{\"a\":\"\\q\"}", 1, 7, "invalid escape '\\q' in string"),
            ("{\"a\":\"\\'\"}", 1, 7, "invalid escape '\\\\'' in string"),
            (
                "{\"a\":\"\\u12g4\"}",
                1,
                11,
                "invalid '\\u' escape in string, expected 4 hex digits, found 'g'",
            ),
            ("\"\\u12", 1, 6, "unexpected end of input in string"),
            ("\"\\", 1, 3, "unexpected end of input in string"),
            ("{\"a\":NaN}", 1, 6, "expected a value, found 'N'"),
            ("{\"a\":1}}", 1, 8, "expected a value, found '}'"),
            (
                "{\"é\":1,é}",
                1,
                8,
                "expected string key after ',' in object, found 'é'",
            ),
            (
                "{,}",
                1,
                2,
                "expected string key or '}' in object, found ','",
            ),
            ("[\u{7f}]", 1, 2, "expected a value, found '\\u{7f}'"),
        ];
        for &(text, line, column, message) in cases {
            let e = err(text);
            assert_eq!(
                (e.line, e.column, e.message.as_str()),
                (line, column, message),
                "{text:?}"
            );
        }
    }

    #[test]
    fn nesting_depth_is_limited_like_go_without_overflowing_the_stack() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let n = one(&deep(MAX_DEPTH));
        // Take the tree apart iteratively so the test does not depend on recursive drop.
        let mut cur = n;
        let mut levels = 0;
        while let Value::Seq(mut items) = cur.value {
            levels += 1;
            match items.pop() {
                Some(next) => cur = next,
                None => break,
            }
        }
        assert_eq!(levels, MAX_DEPTH);

        let e = err(&deep(MAX_DEPTH + 1));
        assert_eq!((e.line, e.column), (1, MAX_DEPTH as u32 + 1));
        assert_eq!(e.message, "exceeded maximum nesting depth of 10000");
        let e = err(&"{\"a\":".repeat(MAX_DEPTH + 1));
        assert_eq!(e.message, "exceeded maximum nesting depth of 10000");
        let e = err(&"[{\"a\":".repeat(1_000_000));
        assert_eq!(e.message, "exceeded maximum nesting depth of 10000");
    }

    #[test]
    fn same_values_as_serde_json() {
        let texts = [
            r#"{"schema":"olm.package","name":"foo","defaultChannel":"stable","icon":{"base64data":"iVBORw0KGgo=","mediatype":"image/png"}}"#,
            r#"{"schema":"olm.bundle","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"x.io","kind":"X","version":"v1"}}],"relatedImages":[]}"#,
            "{\"z\": [1, -2.5, 3e2, 0.001, 1e-7, 123456789], \"a\": {\"b\": null, \"c\": [true, false, \"\\u00e9\\n\\\"\"]}, \"a\": 5}",
            r#"{"nested":[[[{"k":[{}]}]]],"esc":"\u2028\u0007\t<>&","emoji":"\ud83d\ude00"}"#,
        ];
        for text in texts {
            let ours = one(text);
            let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(to_serde(&ours), normalize(theirs.clone()), "{text}");
            if !text.contains('.') && !text.contains('e') {
                assert_eq!(ours.to_json(), serde_go_json(&theirs), "{text}");
            }
        }
        // Simple documents re-encode exactly as serde_json with sorted keys does.
        let text = r#"{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v2","replaces":"foo.v1","skips":["foo.v0"]}]}"#;
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(one(text).to_json(), serde_go_json(&theirs));
    }

    fn json_value(floats: bool) -> impl Strategy<Value = serde_json::Value> {
        use serde_json::Value as J;
        const LIMIT: i64 = 1 << 53;
        let int = (-LIMIT..=LIMIT).prop_map(J::from);
        let num = if floats {
            prop_oneof![
                int,
                any::<f64>().prop_filter_map("finite", |f| {
                    serde_json::Number::from_f64(f).map(J::Number)
                })
            ]
            .boxed()
        } else {
            int.boxed()
        };
        let leaf = prop_oneof![
            Just(J::Null),
            any::<bool>().prop_map(J::Bool),
            num,
            any::<String>().prop_map(J::String),
            "[a-z\\\\\"/\n\t é😀]{0,12}".prop_map(J::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
                prop::collection::vec(("[a-z\"\\\\é]{0,4}", inner), 0..6)
                    .prop_map(|kv| J::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in any::<String>()) {
            let _ = parse_stream(&text, |_| {});
        }

        #[test]
        fn json_like_text_never_panics(text in "[\\[\\]{}\":,0-9eE.+\\-tfrulnsa\\\\ \n\u{1}é]{0,40}") {
            let mut last_line = 0;
            let r = parse_stream(&text, |n| last_line = n.pos.line);
            if let Err(e) = r {
                prop_assert!(e.line >= 1 && e.column >= 1);
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse_stream_bytes(&bytes, |_| {});
        }

        #[test]
        fn serde_values_round_trip(v in json_value(true), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            };
            let d = docs(&text);
            prop_assert_eq!(d.len(), 1);
            prop_assert_eq!(to_serde(&d[0]), normalize(v));
        }

        #[test]
        fn serde_values_re_encode_like_go(vs in prop::collection::vec(json_value(false), 1..4), sep in "[ \t\r\n]{0,3}") {
            let texts: Vec<String> = vs.iter().map(|v| serde_json::to_string(v).unwrap()).collect();
            let joined = texts.join(&sep);
            let d = docs(&joined);
            // Adjacent numbers or literals need a separator to stay apart, as in Go.
            if sep.is_empty() && d.len() != vs.len() {
                return Ok(());
            }
            let got: Vec<String> = d.iter().map(Node::to_json).collect();
            let want: Vec<String> = vs.iter().map(serde_go_json).collect();
            prop_assert_eq!(got, want);
        }
    }
}
