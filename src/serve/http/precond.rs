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
    /// `Range`, its bytes as sent (a multipart answer reads its ranges from them while it is
    /// sent).
    pub range: Option<bytes::Bytes>,
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
        range: Option<bytes::Bytes>,
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
        && let Some(r) = c.range.as_ref().filter(|r| !r.is_empty())
        && if_range(c, modtime)
    {
        range = Some(r.clone());
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
        let mut s = String::new();
        // Writing to a String does not fail.
        let _ = self.write_content_range(&mut s, size);
        s
    }

    /// [`Self::content_range`], written to `out`.
    pub fn write_content_range(
        &self,
        out: &mut impl std::fmt::Write,
        size: u64,
    ) -> std::fmt::Result {
        write!(
            out,
            "bytes {}-{}/{}",
            self.start,
            i128::from(self.start) + i128::from(self.length) - 1,
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

/// `textproto.TrimString` of bytes: ASCII space, tab, CR and LF off both ends.
fn trim_bytes(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r' | b'\n', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'\r' | b'\n'] = s {
        s = rest;
    }
    s
}

/// `strconv.ParseInt(s, 10, 64)`.
fn parse_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s {
        [b'+', rest @ ..] => (false, rest),
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i128 = 0;
    for d in digits {
        v = v * 10 + i128::from(d - b'0');
        if v > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    i64::try_from(if neg { -v } else { v }).ok()
}

/// One comma-separated element of a `Range` header, as `parseRange` reads it.
enum Element {
    /// Empty: passed over.
    Empty,
    /// Starting at or after the end: passed over, but `failed to overlap` if all are.
    Past,
    /// A range.
    Range(ByteRange),
}

/// `parseRange`'s loop body for one element `ra` over `size` bytes.
fn element(ra: &[u8], size: i64) -> Result<Element, RangeError> {
    let ra = trim_bytes(ra);
    if ra.is_empty() {
        return Ok(Element::Empty);
    }
    let dash = ra
        .iter()
        .position(|&c| c == b'-')
        .ok_or(RangeError::Invalid)?;
    let (start, end) = (trim_bytes(&ra[..dash]), trim_bytes(&ra[dash + 1..]));
    let (first, length);
    if start.is_empty() {
        if end.is_empty() || end[0] == b'-' {
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
            return Ok(Element::Past);
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
    Ok(Element::Range(ByteRange {
        start: first as u64,
        length: length as u64,
    }))
}

/// Where the elements of a `Range` header start: after `bytes=`.
pub const RANGES_START: usize = b"bytes=".len();

/// The element of `header` at byte `*at` (an element ends at a comma), `*at` moved past it;
/// `None` after the last (`strings.Split`: `bytes=` alone is one empty element).
fn next_element(header: &[u8], at: &mut usize, size: u64) -> Option<Result<Element, RangeError>> {
    let rest = header.get(*at..)?;
    let len = rest.iter().position(|&c| c == b',').unwrap_or(rest.len());
    *at += len + 1;
    Some(element(&rest[..len], size as i64))
}

/// What `parseRange` finds in a `Range` header, without keeping the ranges: how many, the
/// sum of their lengths (`sumRangesSize`) and the first. The ranges themselves are read again
/// from the header, one at a time, when they are sent ([`next_range`]): a header of 20,000
/// ranges costs its own bytes, not 20,000 values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scan {
    /// Ranges (elements passed over not counted).
    pub count: u64,
    /// Their lengths added (saturating; Go's `int64` sum would wrap only past 8 EiB).
    pub total: u64,
    /// The first range.
    pub first: Option<ByteRange>,
}

/// `parseRange`: checks the `Range` header `header` over `size` bytes.
pub fn scan_range(header: &[u8], size: u64) -> Result<Scan, RangeError> {
    if !header.starts_with(b"bytes=") {
        return Err(RangeError::Invalid);
    }
    let (mut scan, mut no_overlap, mut at) = (Scan::default(), false, RANGES_START);
    while let Some(e) = next_element(header, &mut at, size) {
        match e? {
            Element::Empty => {}
            Element::Past => no_overlap = true,
            Element::Range(r) => {
                scan.count += 1;
                scan.total = scan.total.saturating_add(r.length);
                scan.first.get_or_insert(r);
            }
        }
    }
    if no_overlap && scan.count == 0 {
        return Err(RangeError::NoOverlap);
    }
    Ok(scan)
}

/// The next range of a header [`scan_range`] accepted, from byte `*at` (start at
/// [`RANGES_START`]), `*at` moved past it; `None` after the last.
pub fn next_range(header: &[u8], at: &mut usize, size: u64) -> Option<ByteRange> {
    while let Some(e) = next_element(header, at, size) {
        match e {
            Ok(Element::Range(r)) => return Some(r),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
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
            range: range.map(|r| bytes::Bytes::copy_from_slice(r.as_bytes())),
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

    /// `parseRange`'s list: the ranges [`next_range`] reads from a header [`scan_range`]
    /// accepted, checked against the scan's count, total and first.
    fn parse_range(s: &str, size: u64) -> Result<Vec<ByteRange>, RangeError> {
        let scan = scan_range(s.as_bytes(), size)?;
        let mut at = RANGES_START;
        let ranges: Vec<ByteRange> =
            std::iter::from_fn(|| next_range(s.as_bytes(), &mut at, size)).collect();
        assert_eq!(scan.count, ranges.len() as u64, "{s}");
        assert_eq!(
            scan.total,
            ranges.iter().map(|r| r.length).sum::<u64>(),
            "{s}"
        );
        assert_eq!(scan.first, ranges.first().copied(), "{s}");
        Ok(ranges)
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
        assert_eq!(parse_range("bytes=0-0,", 100), Ok(vec![br(0, 1)]));
        assert_eq!(parse_range("bytes=", 100), Ok(vec![]));
        assert_eq!(parse_range("bytes=\t-0 ", 100), Ok(vec![br(100, 0)]));
        assert_eq!(
            parse_range("bytes=-1,-1,-1", 100),
            Ok(vec![br(99, 1), br(99, 1), br(99, 1)])
        );
        for bad in [
            "0-9",
            "bytes=9-0",
            "bytes=-",
            "bytes=x-1",
            "bytes=--1",
            "bytes=1",
            "bytes=0-1,x",
            "bytes=9223372036854775808-",
            "bytes=0-1,\u{e9}-2",
        ] {
            assert_eq!(parse_range(bad, 100), Err(RangeError::Invalid), "{bad}");
        }
        assert_eq!(br(90, 10).content_range(100), "bytes 90-99/100");
        assert_eq!(br(0, 0).content_range(0), "bytes 0--1/0");
    }
}
