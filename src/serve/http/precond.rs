//! Conditional and range requests, as catalogd answers them:
//!
//! - `/metas` uses catalogd's copy of Go's precondition checks
//!   (`internal/catalogd/server/http_preconditions_check.go :: checkPreconditions`), including
//!   its quirk: a malformed `If-Modified-Since` writes a 500 error and then the answer anyway.
//! - `/all` goes through `http.ServeContent` (`net/http/fs.go :: checkPreconditions`,
//!   `checkIfRange`, `parseRange`), where a malformed date is ignored and `Range` and
//!   `If-Range` apply.
//!
//! Neither has an ETag, so `If-Match` holds only for `*`, `If-None-Match` fails only for `*`.
//! Times are whole seconds: `Last-Modified` has no fraction and the file time is truncated.

use super::date;

/// The request's conditional headers (the first value of each).
#[derive(Debug, Default, Clone)]
pub struct Conditions {
    /// GET or HEAD.
    pub get_or_head: bool,
    /// `If-Match`.
    pub if_match: Option<String>,
    /// `If-Unmodified-Since`.
    pub if_unmodified_since: Option<String>,
    /// `If-None-Match`.
    pub if_none_match: Option<String>,
    /// `If-Modified-Since`.
    pub if_modified_since: Option<String>,
    /// `Range`.
    pub range: Option<String>,
    /// `If-Range`.
    pub if_range: Option<String>,
}

/// What the preconditions decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// 412 Precondition Failed.
    Failed,
    /// 304 Not Modified.
    NotModified,
    /// Answer; with the `Range` header still in force (`ServeContent` only), and whether
    /// catalogd's checks met a malformed `If-Modified-Since` (they wrote a 500 first).
    Serve {
        /// The range to serve.
        range: Option<String>,
        /// catalogd's 500 quirk.
        malformed_since: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cond {
    None,
    True,
    False,
}

/// `textproto.TrimString`: ASCII space, tab, CR and LF off both ends.
fn trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

/// `scanETag`: a strong or weak entity tag at the start of `s` and the rest, or `None`.
fn scan_etag(s: &str) -> Option<(&str, &str)> {
    let s = trim(s);
    let start = if s.starts_with("W/") { 2 } else { 0 };
    let b = s.as_bytes();
    if b.len() < start + 2 || b[start] != b'"' {
        return None;
    }
    for (i, &c) in b.iter().enumerate().skip(start + 1) {
        match c {
            0x21 | 0x23..=0x7e | 0x80..=0xff => {}
            b'"' => return Some((&s[..i + 1], &s[i + 1..])),
            _ => return None,
        }
    }
    None
}

/// `If-Match` or `If-None-Match` against a resource without an ETag: does the list hold `*`
/// (before a malformed tag ends it)?
fn has_star(list: &str) -> bool {
    let mut buf = list;
    loop {
        buf = trim(buf);
        if buf.is_empty() {
            return false;
        }
        if let Some(rest) = buf.strip_prefix(',') {
            buf = rest;
            continue;
        }
        if buf.starts_with('*') {
            return true;
        }
        match scan_etag(buf) {
            Some((_, rest)) => buf = rest,
            None => return false,
        }
    }
}

/// Checks the preconditions against `modtime` (seconds): catalogd's copy for `/metas`
/// (`serve_content == false`) or `http.ServeContent`'s for `/all`.
pub fn check(c: &Conditions, modtime: i64, serve_content: bool) -> Outcome {
    // checkIfMatch, then checkIfUnmodifiedSince when there is no If-Match.
    let mut ch = match &c.if_match {
        None => Cond::None,
        Some(im) if im.is_empty() => Cond::None,
        Some(im) if has_star(im) => Cond::True,
        Some(_) => Cond::False,
    };
    if ch == Cond::None {
        ch = match c.if_unmodified_since.as_deref().filter(|s| !s.is_empty()) {
            None => Cond::None,
            Some(ius) => match date::parse(ius) {
                None => Cond::None,
                Some(t) if modtime <= t => Cond::True,
                Some(_) => Cond::False,
            },
        };
    }
    if ch == Cond::False {
        return Outcome::Failed;
    }
    let mut malformed_since = false;
    match c.if_none_match.as_deref().filter(|s| !s.is_empty()) {
        Some(inm) => {
            if has_star(inm) {
                return if c.get_or_head {
                    Outcome::NotModified
                } else {
                    Outcome::Failed
                };
            }
        }
        None => {
            let ims = c.if_modified_since.as_deref().filter(|s| !s.is_empty());
            // ServeContent looks at If-Modified-Since only for GET and HEAD.
            if let Some(ims) = ims.filter(|_| c.get_or_head || !serve_content) {
                match date::parse(ims) {
                    Some(t) if modtime <= t => return Outcome::NotModified,
                    Some(_) => {}
                    None => malformed_since = !serve_content,
                }
            }
        }
    }
    let mut range = None;
    if serve_content
        && let Some(r) = c.range.as_deref().filter(|r| !r.is_empty())
        && if_range(c, modtime)
    {
        range = Some(r.to_string());
    }
    Outcome::Serve {
        range,
        malformed_since,
    }
}

/// `checkIfRange`: whether the range still applies (no `If-Range`, or one naming the
/// modification time; an entity tag never matches, there being no ETag).
fn if_range(c: &Conditions, modtime: i64) -> bool {
    if !c.get_or_head {
        return true;
    }
    let Some(ir) = c.if_range.as_deref().filter(|s| !s.is_empty()) else {
        return true;
    };
    if scan_etag(ir).is_some() {
        return false;
    }
    date::parse(ir) == Some(modtime)
}

/// A byte range to send: start and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    /// The first byte.
    pub start: u64,
    /// How many bytes.
    pub length: u64,
}

impl ByteRange {
    /// `Content-Range` of this range of `size` bytes (`httpRange.contentRange`).
    pub fn content_range(&self, size: u64) -> String {
        format!(
            "bytes {}-{}/{}",
            self.start,
            (self.start + self.length) as i128 - 1,
            size
        )
    }
}

/// Why a `Range` header is refused (416).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeError {
    /// Malformed: `invalid range`.
    Invalid,
    /// No range starts inside the content: `invalid range: failed to overlap`.
    NoOverlap,
}

impl RangeError {
    /// Go's message.
    pub fn message(self) -> &'static str {
        match self {
            RangeError::Invalid => "invalid range",
            RangeError::NoOverlap => "invalid range: failed to overlap",
        }
    }
}

/// `strconv.ParseInt(s, 10, 64)`.
fn parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i128 = digits.parse().ok()?;
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

/// `parseRange`: the ranges of a `Range` header over `size` bytes.
pub fn parse_range(s: &str, size: u64) -> Result<Vec<ByteRange>, RangeError> {
    let size = size as i64;
    let spec = s.strip_prefix("bytes=").ok_or(RangeError::Invalid)?;
    let mut ranges = Vec::new();
    let mut no_overlap = false;
    for ra in spec.split(',') {
        let ra = trim(ra);
        if ra.is_empty() {
            continue;
        }
        let (start, end) = ra.split_once('-').ok_or(RangeError::Invalid)?;
        let (start, end) = (trim(start), trim(end));
        let (first, length);
        if start.is_empty() {
            if end.is_empty() || end.starts_with('-') {
                return Err(RangeError::Invalid);
            }
            let i = parse_int(end)
                .filter(|i| *i >= 0)
                .ok_or(RangeError::Invalid)?;
            let i = i.min(size);
            first = size - i;
            length = size - first;
        } else {
            let i = parse_int(start)
                .filter(|i| *i >= 0)
                .ok_or(RangeError::Invalid)?;
            if i >= size {
                no_overlap = true;
                continue;
            }
            first = i;
            if end.is_empty() {
                length = size - first;
            } else {
                let e = parse_int(end)
                    .filter(|e| first <= *e)
                    .ok_or(RangeError::Invalid)?;
                length = e.min(size - 1) - first + 1;
            }
        }
        ranges.push(ByteRange {
            start: first as u64,
            length: length as u64,
        });
    }
    if no_overlap && ranges.is_empty() {
        return Err(RangeError::NoOverlap);
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_136_214_245; // Mon, 02 Jan 2006 15:04:05 GMT

    fn c() -> Conditions {
        Conditions {
            get_or_head: true,
            ..Conditions::default()
        }
    }

    fn serve(range: Option<&str>, malformed: bool) -> Outcome {
        Outcome::Serve {
            range: range.map(str::to_string),
            malformed_since: malformed,
        }
    }

    #[test]
    fn modified_since() {
        let mut r = c();
        r.if_modified_since = Some(date::format(T));
        assert_eq!(check(&r, T, true), Outcome::NotModified);
        assert_eq!(check(&r, T, false), Outcome::NotModified);
        assert_eq!(check(&r, T + 1, true), serve(None, false));
        r.if_modified_since = Some("yesterday".into());
        assert_eq!(
            check(&r, T, true),
            serve(None, false),
            "ServeContent ignores it"
        );
        assert_eq!(
            check(&r, T, false),
            serve(None, true),
            "catalogd writes a 500"
        );
        // If-None-Match present: If-Modified-Since is not looked at.
        r.if_modified_since = Some(date::format(T));
        r.if_none_match = Some("\"x\"".into());
        assert_eq!(check(&r, T, true), serve(None, false));
        r.if_none_match = Some("\"x\", *".into());
        assert_eq!(check(&r, T, true), Outcome::NotModified);
    }

    #[test]
    fn unmodified_since_and_if_match() {
        let mut r = c();
        r.if_unmodified_since = Some(date::format(T - 1));
        assert_eq!(check(&r, T, false), Outcome::Failed);
        r.if_unmodified_since = Some(date::format(T));
        assert_eq!(check(&r, T, false), serve(None, false));
        r.if_unmodified_since = Some("garbage".into());
        assert_eq!(check(&r, T, false), serve(None, false));
        r.if_match = Some("\"abc\"".into());
        assert_eq!(check(&r, T, true), Outcome::Failed);
        r.if_match = Some("*".into());
        r.if_unmodified_since = Some(date::format(T - 1));
        assert_eq!(check(&r, T, true), serve(None, false), "If-Match wins");
    }

    #[test]
    fn range_and_if_range() {
        let mut r = c();
        r.range = Some("bytes=0-9".into());
        assert_eq!(check(&r, T, true), serve(Some("bytes=0-9"), false));
        assert_eq!(
            check(&r, T, false),
            serve(None, false),
            "metas has no ranges"
        );
        r.if_range = Some(date::format(T));
        assert_eq!(check(&r, T, true), serve(Some("bytes=0-9"), false));
        r.if_range = Some(date::format(T - 1));
        assert_eq!(check(&r, T, true), serve(None, false));
        r.if_range = Some("\"etag\"".into());
        assert_eq!(check(&r, T, true), serve(None, false));
    }

    #[test]
    fn ranges_as_go_parses_them() {
        let br = |start, length| ByteRange { start, length };
        assert_eq!(parse_range("bytes=0-9", 100), Ok(vec![br(0, 10)]));
        assert_eq!(parse_range("bytes=90-", 100), Ok(vec![br(90, 10)]));
        assert_eq!(parse_range("bytes=-10", 100), Ok(vec![br(90, 10)]));
        assert_eq!(parse_range("bytes=-1000", 100), Ok(vec![br(0, 100)]));
        assert_eq!(parse_range("bytes=50-1000", 100), Ok(vec![br(50, 50)]));
        assert_eq!(
            parse_range("bytes= 1-2 , ,3-4", 100),
            Ok(vec![br(1, 2), br(3, 2)])
        );
        assert_eq!(parse_range("bytes=+5-6", 100), Ok(vec![br(5, 2)]));
        assert_eq!(parse_range("bytes=100-", 100), Err(RangeError::NoOverlap));
        assert_eq!(parse_range("bytes=100-,0-0", 100), Ok(vec![br(0, 1)]));
        for bad in [
            "0-9",
            "bytes=9-0",
            "bytes=-",
            "bytes=x-1",
            "bytes=--1",
            "bytes=1",
        ] {
            assert_eq!(parse_range(bad, 100), Err(RangeError::Invalid), "{bad}");
        }
        assert_eq!(br(90, 10).content_range(100), "bytes 90-99/100");
    }
}
