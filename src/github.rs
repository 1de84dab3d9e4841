//! Findings as GitHub Actions workflow commands (`::error file=F,line=L,col=C,title=T::message`),
//! which the runner turns into annotations on the run and on the pull request's files without a
//! SARIF upload.
//!
//! The syntax and escaping follow GitHub's toolkit (`@actions/core`, `command.ts`): the message
//! is `escapeData` (`%`, CR and LF percent-encoded), property values `escapeProperty` (also `:`
//! and `,`); `line`/`col` are the 1-based position (`startLine`/`startColumn` in
//! `AnnotationProperties`). Errors are `::error`, warnings `::warning`, info `::notice`. Paths are
//! relative to `base` (the workspace: `$GITHUB_WORKSPACE`), which is how the runner matches them
//! to the repository's files. One line per finding, in the findings' order.
//!
//! On top of the toolkit's escaping, which leaves every other character as it is: the control
//! and bidirectional characters of [`crate::text::needs_escape`] but CR and LF (which the
//! toolkit percent-encodes, and the runner decodes into line breaks of the annotation) are
//! written as [`crate::text::escape`] writes them (`\u{1b}`, `\t`). The runner prints a line
//! it does not take as a command as it is, and shows the annotation's message and file, so a
//! raw ESC, BEL or U+202E from a file name or a catalog value would reach the log and the pull
//! request. Text without such characters is escaped exactly as the toolkit escapes it.

use std::fmt::Write as _;
use std::path::Path;

use crate::diag::{Finding, Severity};
use crate::text;

/// `escapeData` of `@actions/core` (`%`, CR, LF), plus [`text::escape`] of the other characters
/// [`text::needs_escape`] names.
fn escape_data(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c if text::needs_escape(c) => out.push_str(&text::escape(c.encode_utf8(&mut [0; 4]))),
            c => out.push(c),
        }
    }
    out
}

/// `escapeProperty` of `@actions/core` (also `:` and `,`), over [`escape_data`].
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The workflow command of each finding, one a line.
pub fn render(findings: &[Finding], base: Option<&Path>) -> String {
    let mut out = String::new();
    for f in findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props: Vec<(&str, String)> = Vec::new();
        props.push(("title", format!("olmctl {}", f.code)));
        if let Some(loc) = &f.location {
            props.push(("file", loc.relative_path(base)));
            if loc.line > 0 {
                props.push(("line", loc.line.to_string()));
                if loc.column > 0 {
                    props.push(("col", loc.column.to_string()));
                }
            }
        }
        let props: Vec<String> = props
            .iter()
            .map(|(k, v)| format!("{k}={}", escape_property(v)))
            .collect();
        let _ = writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            escape_data(&f.details())
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Location, Subject};
    use std::sync::Arc;

    #[test]
    fn commands_carry_the_place_and_escape_as_the_toolkit() {
        let f = Finding::new(
            &crate::checks::fbc::codes::ENTRY_NO_BUNDLE,
            "100% broken,\r\nreally: yes",
        )
        .at(Some(Location::new(
            Arc::from(Path::new("/w/catalog/p, q/catalog.yaml")),
            9,
            3,
        )))
        .help("remove it");
        let mut g = Finding::new(&crate::checks::safety::walk::UNCHECKED, "not checked");
        g.subject = Subject::package("p");
        g.severity = Severity::Info;
        assert_eq!(
            render(&[f, g], Some(Path::new("/w"))),
            "::error title=olmctl FBC025,file=catalog/p%2C q/catalog.yaml,line=9,col=3::100%25 \
             broken,%0D%0Areally: yes%0Ahelp: remove it\n\
             ::notice title=olmctl EDGE001::not checked%0Apackage `p`\n"
        );
    }

    #[test]
    fn control_and_bidi_characters_are_escaped_on_top() {
        let f = Finding::new(
            &crate::checks::fbc::codes::ENTRY_NO_BUNDLE,
            "a\u{1b}]0;x\u{7}\tb\u{9b}c\u{202e}d\u{2066}e%\r\n",
        )
        .at(Some(Location::new(
            Arc::from(Path::new("/w/c\u{1b}[2J,\u{202e}:/catalog.yaml")),
            1,
            0,
        )));
        assert_eq!(
            render(&[f], Some(Path::new("/w"))),
            "::error title=olmctl FBC025,file=c\\u{1b}[2J%2C\\u{202e}%3A/catalog.yaml,\
             line=1::a\\u{1b}]0;x\\u{7}\\tb\\u{9b}c\\u{202e}d\\u{2066}e%25%0D%0A\n"
        );
    }
}
