//! What no text output may carry raw, as the tests see it: written as ranges here, apart from
//! the library's own `text::needs_escape`, so a character that one forgets the other catches.

/// C0 controls but the newline (olmctl's own line ends), DEL and C1, the Arabic letter mark,
/// the LTR/RTL marks, the line and paragraph separators, the bidi embeddings and overrides
/// (U+202A–U+202E) and isolates (U+2066–U+2069).
const RAW: &[(char, char)] = &[
    ('\u{0}', '\u{9}'),
    ('\u{b}', '\u{1f}'),
    ('\u{7f}', '\u{9f}'),
    ('\u{61c}', '\u{61c}'),
    ('\u{200e}', '\u{200f}'),
    ('\u{2028}', '\u{202e}'),
    ('\u{2066}', '\u{2069}'),
];

/// Whether `c` must not appear raw in text output.
pub fn is_raw_control(c: char) -> bool {
    RAW.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Panics naming the first raw control character of `s` and its line.
pub fn assert_no_raw_controls(what: &str, s: &str) {
    for (n, l) in s.split('\n').enumerate() {
        if let Some(c) = l.chars().find(|&c| is_raw_control(c)) {
            panic!("{what}: raw {c:?} on line {}: {l:?}\nin:\n{s}", n + 1);
        }
    }
}
