//! Text for terminals and CI logs. File names, catalog values, registry replies and other text
//! olmctl did not write itself are shown with their control characters escaped, so that they
//! cannot move the cursor, clear the screen, ring the bell or forge lines (`ok: ...`, a fake
//! finding). The line structure olmctl emits is its own; a newline inside a value is `\n`.
//!
//! Escaped: every C0 control (including newline, carriage return and tab), DEL, the C1 controls,
//! the Unicode line and paragraph separators, and the bidirectional marks, embeddings, overrides
//! and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) that reorder what a
//! reader sees. `\n`, `\r` and `\t` keep their short form, everything else becomes `\u{1b}`
//! (Rust's notation). Backslashes are left alone: the point is a safe display, not a reversible
//! encoding. JSON output needs none of this (serde_json escapes controls itself).
//!
//! [`escape`] is the one function every text writer puts such values through: findings
//! (`diag::render_text`), graphs, paths, listings, `catalog diff` (text, and Markdown by way of
//! the `markdown` module), workflow commands (`github`, on top of the toolkit's escaping) and
//! the command line's messages. [`needs_escape`] also decides what the YAML emitter
//! (`fbc::emit_yaml`) writes escaped in double quotes, and which file names completion leaves
//! out. The modules above
//! call it; this bottom layer names them in plain text, not as links.
//! `cli/tests/hostile_output.rs` runs every command of the command line (clap's list, so a new one
//! fails the test until it is added) with hostile values and finds no raw control character.

use std::borrow::Cow;
use std::fmt;

/// Names a list of items in one phrase: all of them (`a, b, c`) when there are at most
/// `shown + 1`, else the first `shown` and a count (`a, b and 12 more`).
pub fn and_more<S: AsRef<str>>(items: &[S], shown: usize) -> String {
    let names = |xs: &[S]| xs.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(", ");
    if items.len() <= shown + 1 {
        names(items)
    } else {
        format!(
            "{} and {} more",
            names(&items[..shown]),
            items.len() - shown
        )
    }
}

/// The Levenshtein distance between `a` and `b`, by characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `key` by [`edit_distance`] when it is close enough to be a typo
/// (at most a quarter of its length away, and at least 2 allowed), the first of equals; else
/// the one sharing the longest start with it, letters and digits only, when that start is at
/// least 4 characters and half the candidate (`cloud-native-postgres` → `cloudnative-pg`).
pub fn nearest<'a>(key: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&str> = candidates.into_iter().filter(|c| *c != key).collect();
    let close = candidates
        .iter()
        .map(|c| (edit_distance(key, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.chars().count() / 4) && *d < c.chars().count())
        .min()
        .map(|(_, c)| c);
    close.or_else(|| {
        let plain = |s: &str| -> Vec<char> {
            s.chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect()
        };
        let k = plain(key);
        candidates
            .iter()
            .map(|c| {
                let p = plain(c);
                let common = k.iter().zip(&p).take_while(|(a, b)| a == b).count();
                (common, p.len(), *c)
            })
            .filter(|(common, len, _)| *common >= 4 && *common * 2 >= *len)
            .max_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(a.2)))
            .map(|(_, _, c)| c)
    })
}

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Whether `c` is escaped by [`escape`].
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// `s` with every character [`needs_escape`] names written as an escape (`\n`, `\r`, `\t`,
/// else `\u{..}`); borrowed when there is nothing to escape.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Displays a value with [`escape`] applied; width and alignment (`{:<24}`) apply to the
/// escaped text.
#[derive(Debug, Clone, Copy)]
pub struct Esc<T>(pub T);

impl<T: fmt::Display> fmt::Display for Esc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0.to_string();
        f.pad(&escape(&s))
    }
}

/// Wraps `v` for display with its control characters escaped: `format!("{}", esc(name))`.
pub fn esc<T: fmt::Display>(v: T) -> Esc<T> {
    Esc(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_a_likely_typo_only() {
        let names = [
            "victoriametrics-operator.v0.70.1",
            "victoriametrics-operator.v0.68.4",
        ];
        assert_eq!(
            nearest("victoriametrics-operator.v0.70.0", names),
            Some("victoriametrics-operator.v0.70.1")
        );
        assert_eq!(nearest("banana", ["1.0.0", "2.0.0"]), None);
        assert_eq!(
            nearest(
                "cloud-native-postgres",
                ["clife", "cloudnative-pg", "hulft"]
            ),
            Some("cloudnative-pg")
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn long_lists_are_cut_with_a_count() {
        assert_eq!(and_more(&["a", "b", "c"], 2), "a, b, c");
        assert_eq!(and_more(&["a", "b", "c", "d"], 2), "a, b and 2 more");
        assert_eq!(and_more::<&str>(&[], 2), "");
    }

    #[test]
    fn escapes_controls_and_bidi() {
        assert_eq!(escape("plain name-1.0"), "plain name-1.0");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape("a\x1b[2Jb\nc\rd\te\x07f\x7fg"),
            "a\\u{1b}[2Jb\\nc\\rd\\te\\u{7}f\\u{7f}g"
        );
        assert_eq!(escape("\u{85}\u{9b}"), "\\u{85}\\u{9b}");
        assert_eq!(escape("x\u{202e}y\u{2066}z"), "x\\u{202e}y\\u{2066}z");
        assert_eq!(escape("é ü 日本"), "é ü 日本");
        assert_eq!(format!("[{:<6}]", esc("a\nb")), "[a\\nb  ]");
    }
}

/// An API server's URL as errors and logs name it: `scheme://host:port/path`, without the
/// user information a URL may carry (credentials never appear in errors).
pub fn server_name(url: &http::Uri) -> String {
    format!(
        "{}://{}{}{}",
        url.scheme_str().unwrap_or("https"),
        url.host().unwrap_or_default(),
        url.port_u16().map(|p| format!(":{p}")).unwrap_or_default(),
        url.path().trim_end_matches('/')
    )
}

#[cfg(test)]
mod server_name_tests {
    use super::server_name;

    #[test]
    fn server_names_leave_credentials_out() {
        let name = |u: &str| server_name(&u.parse().expect("uri"));
        assert_eq!(name("https://10.96.0.1:443/"), "https://10.96.0.1:443");
        assert_eq!(
            name("https://user:secret@api.example.com:6443/k8s/clusters/c-1/"),
            "https://api.example.com:6443/k8s/clusters/c-1"
        );
        assert_eq!(name("http://[::1]:8080"), "http://[::1]:8080");
    }
}
