//! A positioned, JSON-shaped value tree: what one FBC blob looks like after parsing YAML or JSON,
//! before typed decoding. Every node and key remembers its line and column so that diagnostics can
//! point at the exact place.

use std::fmt::Write as _;

/// A 1-based line and column in a source file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
}

impl Pos {
    /// A position at `line:col`.
    pub fn new(line: u32, col: u32) -> Self {
        Pos { line, col }
    }
}

/// A value. Numbers are `f64` because opm decodes every blob into Go `map[string]interface{}`,
/// where all JSON numbers become float64.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// JSON null (also empty YAML scalars and `~`).
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// An object, in source order; keys may repeat (the last one wins, as in Go).
    Map(Vec<Entry>),
}

/// One key of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key text.
    pub key: String,
    /// Where the key is.
    pub key_pos: Pos,
    /// The value.
    pub value: Node,
}

/// A value with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the value starts.
    pub pos: Pos,
    /// The value.
    pub value: Value,
}

impl Node {
    /// A node at `pos`.
    pub fn new(pos: Pos, value: Value) -> Self {
        Node { pos, value }
    }

    /// A short name of the value's kind, for messages ("a string", "a list", ...).
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "an object",
        }
    }

    /// The string value, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Object entries with duplicate keys resolved the way Go's `encoding/json` does when it
    /// decodes into a map (the last occurrence wins), sorted by key bytes as Go re-encodes maps.
    pub fn sorted_entries(&self) -> Vec<&Entry> {
        match &self.value {
            Value::Map(entries) => sorted_unique(entries),
            _ => Vec::new(),
        }
    }

    /// Compact JSON with object keys sorted and de-duplicated, numbers and strings encoded as
    /// Go's `encoding/json` encodes them (HTML escaping off, as opm configures its encoders).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends the compact JSON of this node to `out`.
    pub fn write_json(&self, out: &mut String) {
        match &self.value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => write_go_float(out, *n),
            Value::Str(s) => write_json_string(out, s),
            Value::Seq(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Value::Map(entries) => {
                out.push('{');
                for (i, e) in sorted_unique(entries).into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(out, &e.key);
                    out.push(':');
                    e.value.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// Entries sorted by key with the last duplicate kept.
pub fn sorted_unique(entries: &[Entry]) -> Vec<&Entry> {
    let mut v: Vec<(usize, &Entry)> = entries.iter().enumerate().collect();
    // Sort by key, then by original index descending so the last occurrence comes first.
    v.sort_by(|a, b| a.1.key.cmp(&b.1.key).then(b.0.cmp(&a.0)));
    v.dedup_by(|later, earlier| later.1.key == earlier.1.key);
    v.into_iter().map(|(_, e)| e).collect()
}

/// Writes `s` as a JSON string the way Go's encoder does with HTML escaping off: `\n`, `\r`, `\t`,
/// `\b`, `\f`, other control characters as `\u00XX`, and U+2028/U+2029 escaped.
pub fn write_json_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\u{2028}' => Some("\\u2028"),
            '\u{2029}' => Some("\\u2029"),
            c if (c as u32) < 0x20 => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Writes a float64 the way Go's `encoding/json` does: shortest round-trip digits, plain
/// notation for 1e-6 <= |f| < 1e21, otherwise exponent notation like `1e+21` or `1e-7`.
pub fn write_go_float(out: &mut String, f: f64) {
    if !f.is_finite() {
        // Cannot come from JSON; YAML specials are rejected before this point.
        out.push_str("null");
        return;
    }
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        let _ = write!(out, "{f}");
    } else {
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((mant, exp)) if !exp.starts_with('-') => {
                let _ = write!(out, "{mant}e+{exp}");
            }
            _ => out.push_str(&s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Node {
        Node::new(Pos::default(), Value::Str(v.to_string()))
    }

    #[test]
    fn go_float_formatting() {
        let cases = [
            (3.0, "3"),
            (0.5, "0.5"),
            (-0.0, "-0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
        ];
        for (f, want) in cases {
            let mut out = String::new();
            write_go_float(&mut out, f);
            assert_eq!(out, want, "{f}");
        }
    }

    #[test]
    fn json_string_escapes_like_go() {
        let mut out = String::new();
        write_json_string(&mut out, "a\"b\\c\n\t\u{1}<>&\u{2028}é");
        assert_eq!(out, r#""a\"b\\c\n\t\u0001<>&\u2028é""#);
    }

    #[test]
    fn maps_sort_keys_and_last_duplicate_wins() {
        let e = |k: &str, v: &str, line| Entry {
            key: k.to_string(),
            key_pos: Pos::new(line, 1),
            value: s(v),
        };
        let n = Node::new(
            Pos::default(),
            Value::Map(vec![e("b", "1", 1), e("a", "2", 2), e("b", "3", 3)]),
        );
        assert_eq!(n.to_json(), r#"{"a":"2","b":"3"}"#);
        let keys: Vec<u32> = n.sorted_entries().iter().map(|e| e.key_pos.line).collect();
        assert_eq!(keys, vec![2, 3]);
    }
}
