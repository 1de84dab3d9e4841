//! Label and field selectors exactly as kube-apiserver parses and matches them.
//!
//! Followed upstream: k8s.io/apimachinery v0.36.3 (the copy vendored by
//! operator-framework/operator-lifecycle-manager @ 992bb097):
//!
//! - `pkg/labels/selector.go` :: `Parse`, its `Lexer` and `Parser`, `NewRequirement`,
//!   `Requirement.Matches`, `Requirement.String`, `validateLabelKey`, `validateLabelValue`;
//! - `pkg/api/validate/content/kube.go` :: `IsLabelKey`, `IsLabelValue`; `dns.go` ::
//!   `IsDNS1123Subdomain`; `errors.go` :: `RegexError`, `MaxLenError`, `EmptyError`;
//! - `pkg/util/validation/field/errors.go` :: `Invalid`, `Error.Error`, `ErrorBody`,
//!   `ErrorList.ToAggregate`; `path.go` :: `Path.String`; `pkg/util/errors/errors.go` ::
//!   `aggregate.Error`;
//! - `pkg/apis/meta/v1/helpers.go` :: `LabelSelectorAsSelector`;
//! - `pkg/fields/selector.go` :: `ParseSelector`, `splitTerms`, `splitTerm`, `UnescapeValue`,
//!   `EscapeValue`, `hasTerm`/`notHasTerm`/`andTerm`.
//!
//! Error texts are upstream's, byte for byte, except Go's `%q` quoting of exotic Unicode
//! (see [`go_quote`]).

use std::fmt;

use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Go formatting helpers shared with the RBAC module.
// ---------------------------------------------------------------------------------------------

/// Go's `%q` for a string (`strconv.Quote`): double quotes, backslash escapes for `"`, `\`,
/// the C escapes and other control characters; printable Unicode is kept as is. (Go also
/// escapes a few non-control code points that `unicode.IsPrint` rejects, e.g. U+00AD; those
/// are kept here.)
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `k8s.io/apimachinery/pkg/util/errors` :: `aggregate.Error`: one message as is, several
/// de-duplicated and written `[a, b]`.
pub(crate) fn aggregate_error(msgs: &[String]) -> String {
    match msgs {
        [] => String::new(),
        [one] => one.clone(),
        _ => {
            let mut seen: Vec<&str> = Vec::new();
            for m in msgs {
                if !seen.contains(&m.as_str()) {
                    seen.push(m);
                }
            }
            if seen.len() == 1 {
                seen[0].to_string()
            } else {
                format!("[{}]", seen.join(", "))
            }
        }
    }
}

/// `field.Invalid(path, value, detail).Error()` for a string value: `<path>: Invalid value:
/// "<value>": <detail>` (a nil path prints as `<nil>`).
fn field_invalid(path: &str, value: &str, detail: &str) -> String {
    let mut s = format!("{path}: Invalid value: {}", go_quote(value));
    if !detail.is_empty() {
        s.push_str(": ");
        s.push_str(detail);
    }
    s
}

/// The same for a `[]string` value, which `ErrorBody` renders as JSON.
fn field_invalid_list(path: &str, values: &[String], detail: &str) -> String {
    let json = serde_json::to_string(values).unwrap_or_else(|_| "null".to_string());
    let mut s = format!("{path}: Invalid value: {json}");
    if !detail.is_empty() {
        s.push_str(": ");
        s.push_str(detail);
    }
    s
}

/// `field.ErrorList.ToAggregate().Error()`: de-duplicates, then [`aggregate_error`].
fn error_list(errs: Vec<String>) -> Option<String> {
    if errs.is_empty() {
        return None;
    }
    let mut unique: Vec<String> = Vec::new();
    for e in errs {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    Some(aggregate_error(&unique))
}

// ---------------------------------------------------------------------------------------------
// Label key and value validation (content/kube.go, content/dns.go, content/errors.go).
// ---------------------------------------------------------------------------------------------

const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// `content.RegexError`.
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{re}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push('\'');
        s.push_str(e);
        s.push_str("', ");
    }
    s.push_str("regex used for validation is '");
    s.push_str(re);
    s.push_str("')");
    s
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`.
fn matches_label_key_fmt(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`.
fn matches_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
            match (b.first(), b.last()) {
                (Some(f), Some(l)) => ok(f) && ok(l) && b.iter().all(|c| ok(c) || *c == b'-'),
                _ => false,
            }
        })
}

/// `content.IsDNS1123Subdomain`.
fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !matches_dns1123_subdomain(value) {
        let fmt = format!("{DNS1123_LABEL_FMT}(\\.{DNS1123_LABEL_FMT})*");
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            &fmt,
            &["example.com"],
        ));
    }
    errs
}

/// `content.IsLabelKey` (a.k.a. `IsQualifiedName`): an optional DNS subdomain prefix and `/`,
/// then a name of at most 63 characters.
pub fn is_label_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for m in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    LABEL_KEY_ERR_MSG,
                    LABEL_KEY_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !matches_label_key_fmt(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_ERR_MSG,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `content.IsLabelValue`: empty, or at most 63 characters of the label-key alphabet.
pub fn is_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !(value.is_empty() || matches_label_key_fmt(value)) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `labels.validateLabelKey(k, path)`.
fn validate_label_key(k: &str, path: &str) -> Option<String> {
    let errs = is_label_key(k);
    if errs.is_empty() {
        None
    } else {
        Some(field_invalid(path, k, &errs.join("; ")))
    }
}

/// `labels.validateLabelValue(k, v, path)`: the path gets the key as a subscript.
fn validate_label_value(k: &str, v: &str, path: &str) -> Option<String> {
    let errs = is_label_value(v);
    if errs.is_empty() {
        None
    } else {
        Some(field_invalid(&format!("{path}[{k}]"), v, &errs.join("; ")))
    }
}

// ---------------------------------------------------------------------------------------------
// Label selectors.
// ---------------------------------------------------------------------------------------------

/// `selection.Operator` as label selectors use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `!key`.
    DoesNotExist,
    /// `key=value`.
    Equals,
    /// `key==value`.
    DoubleEquals,
    /// `key in (a,b)`.
    In,
    /// `key!=value`.
    NotEquals,
    /// `key notin (a,b)`.
    NotIn,
    /// `key`.
    Exists,
    /// `key>1`.
    GreaterThan,
    /// `key<1`.
    LessThan,
}

impl Operator {
    /// The `selection.Operator` string (`!`, `=`, `==`, `in`, `!=`, `notin`, `exists`, `gt`,
    /// `lt`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::DoesNotExist => "!",
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::In => "in",
            Operator::NotEquals => "!=",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

/// One `labels.Requirement`: a key, an operator and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// `labels.NewRequirement` with a nil field path: validates the key, the number of values
    /// for the operator, `Gt`/`Lt` integers and every value; errors are upstream's aggregated
    /// field errors.
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Requirement, String> {
        let mut errs = Vec::new();
        if let Some(e) = validate_label_key(key, "key") {
            errs.push(e);
        }
        let value_path = "values";
        match operator {
            Operator::In | Operator::NotIn => {
                if values.is_empty() {
                    errs.push(field_invalid_list(
                        value_path,
                        &values,
                        "for 'in', 'notin' operators, values set can't be empty",
                    ));
                }
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => {
                if values.len() != 1 {
                    errs.push(field_invalid_list(
                        value_path,
                        &values,
                        "exact-match compatibility requires one single value",
                    ));
                }
            }
            Operator::Exists | Operator::DoesNotExist => {
                if !values.is_empty() {
                    errs.push(field_invalid_list(
                        value_path,
                        &values,
                        "values set must be empty for exists and does not exist",
                    ));
                }
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(field_invalid_list(
                        value_path,
                        &values,
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(field_invalid(
                            &format!("{value_path}[{i}]"),
                            v,
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            if let Some(e) = validate_label_value(key, v, &format!("{value_path}[{i}]")) {
                errs.push(e);
            }
        }
        match error_list(errs) {
            Some(e) => Err(e),
            None => Ok(Requirement {
                key: key.to_string(),
                operator,
                values,
            }),
        }
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, as given (sorted and de-duplicated when parsed).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// `Requirement.Matches`.
    pub fn matches(&self, labels: &Value) -> bool {
        let lookup = |k: &str| labels.get(k).and_then(Value::as_str);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                lookup(&self.key).is_some_and(|v| self.values.iter().any(|x| x == v))
            }
            Operator::NotIn | Operator::NotEquals => {
                lookup(&self.key).is_none_or(|v| !self.values.iter().any(|x| x == v))
            }
            Operator::Exists => lookup(&self.key).is_some(),
            Operator::DoesNotExist => lookup(&self.key).is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(Ok(have)) = lookup(&self.key).map(str::parse::<i64>) else {
                    return false;
                };
                let [want] = self.values.as_slice() else {
                    return false;
                };
                let Ok(want) = want.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    /// `Requirement.String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        match self.operator {
            Operator::Equals => f.write_str("=")?,
            Operator::DoubleEquals => f.write_str("==")?,
            Operator::NotEquals => f.write_str("!=")?,
            Operator::In => f.write_str(" in ")?,
            Operator::NotIn => f.write_str(" notin ")?,
            Operator::GreaterThan => f.write_str(">")?,
            Operator::LessThan => f.write_str("<")?,
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
        }
        let set = matches!(self.operator, Operator::In | Operator::NotIn);
        if set {
            f.write_str("(")?;
        }
        let mut values = self.values.clone();
        values.sort();
        f.write_str(&values.join(","))?;
        if set {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A parsed label selector (`labels.Selector`): the AND of its requirements, sorted by key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    /// `labels.Nothing()`: what a nil `*metav1.LabelSelector` converts to.
    nothing: bool,
}

impl LabelSelector {
    /// `labels.Everything()`.
    pub fn everything() -> LabelSelector {
        LabelSelector::default()
    }

    /// `labels.Nothing()`: matches no labels.
    pub fn nothing() -> LabelSelector {
        LabelSelector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// `labels.Parse`: the `labelSelector` query parameter syntax. Errors are upstream's texts
    /// (e.g. `unable to parse requirement: found '', expected: identifier`).
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut parser = Parser {
            items: scan(s),
            position: 0,
        };
        let mut requirements = parser.parse()?;
        // sort.Sort(ByKey(items)): only the String() order depends on it.
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// `metav1.LabelSelectorAsSelector` on a `metav1.LabelSelector` JSON object (`matchLabels`,
    /// `matchExpressions` with `In`, `NotIn`, `Exists`, `DoesNotExist`). `null` is
    /// `labels.Nothing()`, an empty selector is `labels.Everything()`.
    pub fn from_label_selector(selector: &Value) -> Result<LabelSelector, String> {
        if selector.is_null() {
            return Ok(LabelSelector::nothing());
        }
        let empty = serde_json::Map::new();
        let match_labels = selector
            .get("matchLabels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let no_exprs = Vec::new();
        let exprs = selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .unwrap_or(&no_exprs);
        let mut requirements = Vec::new();
        for (k, v) in match_labels {
            let v = v.as_str().unwrap_or_default().to_string();
            requirements.push(Requirement::new(k, Operator::Equals, vec![v])?);
        }
        for expr in exprs {
            let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
            let op_str = expr
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let op = match op_str {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(format!(
                        "{} is not a valid label selector operator",
                        go_quote(other)
                    ));
                }
            };
            let values = expr
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default();
            requirements.push(Requirement::new(key, op, values)?);
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// `Selector.Matches` against `metadata.labels` (an object of strings; `null` or a missing
    /// field is an empty label set).
    pub fn matches(&self, labels: &Value) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// `Selector.Empty`: true when it does not restrict the selection (`Nothing` is not empty).
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }
}

impl fmt::Display for LabelSelector {
    /// `Selector.String`: the requirements joined by `,`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// The lexer's tokens (`labels.Token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// `string2token`.
fn string2token(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(ch: u8) -> bool {
    matches!(ch, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// `labels.Lexer`: byte-wise, with upstream's quirk that a NUL byte reads as end of input.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    /// `scanIDOrKeyword`.
    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let mut buffer = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            buffer.push(ch);
        }
        let s = String::from_utf8_lossy(&buffer).into_owned();
        match string2token(&buffer) {
            Some(t) => (t, s),
            None => (Token::Identifier, s),
        }
    }

    /// `scanSpecialSymbol`: the longest operator made of special symbols.
    fn scan_special_symbol(&mut self) -> (Token, String) {
        let mut last: Option<(Token, String)> = None;
        let mut buffer = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) {
                buffer.push(ch);
                if let Some(t) = string2token(&buffer) {
                    last = Some((t, String::from_utf8_lossy(&buffer).into_owned()));
                } else if last.is_some() {
                    self.unread();
                    break;
                }
            } else {
                self.unread();
                break;
            }
        }
        match last {
            Some(item) => item,
            None => (
                Token::Error,
                format!(
                    "error expected: keyword found '{}'",
                    String::from_utf8_lossy(&buffer)
                ),
            ),
        }
    }

    /// `Lex`.
    fn lex(&mut self) -> (Token, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            (Token::EndOfString, String::new())
        } else if is_special_symbol(ch) {
            self.unread();
            self.scan_special_symbol()
        } else {
            self.unread();
            self.scan_id_or_keyword()
        }
    }
}

/// `Parser.scan`: all tokens up to and including the end of string.
fn scan(s: &str) -> Vec<(Token, String)> {
    let mut lexer = Lexer {
        s: s.as_bytes(),
        pos: 0,
    };
    let mut items = Vec::new();
    loop {
        let item = lexer.lex();
        let end = item.0 == Token::EndOfString;
        items.push(item);
        if end {
            return items;
        }
    }
}

/// `ParserContext`: in `Values`, `in` and `notin` are identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// `labels.Parser`.
struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn item(&self, i: usize, ctx: Context) -> (Token, String) {
        let (tok, lit) = self
            .items
            .get(i)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        let tok = match tok {
            Token::In | Token::NotIn if ctx == Context::Values => Token::Identifier,
            t => t,
        };
        (tok, lit)
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.item(self.position, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.item(self.position, ctx);
        self.position += 1;
        item
    }

    /// `Parser.parse`.
    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{l}', expected: ',' or 'end of string'"));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    /// `parseRequirement`.
    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return Requirement::new(&key, op, Vec::new());
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, operator, values)
    }

    /// `parseKeyAndInferOperator`: `!key` is DoesNotExist, a bare `key` is Exists.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut tok, mut literal) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (tok, literal) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        if let Some(e) = validate_label_key(&literal, "<nil>") {
            return Err(e);
        }
        let (t, _) = self.lookahead(Context::Values);
        if (t == Token::EndOfString || t == Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    /// `parseOperator`.
    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    /// `parseValues`: `(a,b,c)`, as a sorted set.
    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let s = self.parse_identifiers_list()?;
                let (t, _) = self.consume(Context::Values);
                if t != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// `parseIdentifiersList`: possibly empty identifiers separated by commas.
    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut s: Vec<String> = Vec::new();
        let insert = |s: &mut Vec<String>, v: String| {
            if !s.contains(&v) {
                s.push(v);
            }
        };
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    insert(&mut s, lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => {
                            s.sort();
                            return Ok(s);
                        }
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        insert(&mut s, String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        insert(&mut s, String::new());
                        s.sort();
                        return Ok(s);
                    }
                    if tok2 == Token::Comma {
                        insert(&mut s, String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// `parseExactValue`: one value, possibly empty.
    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Token::EndOfString || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Field selectors.
// ---------------------------------------------------------------------------------------------

/// One term of a field selector: `hasTerm` (`=`, `==`) or `notHasTerm` (`!=`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    not: bool,
    value: String,
}

/// A parsed field selector (`fields.Selector`): the AND of `field=value` / `field!=value`
/// terms, sorted as upstream sorts them (by the raw term text).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

/// `fields.EscapeValue`: prefixes `\`, `,` and `=` with a backslash.
pub fn escape_field_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `fields.UnescapeValue`.
fn unescape_field_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut v = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => v.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ));
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // UnescapedRune's %v of a rune prints its code point number.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            _ => v.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(v)
}

/// `splitTerms`: splits on commas that are not backslash-escaped.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// `splitTerm`: the first `!=`, `==` or `=` (checked in that order at each position).
fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        let remaining = &term[i..];
        for op in ["!=", "==", "="] {
            if remaining.starts_with(op) {
                return Some((&term[..i], op, &term[i + op.len()..]));
            }
        }
    }
    None
}

impl FieldSelector {
    /// `fields.ParseSelector`: comma-separated `field=value`, `field==value`, `field!=value`;
    /// values unescaped (`\,`, `\=`, `\\`). Errors are upstream's texts.
    pub fn parse(s: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(s);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let value = unescape_field_value(rhs)?;
            // Transform with the identity: a term whose field and value are both empty is
            // Everything() and disappears.
            if lhs.is_empty() && value.is_empty() {
                continue;
            }
            terms.push(FieldTerm {
                field: lhs.to_string(),
                not: op == "!=",
                value,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// `Selector.Requirements`: `(field, "=" | "!=", value)` (`==` is reported as `=`).
    pub fn requirements(&self) -> Vec<(String, String, String)> {
        self.terms
            .iter()
            .map(|t| {
                (
                    t.field.clone(),
                    if t.not { "!=" } else { "=" }.to_string(),
                    t.value.clone(),
                )
            })
            .collect()
    }

    /// `Selector.Matches`: `fields` returns a field's value; a missing field reads as `""`
    /// (`fields.Set.Get`).
    pub fn matches(&self, fields: &dyn Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|t| {
            let have = fields(&t.field).unwrap_or_default();
            (have == t.value) != t.not
        })
    }

    /// `Selector.Empty`.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// `Selector.RequiresExactMatch`: the value the first `field=value` term requires.
    pub fn requires_exact_match(&self, field: &str) -> Option<String> {
        self.terms
            .iter()
            .find(|t| !t.not && t.field == field)
            .map(|t| t.value.clone())
    }
}

impl fmt::Display for FieldSelector {
    /// `Selector.String`: values escaped with [`escape_field_value`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if t.not { "!=" } else { "=" };
            write!(f, "{}{op}{}", t.field, escape_field_value(&t.value))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY_NAME_ERR: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    #[test]
    fn label_selector_operators_match() {
        let labels = json!({"app": "olmctl", "tier": "backend", "example.com/owner": "ops", "n": "5", "empty": ""});
        let cases: Vec<(&str, bool)> = vec![
            ("", true),
            ("app=olmctl", true),
            ("app==olmctl", true),
            ("app=other", false),
            ("app!=other", true),
            ("app!=olmctl", false),
            ("missing!=x", true),
            ("app in (olmctl,x)", true),
            ("app in (x, y)", false),
            ("missing in (x)", false),
            ("app notin (x,y)", true),
            ("app notin (olmctl)", false),
            ("missing notin (x)", true),
            ("app", true),
            ("missing", false),
            ("!missing", true),
            ("!app", false),
            ("example.com/owner=ops", true),
            ("empty=", true),
            ("empty in ()", true),
            ("app in (,olmctl)", true),
            ("n>4", true),
            ("n>5", false),
            ("n<6", true),
            ("app<6", false),
            ("app=olmctl,tier=backend", true),
            ("app=olmctl, tier=frontend", false),
            ("  app  =  olmctl ", true),
            ("in=x", false),
            ("x in (in,notin)", false),
        ];
        for (s, want) in cases {
            let sel = LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(sel.matches(&labels), want, "{s}");
        }
        let sel = LabelSelector::parse("app").expect("parses");
        assert!(!sel.matches(&Value::Null));
        assert!(
            LabelSelector::parse("!app")
                .expect("parses")
                .matches(&Value::Null)
        );
        assert!(LabelSelector::parse("").expect("parses").is_empty());
        assert!(!sel.is_empty());
    }

    #[test]
    fn label_selector_parse_errors() {
        let cases: Vec<(&str, String)> = vec![
            ("x=a,", "found '', expected: identifier after ','".to_string()),
            ("=x", "found '=', expected: !, identifier, or 'end of string'".to_string()),
            ("x in", "unable to parse requirement: found '' expected: '('".to_string()),
            ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'".to_string()),
            ("x in (a,", "unable to parse requirement: found '', expected: ',', or identifier".to_string()),
            ("x in (", "unable to parse requirement: found '', expected: ',', ')' or identifier".to_string()),
            ("x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt".to_string()),
            ("x=a b", "found 'b', expected: ',' or 'end of string'".to_string()),
            ("x=(", "unable to parse requirement: found '(', expected: identifier".to_string()),
            ("x (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt".to_string()),
            ("!", "unable to parse requirement: found '', expected: identifier".to_string()),
            ("!x=y", "found '=', expected: ',' or 'end of string'".to_string()),
            ("x>a", "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer".to_string()),
            ("x>-1", format!("unable to parse requirement: values[0][x]: Invalid value: \"-1\": {VALUE_ERR}")),
            ("x=a/b", format!("unable to parse requirement: values[0][x]: Invalid value: \"a/b\": {VALUE_ERR}")),
            ("x in (-a,-b)", format!("unable to parse requirement: [values[0][x]: Invalid value: \"-a\": {VALUE_ERR}, values[1][x]: Invalid value: \"-b\": {VALUE_ERR}]")),
            (
                "x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "unable to parse requirement: values[0][x]: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": must be no more than 63 bytes".to_string(),
            ),
            ("-x", format!("unable to parse requirement: <nil>: Invalid value: \"-x\": {KEY_NAME_ERR}")),
            ("a/b/c", "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string()),
            ("/x", "unable to parse requirement: <nil>: Invalid value: \"/x\": prefix part must be non-empty".to_string()),
            ("Example.com/x", "unable to parse requirement: <nil>: Invalid value: \"Example.com/x\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string()),
            ("x/", format!("unable to parse requirement: <nil>: Invalid value: \"x/\": name part must be non-empty; {KEY_NAME_ERR}")),
            (
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "unable to parse requirement: <nil>: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": name part must be no more than 63 bytes".to_string(),
            ),
        ];
        for (s, want) in cases {
            assert_eq!(LabelSelector::parse(s), Err(want), "{s:?}");
        }
    }

    #[test]
    fn label_selector_string_and_requirements() {
        let cases = [
            ("b=1,a", "a,b=1"),
            ("x in (c,a,b,a)", "x in (a,b,c)"),
            ("!x , y notin ( p )", "!x,y notin (p)"),
            ("x==y,z!=w,n>1,m<2", "m<2,n>1,x==y,z!=w"),
            ("x in (,)", "x in ()"),
        ];
        for (s, want) in cases {
            assert_eq!(
                LabelSelector::parse(s).expect("parses").to_string(),
                want,
                "{s}"
            );
        }
        let sel = LabelSelector::parse("x in (b,a)").expect("parses");
        let r = &sel.requirements()[0];
        assert_eq!(
            (r.key(), r.operator().as_str(), r.values()),
            ("x", "in", &["a".to_string(), "b".to_string()][..])
        );
        // The lexer reads a NUL byte as the end of input: it ends a token (and is dropped) or,
        // where a token starts, the whole selector, as upstream.
        assert_eq!(
            LabelSelector::parse("a\0=b").expect("parses").to_string(),
            "a=b"
        );
        assert!(LabelSelector::parse(" \0a=b").expect("parses").is_empty());
    }

    #[test]
    fn metav1_label_selector() {
        let sel = LabelSelector::from_label_selector(&json!({
            "matchLabels": {"app": "x"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "gone", "operator": "DoesNotExist"},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "app", "operator": "Exists"},
            ]
        }))
        .expect("valid");
        assert!(sel.matches(&json!({"app": "x", "tier": "a"})));
        assert!(!sel.matches(&json!({"app": "x", "tier": "a", "env": "prod"})));
        assert!(!sel.matches(&json!({"app": "x", "tier": "a", "gone": ""})));
        assert!(
            LabelSelector::from_label_selector(&json!({}))
                .expect("valid")
                .is_empty()
        );
        let nothing = LabelSelector::from_label_selector(&Value::Null).expect("valid");
        assert!(!nothing.is_empty() && !nothing.matches(&json!({})));
        let errs = [
            (json!({"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1"]}]}), "\"Gt\" is not a valid label selector operator".to_string()),
            (json!({"matchExpressions": [{"key": "k", "operator": "In", "values": []}]}), "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty".to_string()),
            (json!({"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["a"]}]}), "values: Invalid value: [\"a\"]: values set must be empty for exists and does not exist".to_string()),
            (json!({"matchLabels": {"-k": "v"}}), format!("key: Invalid value: \"-k\": {KEY_NAME_ERR}")),
        ];
        for (v, want) in errs {
            assert_eq!(LabelSelector::from_label_selector(&v), Err(want));
        }
    }

    #[test]
    fn field_selectors() {
        let obj = |f: &str| match f {
            "metadata.name" => Some("p".to_string()),
            "metadata.namespace" => Some("ns".to_string()),
            "spec.v" => Some("a,b=c\\".to_string()),
            _ => None,
        };
        type Case = (
            &'static str,
            bool,
            &'static [(&'static str, &'static str, &'static str)],
        );
        let cases: Vec<Case> = vec![
            ("", true, &[]),
            ("metadata.name=p", true, &[("metadata.name", "=", "p")]),
            ("metadata.name==p", true, &[("metadata.name", "=", "p")]),
            ("metadata.name!=p", false, &[("metadata.name", "!=", "p")]),
            ("metadata.name=q", false, &[("metadata.name", "=", "q")]),
            (
                "metadata.namespace=ns,metadata.name=p",
                true,
                &[
                    ("metadata.name", "=", "p"),
                    ("metadata.namespace", "=", "ns"),
                ],
            ),
            ("spec.v=a\\,b\\=c\\\\", true, &[("spec.v", "=", "a,b=c\\")]),
            ("missing=", true, &[("missing", "=", "")]),
            ("missing!=", false, &[("missing", "!=", "")]),
            ("=", true, &[]),
            ("a=b,", false, &[("a", "=", "b")]),
            (",,metadata.name=p,", true, &[("metadata.name", "=", "p")]),
        ];
        for (s, want, reqs) in cases {
            let sel = FieldSelector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            let want_reqs: Vec<(String, String, String)> = reqs
                .iter()
                .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
                .collect();
            assert_eq!(sel.requirements(), want_reqs, "{s}");
            assert_eq!(sel.matches(&obj), want, "{s}");
            assert_eq!(sel.is_empty(), reqs.is_empty(), "{s}");
        }
        let sel = FieldSelector::parse("metadata.namespace=ns,metadata.name==p").expect("parses");
        assert_eq!(
            sel.requires_exact_match("metadata.name"),
            Some("p".to_string())
        );
        assert_eq!(sel.to_string(), "metadata.name=p,metadata.namespace=ns");
        assert_eq!(
            FieldSelector::parse("spec.v=a\\,b")
                .expect("parses")
                .to_string(),
            "spec.v=a\\,b"
        );
        let errors = [
            ("a", "invalid selector: 'a'; can't understand 'a'"),
            ("x=1,b", "invalid selector: 'x=1,b'; can't understand 'b'"),
            (
                "a=b=c",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                "a=\\x",
                "invalid field selector: invalid escape sequence: \\x",
            ),
            (
                "a=b\\",
                "invalid field selector: invalid escape sequence: \\",
            ),
            (
                "a!==b",
                "invalid field selector: unescaped character in value: 61",
            ),
            ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
        ];
        for (s, want) in errors {
            assert_eq!(FieldSelector::parse(s), Err(want.to_string()), "{s}");
        }
    }

    #[test]
    fn go_quoting() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
        assert_eq!(escape_field_value("a,b=c\\"), "a\\,b\\=c\\\\");
    }
}
