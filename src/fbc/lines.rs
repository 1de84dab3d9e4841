//! One package's blobs out of a catalog as catalogd serves it (`/api/v1/all`: JSON Lines, one
//! blob a line; catalogd `internal/catalogd/storage/localdir.go`), read as the bytes arrive.
//! What reading a catalog holds is then one line and that package's blobs, not the catalog: a
//! community index is tens of megabytes of JSON, which parsed whole would take the 128 MiB
//! olmctl-operator pod past its limit.
//!
//! A blob is the package's when its `package` names it, or it is the `olm.package` blob named
//! after it (the keys every schema uses: `olm.channel`, `olm.bundle`, `olm.deprecations` and
//! custom schemas carry `package`). Lines are bounded ([`MAX_LINE`]), and so is what is kept
//! ([`MAX_KEPT`]).

use std::fmt;

use serde::Deserialize;

/// The longest line (one blob) read: about 100 times the largest blob of the v4.18 fixture
/// catalog (172 KB, a bundle with its objects).
pub const MAX_LINE: usize = 16 << 20;

/// The most one package's blobs may hold: 16 times the largest package of the v4.18 fixture
/// catalog (dell-csm-operator, 2.0 MB).
pub const MAX_KEPT: usize = 32 << 20;

/// Why the lines could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A line longer than [`MAX_LINE`].
    LineTooLong {
        /// Its 1-based number.
        line: usize,
    },
    /// The package's blobs hold more than [`MAX_KEPT`] bytes.
    TooMuch,
    /// A line that is not a JSON value.
    NotJson {
        /// Its 1-based number.
        line: usize,
        /// The parser's message.
        message: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::LineTooLong { line } => {
                write!(f, "line {line}: a blob longer than {MAX_LINE} bytes")
            }
            Error::TooMuch => write!(f, "the package's blobs hold more than {MAX_KEPT} bytes"),
            Error::NotJson { line, message } => write!(f, "line {line}: {message}"),
        }
    }
}

impl std::error::Error for Error {}

/// What a line says of itself (the rest of the blob is skipped, not built).
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    schema: Option<String>,
    #[serde(default)]
    package: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

/// The blobs of one package, kept from lines pushed as they arrive.
#[derive(Debug)]
pub struct PackageLines {
    package: String,
    pending: Vec<u8>,
    kept: String,
    line: usize,
}

impl PackageLines {
    /// Keeps the blobs of `package`.
    pub fn new(package: &str) -> PackageLines {
        PackageLines {
            package: package.to_string(),
            pending: Vec::new(),
            kept: String::new(),
            line: 0,
        }
    }

    /// The next bytes of the stream.
    pub fn push(&mut self, mut chunk: &[u8]) -> Result<(), Error> {
        while let Some(at) = chunk.iter().position(|b| *b == b'\n') {
            let (head, rest) = chunk.split_at(at);
            chunk = &rest[1..];
            if self.pending.len() + head.len() > MAX_LINE {
                return Err(Error::LineTooLong {
                    line: self.line + 1,
                });
            }
            if self.pending.is_empty() {
                self.line(head)?;
            } else {
                let mut line = std::mem::take(&mut self.pending);
                line.extend_from_slice(head);
                self.line(&line)?;
            }
        }
        if self.pending.len() + chunk.len() > MAX_LINE {
            return Err(Error::LineTooLong {
                line: self.line + 1,
            });
        }
        self.pending.extend_from_slice(chunk);
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> Result<(), Error> {
        self.line += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let not_json = |message: String| Error::NotJson {
            line: self.line,
            message,
        };
        let text = std::str::from_utf8(line).map_err(|e| not_json(e.to_string()))?;
        // Only objects are blobs; the loader reports anything else.
        let ours = match serde_json::from_str::<Head>(text) {
            Ok(h) => {
                h.package.as_deref() == Some(&self.package)
                    || (h.schema.as_deref() == Some("olm.package")
                        && h.name.as_deref() == Some(&self.package))
            }
            Err(e) if e.is_data() => false,
            Err(e) => return Err(not_json(e.to_string())),
        };
        if ours {
            if self.kept.len() + text.len() + 1 > MAX_KEPT {
                return Err(Error::TooMuch);
            }
            self.kept.push_str(text);
            self.kept.push('\n');
        }
        Ok(())
    }

    /// The package's blobs, one a line, once the stream has ended.
    pub fn finish(mut self) -> Result<String, Error> {
        if !self.pending.is_empty() {
            let last = std::mem::take(&mut self.pending);
            self.line(&last)?;
        }
        Ok(self.kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep(package: &str, text: &str, chunk: usize) -> Result<String, Error> {
        let mut p = PackageLines::new(package);
        for c in text.as_bytes().chunks(chunk) {
            p.push(c)?;
        }
        p.finish()
    }

    #[test]
    fn keeps_the_package_blobs_in_order_whatever_the_chunks() {
        let text = concat!(
            r#"{"schema":"olm.package","name":"a","defaultChannel":"s"}"#,
            "\n",
            r#"{"schema":"olm.package","name":"b"}"#,
            "\n\n",
            r#"{"schema":"olm.channel","package":"a","name":"s","entries":[{"name":"a.v1"}]}"#,
            "\n",
            r#"{"schema":"olm.bundle","package":"b","name":"b.v1","properties":[{"type":"olm.package","value":{"packageName":"a"}}]}"#,
            "\n",
            r#"{"schema":"olm.bundle","package":"a","name":"a.v1"}"#,
            "\n",
            r#"{"schema":"custom","package":"a","x":[1,[2,{"y":null}]]}"#,
        );
        let want = [0usize, 3, 5, 6]
            .iter()
            .map(|&i| format!("{}\n", text.split('\n').nth(i).unwrap()))
            .collect::<String>();
        for chunk in [1, 2, 7, 64, 4096] {
            assert_eq!(keep("a", text, chunk).unwrap(), want, "chunks of {chunk}");
        }
        assert_eq!(keep("c", text, 5).unwrap(), "");
    }

    #[test]
    fn lines_and_what_is_kept_are_bounded() {
        let long = format!("{}\n", " ".repeat(MAX_LINE + 1));
        assert_eq!(
            keep("a", &format!("{{}}\n{long}"), 1 << 20),
            Err(Error::LineTooLong { line: 2 })
        );
        // Without a line break anywhere: refused once the pending line is too long.
        let mut p = PackageLines::new("a");
        for _ in 0..16 {
            assert!(p.push(&[b' '; 1 << 20]).is_ok());
        }
        assert_eq!(p.push(b" "), Err(Error::LineTooLong { line: 1 }));
        let blob = format!(r#"{{"package":"a","pad":"{}"}}"#, "x".repeat(1 << 20));
        let many = format!("{blob}\n").repeat(MAX_KEPT / (1 << 20) + 1);
        assert_eq!(keep("a", &many, 1 << 16), Err(Error::TooMuch));
        // Another package's blobs cost nothing kept.
        assert_eq!(keep("b", &many, 1 << 16).unwrap(), "");
        let e = keep("a", "{\"package\": \"a\"\n", 3).unwrap_err();
        assert!(matches!(e, Error::NotJson { line: 1, .. }), "{e:?}");
        // A line that is JSON but no object is left to the loader.
        assert_eq!(keep("a", "[1]\n\"x\"\n", 2).unwrap(), "");
    }
}
