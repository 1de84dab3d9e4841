//! Values from a catalog in GitHub-flavoured Markdown, made inert: whatever a package, bundle or
//! channel name, a property type, a skipRange or a deprecation message (free text by design)
//! says, it shows as itself and cannot end a table row or cell, start a block (heading, list,
//! table), or become a link, an image, HTML, emphasis, a mention, an issue reference or an
//! autolink in a pull-request comment.
//!
//! Every value is a code span, after [`crate::text::escape`] (the escaping of every text
//! output: no newline or control character survives, so a value stays on its line). Why code
//! spans and not backslash or entity escapes: GitHub links `@user`, `@org/team`, `#123` and bare
//! URLs in the *rendered* text, after Markdown is parsed, so `&#64;user` becomes `@user` again
//! and is linked; text inside `<code>` is never linked. In a code span nothing else is
//! interpreted either: emphasis, links, entities and HTML are literal. The fence is one backtick
//! longer than the longest run of backticks in the value, and a value that starts or ends with a
//! backtick or a space is padded with one space on each side (which the renderer strips). A GFM
//! table splits rows at `|` before inline parsing, also inside code spans, so a table cell writes
//! `|` as `\|` ([`cell`]). Raw HTML (a `<summary>`) is not Markdown: there the value is HTML-escaped
//! inside `<code>` ([`html_code`]).

use crate::text::escape;

/// The fence and padding for a code span of `v`.
fn span(v: &str) -> String {
    let longest = v.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = v.is_empty() || v.starts_with(['`', ' ']) || v.ends_with(['`', ' ']);
    let sp = if pad { " " } else { "" };
    format!("{fence}{sp}{v}{sp}{fence}")
}

/// `value` as an inert code span, for text outside tables (list items, headings).
pub fn code(value: &str) -> String {
    span(&escape(value))
}

/// `value` as an inert code span in a GFM table cell: `|` written `\|`.
pub fn cell(value: &str) -> String {
    span(&escape(value).replace('|', "\\|"))
}

/// `value` as `<code>` in raw HTML (a `<details>` summary), HTML-escaped.
pub fn html_code(value: &str) -> String {
    format!("<code>{}</code>", crate::text::html_escape(&escape(value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_fence_past_every_backtick_run() {
        assert_eq!(code("plain"), "`plain`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("a```b``c"), "````a```b``c````");
        assert_eq!(code("`a"), "`` `a ``");
        assert_eq!(code("a `"), "`` a ` ``");
        assert_eq!(code(""), "`  `");
        assert_eq!(
            code("[x](http://e) <b> @u *e*"),
            "`[x](http://e) <b> @u *e*`"
        );
    }

    #[test]
    fn controls_and_newlines_are_escaped_first() {
        assert_eq!(code("a\n# h"), "`a\\n# h`");
        assert_eq!(code("\u{1b}[2J\u{202e}"), "`\\u{1b}[2J\\u{202e}`");
    }

    #[test]
    fn table_cells_escape_pipes() {
        assert_eq!(code("a|b"), "`a|b`");
        assert_eq!(cell("a|b"), "`a\\|b`");
        assert_eq!(cell("`a|b`"), "`` `a\\|b` ``");
    }

    #[test]
    fn html_code_escapes_markup() {
        assert_eq!(
            html_code("</code><img src=x>&\n"),
            "<code>&lt;/code&gt;&lt;img src=x&gt;&amp;\\n</code>"
        );
    }
}
