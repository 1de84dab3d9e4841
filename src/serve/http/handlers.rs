//! catalogd's routes and answers (`internal/catalogd/server/handlers.go`), as plain values: a
//! request's method, target and conditional headers in, a [`Reply`] out (status, headers, and
//! which bytes of `catalog.jsonl` to send). The server (`server.rs`) sends it, streaming the
//! sections from the file and compressing as `gzhttp` does.
//!
//! - Routing is `http.ServeMux`'s for the patterns `/catalogs/{catalog}/api/v1/all` and
//!   `/catalogs/{catalog}/api/v1/metas` (`CatalogHandlers.Handler`): a path that is not clean
//!   is redirected (301) to its clean form, segments are unescaped, anything else is
//!   `404 page not found`. The metas route is behind catalogd's Alpha gate `APIV1MetasHandler`
//!   (off in its standard install); olmctl always serves it. `graphql` (gate
//!   `GraphQLCatalogQueries`) is not served: 404, as when the gate is off.
//! - Methods other than GET and HEAD: 405 (`methodRestrictedHandler`).
//! - Errors are written as `http.Error` writes them (`httpError`).

use super::body::Piece;
use super::index::Section;
use super::precond::{Conditions, Outcome, check, parse_range};
use super::store::Stored;
use super::url::{clean_path, first, parse_query, segments};

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
    /// Bytes and sections of `catalog.jsonl`, in order (a multipart answer).
    Parts(Vec<Piece>),
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
            Content::Parts(parts) => parts
                .iter()
                .map(|p| match p {
                    Piece::Text(t) => t.len() as u64,
                    Piece::File(s) => s.length,
                })
                .sum(),
            Content::Sections { prefix, sections } => {
                prefix.len() as u64 + sections.iter().map(|s| s.length).sum::<u64>()
            }
        }
    }

    /// The body as pieces to send.
    pub fn pieces(self) -> Vec<Piece> {
        match self {
            Content::Empty => Vec::new(),
            Content::Text(t) => vec![Piece::Text(t)],
            Content::Parts(p) => p,
            Content::Sections { prefix, sections } => std::iter::once(Piece::Text(prefix))
                .chain(sections.into_iter().map(Piece::File))
                .collect(),
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
    let clean = clean_path(req.path);
    if clean != req.path {
        return redirect(reply, req, &clean);
    }
    let Some(segs) = segments(req.path) else {
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

/// `http.Redirect` to the clean path, as the mux redirects.
fn redirect(mut reply: Reply, req: &Request<'_>, clean: &str) -> Reply {
    let mut url = clean.to_string();
    if !req.query.is_empty() {
        url.push('?');
        url.push_str(req.query);
    }
    reply.status = 301;
    reply.set("Location", url.clone());
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
    let mut ranges = match range.map(|r| parse_range(&r, size)) {
        None => Vec::new(),
        Some(Ok(r)) => r,
        Some(Err(super::precond::RangeError::NoOverlap)) if size == 0 => Vec::new(),
        Some(Err(e)) => {
            if e == super::precond::RangeError::NoOverlap {
                reply.set("Content-Range", format!("bytes */{size}"));
            }
            // serveError: headers that described the content go.
            for h in ["Cache-Control", "Content-Encoding", "Etag", "Last-Modified"] {
                reply.remove(h);
            }
            return reply.error(416, e.message());
        }
    };
    if ranges.iter().map(|r| r.length).sum::<u64>() > size {
        ranges.clear();
    }
    let (mut start, mut length) = (0, size);
    let mut parts = None;
    match ranges.as_slice() {
        [] => {}
        [r] => {
            (start, length) = (r.start, r.length);
            reply.status = 206;
            reply.set("Content-Range", r.content_range(size));
        }
        several => {
            // multipart/byteranges as mime/multipart writes it (CreatePart, Close), each part
            // with its Content-Range and the Content-Type. Go's boundary is 30 random bytes in
            // hex; this one is 30 bytes of the SHA-256 of the request's ranges and the file's
            // time and size, so an answer is reproducible.
            let boundary = boundary(req.conditions.range.as_deref().unwrap_or(""), modtime, size);
            let mut pieces = Vec::new();
            for (i, r) in several.iter().enumerate() {
                let sep = if i == 0 { "" } else { "\r\n" };
                pieces.push(Piece::Text(
                    format!(
                        "{sep}--{boundary}\r\nContent-Range: {}\r\nContent-Type: application/jsonl\r\n\r\n",
                        r.content_range(size)
                    )
                    .into_bytes(),
                ));
                pieces.push(Piece::File(Section {
                    offset: r.start,
                    length: r.length,
                }));
            }
            pieces.push(Piece::Text(format!("\r\n--{boundary}--\r\n").into_bytes()));
            reply.status = 206;
            reply.set(
                "Content-Type",
                format!("multipart/byteranges; boundary={boundary}"),
            );
            let content = Content::Parts(pieces);
            length = content.len();
            parts = Some(content);
        }
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

/// A multipart boundary: 60 hex digits, from the ranges asked and the file's time and size.
fn boundary(ranges: &str, modtime: i64, size: u64) -> String {
    let digest = crate::oci::digest::sha256(format!("{ranges}\n{modtime}\n{size}").as_bytes());
    digest
        .trim_start_matches("sha256:")
        .chars()
        .take(60)
        .collect()
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
        let stored = super::super::store::store(&f, dir.path()).unwrap();
        (
            dir,
            Catalog {
                name: "c".into(),
                stored,
            },
        )
    }

    fn ask(c: &Catalog, method: &str, target: &str) -> Reply {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        handle(
            c,
            &Request {
                method,
                path,
                query,
                conditions: Conditions {
                    get_or_head: method == "GET" || method == "HEAD",
                    ..Conditions::default()
                },
            },
        )
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
