//! YAML output as opm writes it. opm marshals with `sigs.k8s.io/yaml`: the value is encoded to
//! JSON, decoded by go-yaml v2 and re-emitted by go-yaml v2's port of the libyaml emitter. This
//! module reproduces that emitter's observable behaviour for JSON-shaped values:
//! - map keys sorted with go-yaml v2's `keyList.Less` (sorter.go): digit runs compare
//!   numerically, letters sort after non-letters;
//! - block style, 2-space indent, sequences inside mappings not indented;
//! - string styles chosen as encode.go `stringv` does (literal for multi-line text, plain when
//!   the text would resolve back to a string, double-quoted otherwise), then narrowed by the
//!   emitter's scalar analysis (emitterc.go `yaml_emitter_analyze_scalar` and
//!   `yaml_emitter_select_scalar_style`): single quotes for indicators, double quotes for
//!   special characters;
//! - plain, single- and double-quoted scalars folded at spaces past column 80
//!   (`best_width`), literal blocks with indentation and chomping hints.
//!
//! One departure, for text that reaches a terminal or a review: go-yaml writes the
//! bidirectional controls and the line and paragraph separators raw (U+202A–U+202E,
//! U+2066–U+2069, U+200E, U+200F, U+061C, U+2028, U+2029: libyaml's `is_printable` admits them),
//! which reorder or break what a reader sees (a Trojan Source name). Here they count as not
//! printable ([`shown_raw`]), so a scalar holding one is double-quoted with it escaped
//! (`\u202E`, `\L`, `\P`), as go-yaml writes the characters it finds unprintable: still valid
//! YAML, read back (by opm, OLM, kubectl and olmctl) as the same string. Every other scalar,
//! so every catalog opm writes without such characters, is byte for byte opm's output. The
//! characters are [`crate::text::needs_escape`]'s, the set every text output escapes; the
//! others it names (C0 but the newline, DEL, C1) go-yaml escapes itself.

use std::cmp::Ordering;

use super::node::{Entry, Node, Value, sorted_unique};

const BEST_INDENT: usize = 2;
const BEST_WIDTH: usize = 80;

/// Appends one YAML document (no leading `---`) for `node` the way sigs.k8s.io/yaml.Marshal
/// writes the same JSON value.
/// A JSON document as one YAML document in olmctl's style (keys sorted); `None` when `json` is
/// not JSON. For writing Kubernetes objects built as `serde_json` values.
pub fn json_to_yaml(json: &str) -> Option<String> {
    let mut node = None;
    crate::fbc::json::parse_stream(json, |n| {
        if node.is_none() {
            node = Some(n);
        }
    })
    .ok()?;
    let mut out = String::new();
    write_yaml(&node?, &mut out);
    Some(out)
}

pub fn write_yaml(node: &Node, out: &mut String) {
    let mut e = Emitter {
        out,
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
        open_ended: false,
    };
    e.node(node, false);
    // Document end: the stream ends with a line break.
    if e.column > 0 || !e.indention {
        e.put_break();
    }
    if e.open_ended {
        // A `|+` scalar leaves the stream open; the stream end writes `...`.
        e.write_str("...");
        e.put_break();
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Emitter<'a> {
    out: &'a mut String,
    column: usize,
    indent: isize,
    indents: Vec<isize>,
    whitespace: bool,
    indention: bool,
    open_ended: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Whether the emitter writes `c` as it is: libyaml's [`is_printable`] less the characters of
/// [`crate::text::needs_escape`] (the newline apart, which is the YAML's own line structure).
fn shown_raw(c: char) -> bool {
    is_printable(c) && (c == '\n' || !crate::text::needs_escape(c))
}

/// libyaml's `is_printable` over code points.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0A
        || (0x20..=0x7E).contains(&u)
        || (0xA0..=0xD7FF).contains(&u)
        || ((0xE000..=0xFFFD).contains(&u) && u != 0xFEFF)
}

impl Emitter<'_> {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_str(&mut self, s: &str) {
        self.out.push_str(s);
        self.column += s.chars().count();
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT as isize } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT as isize;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        self.write_str(ind);
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    /// Emits a node; `mapping_ctx` is true for mapping values (sequences there are indentless).
    fn node(&mut self, n: &Node, mapping_ctx: bool) {
        match &n.value {
            Value::Map(entries) if entries.is_empty() => self.empty_flow("{", "}"),
            Value::Seq(items) if items.is_empty() => self.empty_flow("[", "]"),
            Value::Map(entries) => self.block_mapping(entries),
            Value::Seq(items) => self.block_sequence(items, mapping_ctx),
            Value::Null => self.scalar("null", Style::Plain, false),
            Value::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain, false),
            Value::Number(f) => self.scalar(&format_number(*f), Style::Plain, false),
            Value::Str(s) => self.string(s, false),
        }
    }

    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn block_mapping(&mut self, entries: &[Entry]) {
        self.increase_indent(false, false);
        let mut sorted = sorted_unique(entries);
        sorted.sort_by(|a, b| key_cmp(&a.key, &b.key));
        for e in sorted {
            self.write_indent();
            self.string(&e.key, true);
            self.write_indicator(":", false, false, false);
            self.node(&e.value, true);
        }
        self.pop_indent();
    }

    fn block_sequence(&mut self, items: &[Node], mapping_ctx: bool) {
        let indentless = mapping_ctx && !self.indention;
        self.increase_indent(false, indentless);
        for it in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(it, false);
        }
        self.pop_indent();
    }

    /// encode.go `stringv`: literal for text with line breaks, plain when the text resolves to
    /// a string, double-quoted otherwise.
    fn string(&mut self, s: &str, simple_key: bool) {
        let style = if s.contains('\n') {
            Style::Literal
        } else if resolves_to_str(s) && !is_base60_float(s) {
            Style::Plain
        } else {
            Style::Double
        };
        self.scalar(s, style, simple_key);
    }

    fn scalar(&mut self, s: &str, requested: Style, simple_key: bool) {
        let a = analyze(s);
        let mut style = requested;
        if simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain_allowed || (s.is_empty() && simple_key)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || simple_key) {
            style = Style::Double;
        }
        self.increase_indent(true, false);
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.write_plain(s, allow_breaks),
            Style::Single => self.write_single(s, allow_breaks),
            Style::Double => self.write_double(s, allow_breaks),
            Style::Literal => self.write_literal(s),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, s: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let mut spaces = false;
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c == ' ' {
                let next_space = chars.peek() == Some(&' ');
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !next_space {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, s: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i < chars.len() - 1
                    && !next_space
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn write_double(&mut self, s: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !shown_raw(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let u = c as u32;
                        let esc = if u <= 0xFF {
                            format!("x{u:02X}")
                        } else if u <= 0xFFFF {
                            format!("u{u:04X}")
                        } else {
                            format!("U{u:08X}")
                        };
                        self.write_str(&esc);
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i < chars.len() - 1
                {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
    }

    fn write_literal(&mut self, s: &str) {
        self.write_indicator("|", true, false, false);
        // Block scalar hints: indentation when the text starts with a space or break, and
        // chomping (`-` without a final break, `+` with more than one).
        if s.starts_with(' ') || s.starts_with(is_break) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        self.open_ended = false;
        let mut rev = s.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(prev)) if is_break(prev) => Some("+"),
            _ => None,
        };
        if let Some(h) = chomp {
            self.write_indicator(h, false, false, false);
            if h == "+" {
                self.open_ended = true;
            }
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in s.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                    breaks = false;
                }
                self.put(c);
                self.indention = false;
            }
        }
    }
}

/// What `yaml_emitter_analyze_scalar` finds out about a scalar.
#[derive(Debug)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let (mut block_ind, mut flow_ind) = (false, false);
    if s.starts_with("---") || s.starts_with("...") {
        block_ind = true;
        flow_ind = true;
    }
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    let mut preceded_by_ws = true;
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    for i in 0..n {
        let c = chars[i];
        let followed_by_ws = i + 1 >= n || is_blank(chars[i + 1]);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_ind = true;
                    block_ind = true;
                }
                '?' | ':' => {
                    flow_ind = true;
                    if followed_by_ws {
                        block_ind = true;
                    }
                }
                '-' if followed_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_ind = true,
                ':' => {
                    flow_ind = true;
                    if followed_by_ws {
                        block_ind = true;
                    }
                }
                '#' if preceded_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        }
        if !shown_raw(c) {
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i + 1 == n {
                trailing_space = true;
            }
            if prev_break {
                break_space = true;
            }
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + 1 == n {
                trailing_break = true;
            }
            if prev_space {
                space_break = true;
            }
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = is_blank(c) || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_ind {
        a.block_plain_allowed = false;
    }
    let _ = flow_ind; // only matters inside flow collections, which are never emitted here
    a
}

/// go-yaml v2 `resolve("", s)` yields the string tag: the text would read back as a string.
/// The reader's resolver decides, plus the timestamps go-yaml v2 also recognises on output.
pub fn resolves_to_str(s: &str) -> bool {
    matches!(super::yaml::resolve_plain(s), Ok(Value::Str(_))) && !is_timestamp(s)
}

/// go-yaml v2's `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let st = i;
        while i < b.len() && b[i].is_ascii_digit() && i - st < 2 {
            i += 1;
        }
        let g = &s[st..i];
        let ok = match g.len() {
            1 => true,
            2 => g.as_bytes()[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2 `parseTimestamp`: `YYYY-M-D`, optionally followed by `[Tt ]h:m:s[.frac]` and, for
/// `T`/`t`, a `Z` or `±hh:mm` zone.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut i = 5;
    let num = |i: &mut usize, max_digits: usize| -> Option<u32> {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - st < max_digits {
            *i += 1;
        }
        if *i == st {
            return None;
        }
        s[st..*i].parse().ok()
    };
    let Some(month) = num(&mut i, 2) else {
        return false;
    };
    if i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    let Some(day) = num(&mut i, 2) else {
        return false;
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let sep = b[i];
    if !matches!(sep, b'T' | b't' | b' ') {
        return false;
    }
    i += 1;
    let mut hms = [0u32; 3];
    for (k, v) in hms.iter_mut().enumerate() {
        if k > 0 {
            if i >= b.len() || b[i] != b':' {
                return false;
            }
            i += 1;
        }
        match num(&mut i, 2) {
            Some(x) => *v = x,
            None => return false,
        }
    }
    if hms[0] > 23 || hms[1] > 59 || hms[2] > 59 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let st = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == st {
            return false;
        }
    }
    if sep == b' ' {
        return i == b.len();
    }
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'+') | Some(b'-') => {
            let z = &s[i + 1..];
            z.len() == 5
                && z.as_bytes()[2] == b':'
                && z.as_bytes()[..2].iter().all(u8::is_ascii_digit)
                && z.as_bytes()[3..].iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// A JSON number as go-yaml v2 re-emits it after decoding: integers as integers, other values
/// with `strconv.FormatFloat(f, 'g', -1, 64)`.
fn format_number(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    if f.fract() == 0.0 && (-9.223_372_036_854_776e18..1.844_674_407_370_955_2e19).contains(&f) {
        if f < 0.0 {
            return format!("{}", f as i64);
        }
        return format!("{}", f as u64);
    }
    // 'g' with the shortest digits: exponent form when exp < -4 || exp >= 21 is what JSON does;
    // strconv 'g' with precision -1 uses 6 as the threshold instead.
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// go-yaml v2 sorter.go `keyList.Less` for string keys.
pub fn key_cmp(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::yaml::parse_documents;

    fn emit_str(v: &str) -> String {
        let mut out = String::new();
        let n = Node::new(
            Default::default(),
            Value::Map(vec![Entry {
                key: "k".into(),
                key_pos: Default::default(),
                value: Node::new(Default::default(), Value::Str(v.into())),
            }]),
        );
        write_yaml(&n, &mut out);
        out
    }

    fn reparse(text: &str) -> Vec<Node> {
        let mut v = Vec::new();
        parse_documents(text, |n| v.push(n)).expect("re-parses");
        v
    }

    #[test]
    fn ambiguous_scalars_are_quoted() {
        for (s, want) in [
            ("yes", "k: \"yes\"\n"),
            ("y", "k: \"y\"\n"),
            ("1.0", "k: \"1.0\"\n"),
            ("1.2.3", "k: 1.2.3\n"),
            ("null", "k: \"null\"\n"),
            ("", "k: \"\"\n"),
            ("0x1F", "k: \"0x1F\"\n"),
            ("1e3", "k: \"1e3\"\n"),
            ("2021-02-21T00:00:00Z", "k: \"2021-02-21T00:00:00Z\"\n"),
            ("1:20", "k: \"1:20\"\n"),
            (">=1.0.0 <2.0.0", "k: '>=1.0.0 <2.0.0'\n"),
            ("- x", "k: '- x'\n"),
            ("a: b", "k: 'a: b'\n"),
            ("a #b", "k: 'a #b'\n"),
            ("a#b", "k: a#b\n"),
            (" lead", "k: ' lead'\n"),
            ("it's", "k: it's\n"),
            ("'q'", "k: '''q'''\n"),
            ("tab\there", "k: \"tab\\there\"\n"),
            ("é ok", "k: é ok\n"),
            ("emoji 😀", "k: \"emoji \\U0001F600\"\n"),
            ("v1", "k: v1\n"),
        ] {
            assert_eq!(emit_str(s), want, "{s:?}");
        }
    }

    /// go-yaml writes these raw (printable for libyaml); olmctl escapes them in double quotes.
    #[test]
    fn bidi_controls_and_separators_are_escaped() {
        assert_eq!(emit_str("a\u{202e}b"), "k: \"a\\u202Eb\"\n");
        assert_eq!(
            emit_str("\u{2066}x\u{2069}\u{200e}\u{200f}\u{61c}"),
            "k: \"\\u2066x\\u2069\\u200E\\u200F\\u061C\"\n"
        );
        assert_eq!(emit_str("x\u{2028}y\u{2029}"), "k: \"x\\Ly\\P\"\n");
        // Multi-line text is no literal block then; C0 and C1 controls as go-yaml escapes them.
        assert_eq!(
            emit_str("line\u{202a}\nnext\u{1b}\u{9b}\n"),
            "k: \"line\\u202A\\nnext\\e\\x9B\\n\"\n"
        );
        let mut out = String::new();
        let key = "k\u{202e}";
        let n = Node::new(
            Default::default(),
            Value::Map(vec![Entry {
                key: key.into(),
                key_pos: Default::default(),
                value: Node::new(Default::default(), Value::Str("v".into())),
            }]),
        );
        write_yaml(&n, &mut out);
        assert_eq!(out, "\"k\\u202E\": v\n");
        assert_eq!(reparse(&out)[0].sorted_entries()[0].key, key);
        // Every character text::escape names, alone and in text: none is written raw (the
        // newline apart, in a literal block), and each reads back as itself.
        let all: Vec<char> = (0..=0xFFFF_u32)
            .filter_map(char::from_u32)
            .filter(|&c| crate::text::needs_escape(c))
            .collect();
        assert!(all.len() > 70, "{}", all.len());
        for c in all {
            for v in [c.to_string(), format!("a {c} b"), format!("a\n{c}\nb\n")] {
                let out = emit_str(&v);
                assert!(
                    !out.chars()
                        .any(|o| o != '\n' && crate::text::needs_escape(o)),
                    "{v:?}: {out:?}"
                );
                let back = reparse(&out);
                assert_eq!(
                    back[0].sorted_entries()[0].value.as_str(),
                    Some(&*v),
                    "{out:?}"
                );
            }
        }
    }

    #[test]
    fn literal_blocks_and_chomping() {
        assert_eq!(emit_str("a\nb"), "k: |-\n  a\n  b\n");
        assert_eq!(emit_str("a\nb\n"), "k: |\n  a\n  b\n");
        assert_eq!(emit_str("a\n\nb\n\n"), "k: |+\n  a\n\n  b\n\n...\n");
        assert_eq!(emit_str(" a\nb"), "k: |2-\n   a\n  b\n");
        // A space before a line break rules out block style.
        assert_eq!(emit_str("a \nb"), "k: \"a \\nb\"\n");
    }

    #[test]
    fn long_plain_text_folds_after_column_80() {
        let s = "word ".repeat(30);
        let s = s.trim_end();
        let out = emit_str(s);
        assert!(out.lines().count() > 1, "{out}");
        for line in out.lines().skip(1) {
            assert!(line.starts_with("  word"), "{line:?}");
        }
        let back = reparse(&out);
        assert_eq!(back[0].sorted_entries()[0].value.as_str(), Some(s));
    }

    #[test]
    fn key_order_is_natural() {
        let mut keys = vec!["a10", "a9", "b", "a_b", "aB", "A", "a"];
        keys.sort_by(|a, b| key_cmp(a, b));
        assert_eq!(keys, vec!["A", "a", "a_b", "a9", "a10", "aB", "b"]);
    }

    #[test]
    fn nested_structures() {
        let d = reparse("b: [1, {x: [], \"y\": {}}]\na: {c: null, d: true, e: 1.5}\n");
        let mut out = String::new();
        write_yaml(&d[0], &mut out);
        assert_eq!(
            out,
            "a:\n  c: null\n  d: true\n  e: 1.5\nb:\n- 1\n- x: []\n  \"y\": {}\n"
        );
    }

    #[test]
    fn numbers_like_go() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(-2.0), "-2");
        assert_eq!(format_number(1.5), "1.5");
        assert_eq!(format_number(1234567.5), "1.2345675e+06");
        assert_eq!(format_number(0.00001), "1e-05");
        assert_eq!(format_number(1e20), "1e+20");
        assert_eq!(format_number(1e19), "10000000000000000000");
        assert_eq!(format_number(1e25), "1e+25");
    }

    /// The oracle: opm's own output for the 35 packages of the v4.18 community catalog.
    #[test]
    fn fixture_catalogs_round_trip_byte_for_byte() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/fixtures/catalogs/v4.18"
        );
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("fixture catalog")
            .map(|e| e.expect("entry").path().join("catalog.yaml"))
            .collect();
        entries.sort();
        assert_eq!(entries.len(), 35);
        let mut differing = Vec::new();
        for path in &entries {
            let text = std::fs::read_to_string(path).expect("read");
            let mut out = String::new();
            parse_documents(&text, |n| {
                out.push_str("---\n");
                write_yaml(&n, &mut out);
            })
            .expect("parse");
            if out != text {
                let line = out
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .map_or(0, |i| i + 1);
                differing.push(format!(
                    "{} (first difference at line {line})",
                    path.display()
                ));
            }
        }
        assert!(differing.is_empty(), "{differing:#?}");
    }

    proptest::proptest! {
        /// Whatever strings and shapes go in, the output reads back to the same value.
        #[test]
        fn output_reads_back(v in value_strategy()) {
            let mut out = String::new();
            write_yaml(&v, &mut out);
            let back = reparse(&out);
            proptest::prop_assert_eq!(back.len(), 1, "{}", out);
            proptest::prop_assert_eq!(back[0].to_json(), v.to_json(), "{}", out);
        }
    }

    fn value_strategy() -> impl proptest::strategy::Strategy<Value = Node> {
        use proptest::prelude::*;
        let text = proptest::string::string_regex(
            "[a-zA-Z0-9 :#'\"\\-\\n\\t.,{}\\[\\]&*!|>%@`?~é😀\u{202e}\u{2066}\u{2028}\u{1b}]{0,40}",
        )
        .expect("regex");
        let leaf = prop_oneof![
            text.prop_map(Value::Str),
            any::<bool>().prop_map(Value::Bool),
            (-1_000_000i64..1_000_000).prop_map(|i| Value::Number(i as f64)),
            Just(Value::Null),
        ]
        .prop_map(|v| Node::new(Default::default(), v));
        let tree = leaf.prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| Node::new(Default::default(), Value::Seq(v))),
                proptest::collection::vec(("[a-z0-9 :_.-]{0,8}", inner), 0..4).prop_map(|kv| {
                    Node::new(
                        Default::default(),
                        Value::Map(
                            kv.into_iter()
                                .map(|(k, value)| Entry {
                                    key: k,
                                    key_pos: Default::default(),
                                    value,
                                })
                                .collect(),
                        ),
                    )
                }),
            ]
        });
        // Documents are objects, as catalog blobs are.
        proptest::collection::vec(("[a-z]{1,6}", tree), 1..4).prop_map(|kv| {
            Node::new(
                Default::default(),
                Value::Map(
                    kv.into_iter()
                        .map(|(k, value)| Entry {
                            key: k,
                            key_pos: Default::default(),
                            value,
                        })
                        .collect(),
                ),
            )
        })
    }
}
