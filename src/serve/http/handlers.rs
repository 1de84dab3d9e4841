//! catalogd's routes and answers (`internal/catalogd/server/handlers.go`), as plain values: a
//! request's method, target and conditional headers in, a [`Reply`] out (status, headers, and
//! which bytes of `catalog.jsonl` to send). The server (`server.rs`) sends it, streaming the
//! sections from the file and compressing as `gzhttp` does.
//!
//! - Routing is `http.ServeMux`'s for the patterns `/catalogs/{catalog}/api/v1/all` and
//!   `/catalogs/{catalog}/api/v1/metas` (`CatalogHandlers.Handler`): a path that is not clean
//!   is redirected (301) to its clean form (written as Go 1.22+ writes it, see [`redirect`]),
//!   segments are unescaped, anything else is `404 page not found`. The metas route is behind catalogd's Alpha gate `APIV1MetasHandler`
//!   (off in its standard install); olmctl always serves it. `graphql` (gate
//!   `GraphQLCatalogQueries`) is not served: 404, as when the gate is off.
//! - Methods other than GET and HEAD: 405 (`methodRestrictedHandler`).
//! - Errors are written as `http.Error` writes them (`httpError`).

use super::body::Piece;
use super::index::Section;
use super::multipart::Multipart;
use super::precond::{Conditions, Outcome, RangeError, check, scan_range};
use super::store::Stored;
use super::url::{
    clean_path, escaped_path, first, hex_escape_non_ascii, parse_query, segments, url_string,
};

/// A served catalog: its name in the URL and its stored bytes.
#[derive(Debug)]
pub struct Catalog {
    /// `{catalog}` in `/catalogs/{catalog}/api/v1/...`.
    pub name: String,
    /// `catalog.jsonl` and its index.
    pub stored: Stored,
}

impl Catalog {
    /// `Last-Modified`'s time: the file's, in whole seconds (`Truncate(time.Second)`).
    pub fn modtime(&self) -> i64 {
        match self.stored.modtime.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_secs() as i64,
            Err(e) => -(e.duration().as_secs_f64().ceil() as i64),
        }
    }
}

/// What a request asks.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The method.
    pub method: &'a str,
    /// The path as sent (escaped).
    pub path: &'a str,
    /// The query as sent, without `?`.
    pub query: &'a str,
    /// The conditional headers.
    pub conditions: Conditions,
}

/// The body of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// No body.
    Empty,
    /// Bytes to send as they are.
    Text(Vec<u8>),
    /// A multipart answer, its parts made as they are sent.
    Multipart(Multipart),
    /// `prefix`, then these sections of `catalog.jsonl` in order.
    Sections {
        /// Sent first (catalogd's 500 quirk writes its error, then the answer).
        prefix: Vec<u8>,
        /// The sections.
        sections: Vec<Section>,
    },
}

impl Content {
    /// The body's length.
    pub fn len(&self) -> u64 {
        match self {
            Content::Empty => 0,
            Content::Text(t) => t.len() as u64,
            Content::Multipart(m) => m.len(),
            Content::Sections { prefix, sections } => {
                prefix.len() as u64 + sections.iter().map(|s| s.length).sum::<u64>()
            }
        }
    }

    /// The body as pieces to send, taken one at a time.
    pub fn pieces(self) -> Box<dyn Iterator<Item = Piece> + Send> {
        match self {
            Content::Empty => Box::new(std::iter::empty()),
            Content::Text(t) => Box::new(std::iter::once(Piece::Text(t))),
            Content::Multipart(m) => Box::new(m.parts()),
            Content::Sections { prefix, sections } => Box::new(
                std::iter::once(Piece::Text(prefix)).chain(sections.into_iter().map(Piece::File)),
            ),
        }
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An answer: status, headers in order, and the body (the server sends none for HEAD, as Go's
/// server discards what a handler writes then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers (names in Go's canonical form).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub content: Content,
}

impl Reply {
    fn new(status: u16) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            content: Content::Empty,
        }
    }

    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn set(&mut self, name: &'static str, value: impl Into<String>) {
        self.remove(name);
        self.headers.push((name, value.into()));
    }

    /// Removes header `name`.
    pub fn remove(&mut self, name: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    /// `http.Error`: the message and a newline as plain text, `Content-Length` dropped.
    fn error(mut self, status: u16, message: &str) -> Self {
        self.status = status;
        self.remove("Content-Length");
        self.set("Content-Type", "text/plain; charset=utf-8");
        self.set("X-Content-Type-Options", "nosniff");
        self.content = Content::Text(format!("{message}\n").into_bytes());
        self
    }
}

/// `http.StatusText` of the codes written here.
fn status_text(code: u16) -> &'static str {
    match code {
        301 => "Moved Permanently",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        416 => "Requested Range Not Satisfiable",
        500 => "Internal Server Error",
        _ => "",
    }
}

/// `httpError`'s message for a plain status: `404 Not Found`.
fn coded(code: u16) -> String {
    format!("{code} {}", status_text(code))
}

/// `isValidCatalogName`: `None`, or `invalid catalog name: ` and Kubernetes'
/// `IsDNS1123Subdomain` messages joined by `; `.
pub fn catalog_name_error(name: &[u8]) -> Option<String> {
    let mut errs = Vec::new();
    if name.len() > 253 {
        errs.push("must be no more than 253 characters");
    }
    if !std::str::from_utf8(name).is_ok_and(crate::bundle::is_dns1123_subdomain_form) {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        );
    }
    (!errs.is_empty()).then(|| format!("invalid catalog name: {}", errs.join("; ")))
}

/// `htmlEscape` of `net/http`.
fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

/// The answer to `req` from `catalog`.
pub fn handle(catalog: &Catalog, req: &Request<'_>) -> Reply {
    let reply = Reply::new(200);
    // ServeMux.findHandler: the escaped path (`URL.EscapedPath`) cleaned; Go's server has
    // already refused a malformed escape (`url.ParseRequestURI`).
    let Some(escaped) = escaped_path(req.path) else {
        return reply.error(400, &coded(400));
    };
    let clean = clean_path(&escaped);
    if clean != escaped {
        return redirect(reply, req, &clean);
    }
    let Some(segs) = segments(&escaped) else {
        return reply.error(400, &coded(400));
    };
    let route = match segs.as_slice() {
        [c, name, api, v1, route] if c == b"catalogs" && api == b"api" && v1 == b"v1" => {
            match route.as_slice() {
                b"all" => (name, true),
                b"metas" => (name, false),
                _ => return reply.error(404, "404 page not found"),
            }
        }
        _ => return reply.error(404, "404 page not found"),
    };
    if req.method != "GET" && req.method != "HEAD" {
        return reply.error(405, status_text(405));
    }
    let (name, all) = route;
    if let Some(e) = catalog_name_error(name) {
        return reply.error(400, &e);
    }
    if all {
        if name != catalog.name.as_bytes() {
            return reply.error(404, &coded(404));
        }
        return serve_content(reply, catalog, req);
    }
    metas(reply, catalog, req, name)
}

/// The mux's redirect to the clean path (`ServeMux.findHandler`: `RedirectHandler` of
/// `url.URL{Path: path, RawQuery: r.URL.RawQuery}.String()`, where `path` is the cleaned
/// *escaped* path, so `String` escapes it again: `%5C` becomes `%255C`, golang/go#79897),
/// written by `http.Redirect` (its own clean-up, `path.Clean` before the query, leaves a
/// clean path as it is; `Location` is `hexEscapeNonASCII` of the URL, the body's link the URL
/// HTML-escaped).
fn redirect(mut reply: Reply, req: &Request<'_>, clean: &str) -> Reply {
    let url = url_string(clean, req.query);
    reply.status = 301;
    reply.set("Location", hex_escape_non_ascii(&url));
    if req.method == "GET" || req.method == "HEAD" {
        reply.set("Content-Type", "text/html; charset=utf-8");
    }
    if req.method == "GET" {
        reply.content = Content::Text(
            format!(
                "<a href=\"{}\">{}</a>.\n\n",
                html_escape(&url),
                status_text(301)
            )
            .into_bytes(),
        );
    }
    reply
}

/// `handleV1All`: `Content-Type: application/jsonl`, then `http.ServeContent`.
fn serve_content(mut reply: Reply, catalog: &Catalog, req: &Request<'_>) -> Reply {
    reply.set("Content-Type", "application/jsonl");
    let modtime = catalog.modtime();
    reply.set("Last-Modified", super::date::format(modtime));
    let range = match check(&req.conditions, modtime, true) {
        Outcome::Failed => {
            reply.status = 412;
            return reply;
        }
        Outcome::NotModified => return not_modified(reply),
        Outcome::Serve { range, .. } => range,
    };
    let size = catalog.stored.len;
    let mut scan = match range.as_ref().map(|r| scan_range(r, size)) {
        None => Default::default(),
        Some(Ok(s)) => s,
        Some(Err(RangeError::NoOverlap)) if size == 0 => Default::default(),
        Some(Err(e)) => {
            if e == RangeError::NoOverlap {
                reply.set("Content-Range", format!("bytes */{size}"));
            }
            // serveError: headers that described the content go.
            for h in ["Cache-Control", "Content-Encoding", "Etag", "Last-Modified"] {
                reply.remove(h);
            }
            return reply.error(416, e.message());
        }
    };
    // sumRangesSize > size: "probably an attack, or a dumb client": the Range header is
    // ignored. (Go refuses neither overlapping nor many ranges otherwise.)
    if scan.total > size {
        scan = Default::default();
    }
    let (mut start, mut length) = (0, size);
    let mut parts = None;
    match (scan.count, scan.first, range) {
        (1, Some(r), _) => {
            (start, length) = (r.start, r.length);
            reply.status = 206;
            reply.set("Content-Range", r.content_range(size));
        }
        (2.., _, Some(header)) => {
            // multipart/byteranges, each part with its Content-Range and the Content-Type.
            let m = Multipart::new(header, size, modtime);
            reply.status = 206;
            reply.set(
                "Content-Type",
                format!("multipart/byteranges; boundary={}", m.boundary()),
            );
            length = m.len();
            parts = Some(Content::Multipart(m));
        }
        _ => {}
    }
    reply.set("Accept-Ranges", "bytes");
    reply.set("Content-Length", length.to_string());
    reply.content = parts.unwrap_or(Content::Sections {
        prefix: Vec::new(),
        sections: vec![Section {
            offset: start,
            length,
        }],
    });
    reply
}

/// `writeNotModified`: 304 without the headers that describe content.
fn not_modified(mut reply: Reply) -> Reply {
    for h in ["Content-Type", "Content-Length", "Content-Encoding"] {
        reply.remove(h);
    }
    reply.status = 304;
    reply.content = Content::Empty;
    reply
}

/// `handleV1Metas`.
fn metas(mut reply: Reply, catalog: &Catalog, req: &Request<'_>, name: &[u8]) -> Reply {
    let query = parse_query(req.query);
    if query
        .iter()
        .any(|(k, _)| !matches!(k.as_slice(), b"schema" | b"package" | b"name"))
    {
        return reply.error(400, &coded(400));
    }
    if name != catalog.name.as_bytes() {
        return reply.error(404, &coded(404));
    }
    let modtime = catalog.modtime();
    reply.set("Last-Modified", super::date::format(modtime));
    let malformed = match check(&req.conditions, modtime, false) {
        Outcome::Failed => {
            reply.status = 412;
            return reply;
        }
        Outcome::NotModified => return not_modified(reply),
        Outcome::Serve {
            malformed_since, ..
        } => malformed_since,
    };
    let (schema, package, blob) = (
        first(&query, "schema"),
        first(&query, "package"),
        first(&query, "name"),
    );
    let sections = if schema.is_empty() && package.is_empty() && blob.is_empty() {
        vec![Section {
            offset: 0,
            length: catalog.stored.len,
        }]
    } else {
        catalog.stored.index.get(schema, package, blob)
    };
    let mut prefix = Vec::new();
    if malformed {
        // checkIfModifiedSince's httpError: the 500 goes out, then serveJSONLines writes the
        // answer after it (its Content-Type comes too late to count).
        reply = reply.error(500, &coded(500));
        if let Content::Text(t) = std::mem::replace(&mut reply.content, Content::Empty) {
            prefix = t;
        }
    } else {
        reply.set("Content-Type", "application/jsonl");
    }
    reply.content = Content::Sections { prefix, sections };
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> (tempfile::TempDir, Catalog) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.json");
        std::fs::write(
            &f,
            r#"{"schema":"olm.package","name":"p"}
{"schema":"olm.bundle","package":"p","name":"p.v1"}"#,
        )
        .unwrap();
        let mut stored = super::super::store::store(&f, dir.path()).unwrap();
        // A fixed time, so that multipart boundaries (made from it) are too.
        stored.modtime = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_136_214_245);
        (
            dir,
            Catalog {
                name: "c".into(),
                stored,
            },
        )
    }

    fn ask(c: &Catalog, method: &str, target: &str) -> Reply {
        ask_range(c, method, target, None)
    }

    fn ask_range(c: &Catalog, method: &str, target: &str, range: Option<&'static str>) -> Reply {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        handle(
            c,
            &Request {
                method,
                path,
                query,
                conditions: Conditions {
                    get_or_head: method == "GET" || method == "HEAD",
                    range: range.map(Into::into),
                    ..Conditions::default()
                },
            },
        )
    }

    /// The bytes the server sends for `reply`'s body (uncompressed).
    fn sent(c: &Catalog, reply: Reply) -> Vec<u8> {
        use http_body::Body as _;
        use std::task::{Context, Poll, Waker};
        let len = reply.content.len();
        let body = super::super::body::Payload::new(
            c.stored.file.clone(),
            reply.content.pieces(),
            len,
            false,
        );
        let mut body = std::pin::pin!(body);
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = Vec::new();
        while let Poll::Ready(Some(frame)) = body.as_mut().poll_frame(&mut cx) {
            out.extend_from_slice(&frame.unwrap().into_data().unwrap());
        }
        out
    }

    /// Several ranges: `multipart/byteranges` as Go's `mime/multipart` writes it, byte for
    /// byte, with `Content-Length` its exact length. (The bytes are those the answer had when
    /// every part was made before sending; streaming them changed none.)
    #[test]
    fn multipart_answers_byte_for_byte() {
        let (_d, c) = catalog();
        let cases: [(&str, &str, &str); 4] = [
            (
                "bytes=0-4,-3,10-12",
                "4a12dbe69e34e68a39d454ea0437531df61b2735b58f83eef15a8e761ba7",
                "--B\r\nContent-Range: bytes 0-4/88\r\nContent-Type: application/jsonl\r\n\r\n{\"nam\
                 \r\n--B\r\nContent-Range: bytes 85-87/88\r\nContent-Type: application/jsonl\r\n\r\n\"}\n\
                 \r\n--B\r\nContent-Range: bytes 10-12/88\r\nContent-Type: application/jsonl\r\n\r\n\",\"\
                 \r\n--B--\r\n",
            ),
            (
                "bytes=-1,-1",
                "f88055c1628042031b43eb6652f31eccff6d8d53fc6df901f1e996fb9b76",
                "--B\r\nContent-Range: bytes 87-87/88\r\nContent-Type: application/jsonl\r\n\r\n\n\
                 \r\n--B\r\nContent-Range: bytes 87-87/88\r\nContent-Type: application/jsonl\r\n\r\n\n\
                 \r\n--B--\r\n",
            ),
            // Empty elements and one past the end are passed over, as parseRange does.
            (
                "bytes= 5-, 100-, 0-0",
                "2cb30803c4dbb87e6936a442ba2d014dd4209cdb8180b55267caf11ca2c0",
                "--B\r\nContent-Range: bytes 5-87/88\r\nContent-Type: application/jsonl\r\n\r\n\
                 e\":\"p\",\"schema\":\"olm.package\"}\n{\"name\":\"p.v1\",\"package\":\"p\",\"schema\":\"olm.bundle\"}\n\
                 \r\n--B\r\nContent-Range: bytes 0-0/88\r\nContent-Type: application/jsonl\r\n\r\n{\
                 \r\n--B--\r\n",
            ),
            // An empty suffix range: a part with no bytes (Content-Range as Go prints it).
            (
                "bytes=-0,0-0",
                "c6bcc618df1a1925ae9a9fc1979317def014b0ef2e283edbf254c6a95ab9",
                "--B\r\nContent-Range: bytes 88-87/88\r\nContent-Type: application/jsonl\r\n\r\n\
                 \r\n--B\r\nContent-Range: bytes 0-0/88\r\nContent-Type: application/jsonl\r\n\r\n{\
                 \r\n--B--\r\n",
            ),
        ];
        for (range, boundary, body) in cases {
            let r = ask_range(&c, "GET", "/catalogs/c/api/v1/all", Some(range));
            let want = body.replace('B', boundary);
            assert_eq!(r.status, 206, "{range}");
            assert_eq!(
                r.header("Content-Type"),
                Some(format!("multipart/byteranges; boundary={boundary}").as_str()),
                "{range}"
            );
            assert_eq!(r.header("Content-Range"), None, "{range}");
            assert_eq!(
                r.header("Content-Length"),
                Some(want.len().to_string().as_str()),
                "{range}"
            );
            assert_eq!(r.content.len(), want.len() as u64, "{range}");
            assert_eq!(String::from_utf8(sent(&c, r)).unwrap(), want, "{range}");
        }
        // The ranges add up to more than the content: the whole content (sumRangesSize).
        let r = ask_range(
            &c,
            "GET",
            "/catalogs/c/api/v1/all",
            Some("bytes=0-50,40-87"),
        );
        assert_eq!((r.status, r.header("Content-Length")), (200, Some("88")));
        assert_eq!(sent(&c, r).len(), 88);
        // One range: 206 with Content-Range, no multipart.
        let r = ask_range(&c, "GET", "/catalogs/c/api/v1/all", Some("bytes=1-2"));
        assert_eq!(
            (r.status, r.header("Content-Range")),
            (206, Some("bytes 1-2/88"))
        );
        assert_eq!(sent(&c, r), b"\"n");
    }

    /// A path that is not clean is redirected as Go 1.22+'s `ServeMux` redirects it: the
    /// escaped path cleaned, escaped again by `url.URL.String` (so `%` becomes `%25`), the
    /// query kept as sent, non-ASCII bytes hex-escaped in `Location` (`hexEscapeNonASCII`),
    /// the body's link HTML-escaped.
    #[test]
    fn redirects_locate_as_go_writes_them() {
        let (_d, c) = catalog();
        for (target, location) in [
            ("/catalogs/c/x/../api/v1/all", "/catalogs/c/api/v1/all"),
            (
                "/catalogs//c/./api/v1/all?x=1&y=2",
                "/catalogs/c/api/v1/all?x=1&y=2",
            ),
            // Never `/\\evil.com`, which a browser reads as `//evil.com`.
            ("/./\\evil.com", "/%255Cevil.com"),
            ("/a b/./c", "/a%2520b/c"),
            ("/./a%20b", "/a%2520b"),
            ("/%41/../b", "/b"),
            (
                "/x/./\"<>^`{|}",
                "/x/%2522%253C%253E%255E%2560%257B%257C%257D",
            ),
            ("/é/./x", "/%25C3%25A9/x"),
            ("/./a?q=é", "/a?q=%c3%a9"),
            ("/a/./b/", "/a/b/"),
            ("//", "/"),
            ("/a/..", "/"),
            ("/a/%2e%2e/../b", "/a/b"),
        ] {
            let r = ask(&c, "GET", target);
            assert_eq!(
                (r.status, r.header("Location")),
                (301, Some(location)),
                "{target}"
            );
        }
        // The body links to the URL before hex-escaping, HTML-escaped.
        let r = ask(&c, "GET", "/./a?q=é&x=\"'<>");
        assert_eq!(r.header("Location"), Some("/a?q=%c3%a9&x=\"'<>"));
        assert_eq!(
            r.content,
            Content::Text(
                "<a href=\"/a?q=é&amp;x=&#34;&#39;&lt;&gt;\">Moved Permanently</a>.\n\n"
                    .as_bytes()
                    .to_vec()
            )
        );
        assert_eq!(r.header("Content-Type"), Some("text/html; charset=utf-8"));
        // HEAD: no body; other methods: no Content-Type either.
        let r = ask(&c, "HEAD", "/./x");
        assert_eq!(
            (r.status, r.header("Location"), &r.content),
            (301, Some("/x"), &Content::Empty)
        );
        let r = ask(&c, "POST", "/./x");
        assert_eq!(
            (r.header("Location"), r.header("Content-Type")),
            (Some("/x"), None)
        );
        // A malformed escape: 400 before any redirect (Go's server refuses the request URI).
        let r = ask(&c, "GET", "/./%zz");
        assert_eq!(r.status, 400);
        // A path Go escapes differently but that is clean: no redirect, routed as escaped.
        assert_eq!(ask(&c, "GET", "/catalogs/c/api/v1/all\\").status, 404);
    }

    #[test]
    fn routes_and_errors() {
        let (_d, c) = catalog();
        // The stored lines, keys sorted.
        let first = "{\"name\":\"p\",\"schema\":\"olm.package\"}\n";
        let second = "{\"name\":\"p.v1\",\"package\":\"p\",\"schema\":\"olm.bundle\"}\n";
        let r = ask(&c, "GET", "/catalogs/c/api/v1/metas?schema=olm.bundle");
        assert_eq!(r.status, 200);
        assert_eq!(
            r.content,
            Content::Sections {
                prefix: Vec::new(),
                sections: vec![Section {
                    offset: first.len() as u64,
                    length: second.len() as u64
                }]
            }
        );
        let r = ask(&c, "HEAD", "/catalogs/c/api/v1/all");
        assert_eq!(
            r.header("Content-Length"),
            Some((first.len() + second.len()).to_string().as_str())
        );
        let text = |r: &Reply| match &r.content {
            Content::Text(t) => String::from_utf8(t.clone()).unwrap(),
            other => panic!("{other:?}"),
        };
        let r = ask(&c, "GET", "/catalogs/c/api/v1/metas?schema=x&bad");
        assert_eq!((r.status, text(&r)), (400, "400 Bad Request\n".to_string()));
        let r = ask(&c, "PATCH", "/catalogs/c/api/v1/all");
        assert_eq!(
            (r.status, text(&r)),
            (405, "Method Not Allowed\n".to_string())
        );
        let r = ask(&c, "GET", "/catalogs/d/api/v1/all");
        assert_eq!((r.status, text(&r)), (404, "404 Not Found\n".to_string()));
        let r = ask(&c, "GET", "/catalogs/c/api/v1/graphql");
        assert_eq!(
            (r.status, text(&r)),
            (404, "404 page not found\n".to_string())
        );
        let r = ask(&c, "GET", "/catalogs/c/x/../api/v1/all");
        assert_eq!(r.status, 301);
        assert_eq!(r.header("Location"), Some("/catalogs/c/api/v1/all"));
        let r = ask(&c, "GET", "/catalogs/c%/api/v1/all");
        assert_eq!(r.status, 400);
    }

    #[test]
    fn catalog_names_are_checked_as_kubernetes_checks_them() {
        assert_eq!(catalog_name_error(b"operatorhubio"), None);
        assert_eq!(catalog_name_error(b"a.b-c.0"), None);
        for bad in [&b""[..], b"A", b"-a", b"a..b", b"a_b", b"\xff"] {
            let e = catalog_name_error(bad).unwrap();
            assert!(
                e.starts_with("invalid catalog name: a lowercase RFC 1123"),
                "{e}"
            );
        }
        let e = catalog_name_error(&[b'A'; 254]).unwrap();
        assert!(
            e.starts_with("invalid catalog name: must be no more than 253 characters; a lowercase"),
            "{e}"
        );
    }
}
