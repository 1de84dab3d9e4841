//! The request target as Go's `net/http` reads it: the query as `url.ParseQuery` splits it
//! (what `r.URL.Query()` gives, errors dropped) and the path as `http.ServeMux` routes it
//! (`cleanPath`, then segments unescaped).

/// `url.unescape`: `%XX` decoded (`+` as a space in a query); a malformed escape is `None`.
fn unescape(s: &str, query: bool) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
                let hi = b.get(i + 1).copied().and_then(hex)?;
                let lo = b.get(i + 2).copied().and_then(hex)?;
                out.push(hi << 4 | lo);
                i += 3;
            }
            b'+' if query => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Some(out)
}

/// `url.ParseQuery`: the key/value pairs in order. Pairs holding `;` or a malformed escape
/// are dropped (Go reports them in an error that `URL.Query` ignores); a key without `=` has
/// an empty value.
pub fn parse_query(raw: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for pair in raw.split('&') {
        if pair.contains(';') || pair.is_empty() {
            continue;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let (Some(k), Some(v)) = (unescape(k, true), unescape(v, true)) {
            out.push((k, v));
        }
    }
    out
}

/// `Values.Get`: the first value of `key`, empty when absent.
pub fn first<'a>(q: &'a [(Vec<u8>, Vec<u8>)], key: &str) -> &'a [u8] {
    q.iter()
        .find(|(k, _)| k == key.as_bytes())
        .map_or(&[], |(_, v)| v.as_slice())
}

/// `path.Clean` of a rooted path.
fn clean(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `http.cleanPath`: rooted, cleaned, the trailing slash kept.
pub fn clean_path(p: &str) -> String {
    if p.is_empty() {
        return "/".into();
    }
    let rooted = if p.starts_with('/') {
        p.to_string()
    } else {
        format!("/{p}")
    };
    let mut np = clean(&rooted);
    if rooted.ends_with('/') && np != "/" {
        np.push('/');
    }
    np
}

/// `url.shouldEscape(c, encodePath)`: all but letters, digits, `-_.~` and `$&+,/:;=@`.
fn should_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'-' | b'_'
                | b'.'
                | b'~'
                | b'$'
                | b'&'
                | b'+'
                | b','
                | b'/'
                | b':'
                | b';'
                | b'='
                | b'@'
        ))
}

/// `url.escape(s, encodePath)`: `%XX` (upper-case hex) for each byte that should be escaped.
fn escape(s: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &c in s {
        if should_escape(c) {
            out.push('%');
            out.push(HEX[usize::from(c >> 4)] as char);
            out.push(HEX[usize::from(c & 15)] as char);
        } else {
            out.push(c as char);
        }
    }
    out
}

/// `url.validEncoded(s, encodePath)`: nothing in `s` would be escaped (`%` allowed, and the
/// sub-delims and `[]` that `shouldEscape` escapes).
fn valid_encoded(s: &str) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c)
    })
}

/// `URL.EscapedPath` of a request's path `raw` as `url.ParseRequestURI` reads it
/// (`URL.setPath`): `raw` itself when it is a valid encoding, else the unescaped path escaped
/// again (a `\` sent as it is comes back as `%5C`). `None` when an escape is malformed: Go's
/// server answers 400 before any handler.
pub fn escaped_path(raw: &str) -> Option<String> {
    let path = unescape(raw, false)?;
    Some(if valid_encoded(raw) {
        raw.to_string()
    } else if path == b"*" {
        "*".to_string()
    } else {
        escape(&path)
    })
}

/// `url.URL{Path: path, RawQuery: query}.String()`: the path escaped (`EscapedPath`, no
/// `RawPath`), `?` and the query when there is one. For a rooted path.
pub fn url_string(path: &str, query: &str) -> String {
    let mut s = if path == "*" {
        path.to_string()
    } else {
        escape(path.as_bytes())
    };
    if !query.is_empty() {
        s.push('?');
        s.push_str(query);
    }
    s
}

/// `http.hexEscapeNonASCII`: each byte from 0x80 as `%` and its lower-case hex.
pub fn hex_escape_non_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if c.is_ascii() {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:x}"));
        }
    }
    out
}

/// The unescaped segments of a clean path, or `None` when an escape is malformed.
pub fn segments(path: &str) -> Option<Vec<Vec<u8>>> {
    path.strip_prefix('/')
        .unwrap_or(path)
        .split('/')
        .map(|s| unescape(s, false))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_split_as_go_does() {
        let q = parse_query("schema=olm.bundle&package=a+b&name=%41&x&&bad=%zz&semi=1;2&name=2");
        let pairs: Vec<(&[u8], &[u8])> = q
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
            .collect();
        assert_eq!(
            pairs,
            vec![
                (&b"schema"[..], &b"olm.bundle"[..]),
                (b"package", b"a b"),
                (b"name", b"A"),
                (b"x", b""),
                (b"name", b"2"),
            ]
        );
        assert_eq!(first(&q, "name"), b"A");
        assert_eq!(first(&q, "nope"), b"");
        assert!(parse_query("").is_empty());
    }

    #[test]
    fn paths_clean_as_the_mux_cleans_them() {
        assert_eq!(
            clean_path("/catalogs/x/api/v1/all"),
            "/catalogs/x/api/v1/all"
        );
        assert_eq!(
            clean_path("/catalogs//x/./api/v1/all/"),
            "/catalogs/x/api/v1/all/"
        );
        assert_eq!(clean_path("/catalogs/../x"), "/x");
        assert_eq!(clean_path(""), "/");
        assert_eq!(
            segments("/catalogs/a%2Fb/all"),
            Some(vec![b"catalogs".to_vec(), b"a/b".to_vec(), b"all".to_vec()])
        );
        assert_eq!(segments("/a%2"), None);
    }

    #[test]
    fn paths_escape_as_net_url_escapes_them() {
        // A valid encoding is kept as sent (upper or lower case, reserved characters).
        for raw in [
            "/a%2fb",
            "/a%2Fb/",
            "/x:y@z;a=b,c+d$e&f",
            "/(a)*'!",
            "/[a]",
            "/~_.-",
        ] {
            assert_eq!(escaped_path(raw).as_deref(), Some(raw), "{raw}");
        }
        // Otherwise the decoded path is escaped again, escapes included.
        assert_eq!(escaped_path("/\\evil.com").as_deref(), Some("/%5Cevil.com"));
        assert_eq!(escaped_path("/a b%41").as_deref(), Some("/a%20bA"));
        assert_eq!(escaped_path("/\u{e9}").as_deref(), Some("/%C3%A9"));
        assert_eq!(escaped_path("/a%zz"), None);
        assert_eq!(url_string("/%5Cevil.com", ""), "/%255Cevil.com");
        assert_eq!(url_string("/a?b", "c=d?"), "/a%3Fb?c=d?");
        assert_eq!(url_string("/a b", ""), "/a%20b");
        assert_eq!(
            hex_escape_non_ascii("/a?q=\u{e9}\u{7f}"),
            "/a?q=%c3%a9\u{7f}"
        );
    }
}
