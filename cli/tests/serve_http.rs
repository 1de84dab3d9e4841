//! `olmctl catalog serve --http`: catalogd's HTTP API (operator-controller v1.11) from the real
//! binary on 127.0.0.1, on the repository's catalog and the v4.18 community fixture, asked with
//! a plain HTTP/1.1 client. The expected bytes come from `tests/support/catalogd_jsonl.py`,
//! which reads the catalog with Python's JSON and YAML (libyaml) parsers and encodes each blob
//! as Go's `encoding/json` encodes catalogd's maps, apart from olmctl's code.

mod common;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::http::{Answer, request, wait_ready};
use common::served::{Server, spawn_http};

/// One blob of the expected `catalog.jsonl`: its line (with the newline) and its meta keys.
struct Blob {
    line: String,
    schema: String,
    package: String,
    name: String,
}

fn expected(dir: &Path) -> Vec<Blob> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/support/catalogd_jsonl.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(dir)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |i: usize| v[i].as_str().unwrap_or_default().to_string();
            Blob {
                line: format!("{}\n", s(0)),
                schema: s(1),
                package: s(2),
                name: s(3),
            }
        })
        .collect()
}

fn concat<'a>(blobs: impl Iterator<Item = &'a Blob>) -> String {
    blobs.map(|b| b.line.as_str()).collect()
}

fn repo_catalog() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog")
}

/// An HTTP server of `dir` named `name` (`extra` flags added); its HTTP port.
struct Http {
    _server: Server,
    port: u16,
    base: String,
}

fn start(dir: &Path, name: &str, extra: &[&str]) -> Http {
    let mut flags = vec!["--catalog-name", name];
    flags.extend_from_slice(extra);
    let server = spawn_http(dir, &flags);
    let port = server.http_port.expect("the HTTP port");
    let base = format!("/catalogs/{name}/api/v1");
    wait_ready(port, &format!("{base}/all"));
    Http {
        _server: server,
        port,
        base,
    }
}

impl Http {
    fn get(&self, target: &str) -> Answer {
        self.ask("GET", target, &[])
    }

    fn ask(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Answer {
        let t = if target.starts_with('/') {
            target.to_string()
        } else {
            format!("{}/{target}", self.base)
        };
        request(self.port, method, &t, headers).expect("request")
    }
}

/// `http.Error`'s answer: the status, plain text with nosniff, the message and a newline.
fn assert_error(a: &Answer, status: u16, message: &str) {
    assert_eq!(a.status, status, "{}", a.text());
    assert_eq!(a.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(a.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(a.text(), format!("{message}\n"));
    assert_eq!(a.header("vary"), Some("Accept-Encoding"));
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b)
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

/// `/all` and, for every package, the metas queries of the upstream how-to, on one catalog.
fn answers_match(dir: &Path, name: &str) {
    let want = expected(dir);
    let srv = start(dir, name, &["--no-grpc"]);
    let all = srv.get("all");
    assert_eq!(all.status, 200);
    assert_eq!(all.header("content-type"), Some("application/jsonl"));
    assert_eq!(all.header("accept-ranges"), Some("bytes"));
    assert_eq!(all.header("vary"), Some("Accept-Encoding"));
    let whole = concat(want.iter());
    assert_eq!(
        all.header("content-length"),
        Some(whole.len().to_string().as_str())
    );
    assert!(
        all.text() == whole,
        "/all differs from catalogd's catalog.jsonl"
    );
    // No parameter, or only empty ones: the whole catalog.
    for q in ["metas", "metas?schema=&package=&name=", "metas?package="] {
        let a = srv.get(q);
        assert_eq!(a.status, 200, "{q}");
        assert_eq!(a.header("content-type"), Some("application/jsonl"));
        assert!(a.text() == whole, "{q}");
    }
    let packages: Vec<&Blob> = want.iter().filter(|b| b.schema == "olm.package").collect();
    assert!(!packages.is_empty());
    for p in &packages {
        let p = &p.name;
        // package=P: the blobs whose package is P (not the olm.package blob), file order.
        let a = srv.get(&format!("metas?package={p}"));
        let mine = concat(
            want.iter()
                .filter(|b| &b.package == p && !b.schema.is_empty()),
        );
        assert!(!mine.is_empty(), "{p}");
        assert_eq!(a.status, 200);
        assert!(a.text() == mine, "metas?package={p}");
        let a = srv.get(&format!("metas?schema=olm.package&name={p}"));
        let pkg = concat(
            want.iter()
                .filter(|b| b.schema == "olm.package" && &b.name == p),
        );
        assert_eq!(a.text(), pkg, "olm.package {p}");
        let a = srv.get(&format!("metas?package={p}&schema=olm.bundle"));
        let bundles = concat(
            want.iter()
                .filter(|b| b.schema == "olm.bundle" && &b.package == p),
        );
        assert!(!bundles.is_empty(), "{p} has bundles");
        assert!(a.text() == bundles, "metas?package={p}&schema=olm.bundle");
        // The first value of a repeated parameter counts.
        let a = srv.get(&format!(
            "metas?schema=olm.channel&schema=olm.bundle&package={p}"
        ));
        let channels = concat(
            want.iter()
                .filter(|b| b.schema == "olm.channel" && &b.package == p),
        );
        assert!(a.text() == channels, "{p} channels");
    }
    // A bundle by name, and a query nothing matches: 200, empty.
    let b = want.iter().find(|b| b.schema == "olm.bundle").unwrap();
    let a = srv.get(&format!("metas?name={}", b.name));
    assert_eq!(
        a.text(),
        concat(
            want.iter()
                .filter(|x| x.name == b.name && !x.schema.is_empty())
        )
    );
    let a = srv.get("metas?package=no-such-package");
    assert_eq!((a.status, a.body.len()), (200, 0));
    assert_eq!(a.header("content-type"), Some("application/jsonl"));
}

#[test]
fn the_community_catalog_is_served_as_catalogd_serves_it() {
    answers_match(&common::fixture_catalog(), "community");
}

#[test]
fn the_repository_catalog_is_served_as_catalogd_serves_it() {
    answers_match(&repo_catalog(), "olmctl");
}

#[test]
fn bad_requests_get_catalogd_errors() {
    let srv = start(&repo_catalog(), "olmctl", &["--no-grpc"]);
    assert_error(
        &srv.get("metas?schema=olm.package&foo=1"),
        400,
        "400 Bad Request",
    );
    // Parameters are checked before the catalog is looked up.
    assert_error(
        &srv.get("/catalogs/other/api/v1/metas?foo=1"),
        400,
        "400 Bad Request",
    );
    assert_error(&srv.get("/catalogs/other/api/v1/all"), 404, "404 Not Found");
    assert_error(
        &srv.get("/catalogs/other/api/v1/metas"),
        404,
        "404 Not Found",
    );
    let regex = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    assert_error(
        &srv.get("/catalogs/Bad_Name/api/v1/all"),
        400,
        &format!("invalid catalog name: {regex}"),
    );
    let long = "a".repeat(254);
    assert_error(
        &srv.get(&format!("/catalogs/{long}/api/v1/metas")),
        400,
        "invalid catalog name: must be no more than 253 characters",
    );
    assert_error(
        &srv.get("/catalogs/a%2Fb/api/v1/all"),
        400,
        &format!("invalid catalog name: {regex}"),
    );
    for m in ["POST", "PUT", "DELETE"] {
        assert_error(&srv.ask(m, "all", &[]), 405, "Method Not Allowed");
        assert_error(&srv.ask(m, "metas", &[]), 405, "Method Not Allowed");
    }
    // Routes catalogd does not serve here (graphql is behind a gate that is off).
    for t in ["graphql", "all/", "/catalogs/olmctl/api/v2/all", "/"] {
        assert_error(&srv.get(t), 404, "404 page not found");
    }
    assert_error(&srv.ask("POST", "graphql", &[]), 404, "404 page not found");
    // A path that is not clean is redirected to its clean form, as Go's mux does.
    let a = srv.get("/catalogs//olmctl/./api/v1/all?x=1");
    assert_eq!(a.status, 301);
    assert_eq!(
        a.header("location"),
        Some("/catalogs/olmctl/api/v1/all?x=1")
    );
    // ... to the clean escaped path escaped again, as Go 1.22+'s mux writes it: never
    // `/\evil.com`, which a browser follows to another host.
    let a = srv.get("/./\\evil.com");
    assert_eq!(a.status, 301);
    assert_eq!(a.header("location"), Some("/%255Cevil.com"));
    assert_eq!(
        a.text(),
        "<a href=\"/%255Cevil.com\">Moved Permanently</a>.\n\n"
    );
    let a = srv.get("/x/./a%20b?q=%41");
    assert_eq!(a.header("location"), Some("/x/a%2520b?q=%41"));
}

#[test]
fn head_conditions_ranges_and_gzip() {
    let dir = common::fixture_catalog();
    let whole = concat(expected(&dir).iter());
    let srv = start(&dir, "community", &["--no-grpc"]);
    let all = srv.get("all");
    let modified = all.header("last-modified").unwrap().to_string();
    assert!(modified.ends_with(" GMT"), "{modified}");
    // HEAD: the headers of GET, no body.
    let head = srv.ask("HEAD", "all", &[]);
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-length"),
        Some(whole.len().to_string().as_str())
    );
    assert_eq!(head.header("last-modified"), Some(modified.as_str()));
    assert!(head.body.is_empty());
    let head = srv.ask("HEAD", "metas?schema=olm.package", &[]);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("application/jsonl"));
    assert!(head.body.is_empty());
    // If-Modified-Since: 304 without content headers, on both routes.
    for t in ["all", "metas?schema=olm.package"] {
        let a = srv.ask("GET", t, &[("If-Modified-Since", &modified)]);
        assert_eq!(a.status, 304, "{t}");
        assert_eq!(a.header("content-type"), None);
        assert_eq!(a.header("content-length"), None);
        assert_eq!(a.header("last-modified"), Some(modified.as_str()));
        assert!(a.body.is_empty());
        let a = srv.ask(
            "GET",
            t,
            &[("If-Modified-Since", "Thu, 01 Jan 2015 00:00:00 GMT")],
        );
        assert_eq!(a.status, 200, "{t}");
        let a = srv.ask(
            "GET",
            t,
            &[("If-Unmodified-Since", "Thu, 01 Jan 2015 00:00:00 GMT")],
        );
        assert_eq!(a.status, 412, "{t}");
        assert!(a.body.is_empty());
        let a = srv.ask("GET", t, &[("If-None-Match", "*")]);
        assert_eq!(a.status, 304, "{t}");
    }
    // A malformed If-Modified-Since: ServeContent ignores it; catalogd's metas check writes a
    // 500 and then the answer after it.
    let a = srv.ask("GET", "all", &[("If-Modified-Since", "yesterday")]);
    assert_eq!(a.status, 200);
    let a = srv.ask(
        "GET",
        "metas?schema=olm.package&name=clusterpulse",
        &[("If-Modified-Since", "yesterday")],
    );
    assert_eq!(a.status, 500);
    let pkg = concat(
        expected(&dir)
            .iter()
            .filter(|b| b.schema == "olm.package" && b.name == "clusterpulse"),
    );
    assert_eq!(a.text(), format!("500 Internal Server Error\n{pkg}"));
    // Ranges (ServeContent): one range, a suffix, none that overlaps.
    let a = srv.ask("GET", "all", &[("Range", "bytes=0-99")]);
    assert_eq!(a.status, 206);
    assert_eq!(
        a.header("content-range"),
        Some(format!("bytes 0-99/{}", whole.len()).as_str())
    );
    assert_eq!(a.body, whole.as_bytes()[..100]);
    let a = srv.ask("GET", "all", &[("Range", "bytes=-10")]);
    assert_eq!(a.body, whole.as_bytes()[whole.len() - 10..]);
    // Several: multipart/byteranges, overlapping ones included, each part its bytes.
    let spec = "bytes=0-99,-10,5-5,-10";
    let a = srv.ask("GET", "all", &[("Range", spec)]);
    assert_eq!(a.status, 206);
    let boundary = a
        .header("content-type")
        .and_then(|t| t.strip_prefix("multipart/byteranges; boundary="))
        .expect("multipart")
        .to_string();
    assert_eq!(
        a.header("content-length"),
        Some(a.body.len().to_string().as_str())
    );
    let n = whole.len();
    let mut want = String::new();
    for (i, (start, end)) in [(0, 99), (n - 10, n - 1), (5, 5), (n - 10, n - 1)]
        .into_iter()
        .enumerate()
    {
        let sep = if i == 0 { "" } else { "\r\n" };
        want.push_str(&format!(
            "{sep}--{boundary}\r\nContent-Range: bytes {start}-{end}/{n}\r\nContent-Type: application/jsonl\r\n\r\n{}",
            &whole[start..=end]
        ));
    }
    want.push_str(&format!("\r\n--{boundary}--\r\n"));
    assert!(a.text() == want, "the multipart answer differs");
    // The same request, the same answer (the boundary is made from it).
    assert!(srv.ask("GET", "all", &[("Range", spec)]).body == a.body);
    // Ranges adding up to more than the content: the whole content (Go's sumRangesSize).
    let a = srv.ask("GET", "all", &[("Range", &format!("bytes=0-,0-{}", n / 2))]);
    assert_eq!(a.status, 200);
    assert!(a.text() == whole);
    let a = srv.ask(
        "GET",
        "all",
        &[("Range", &format!("bytes={}-", whole.len()))],
    );
    assert_error(&a, 416, "invalid range: failed to overlap");
    assert_eq!(
        a.header("content-range"),
        Some(format!("bytes */{}", whole.len()).as_str())
    );
    assert_eq!(a.header("last-modified"), None);
    let a = srv.ask(
        "GET",
        "all",
        &[("Range", "bytes=0-9"), ("If-Range", "\"x\"")],
    );
    assert_eq!(
        a.status, 200,
        "an If-Range that does not match: the whole catalog"
    );
    // gzip when asked: the same bytes, without Content-Length and Accept-Ranges.
    for t in ["all", "metas?schema=olm.bundle"] {
        let plain = srv.get(t);
        let a = srv.ask("GET", t, &[("Accept-Encoding", "gzip")]);
        assert_eq!(a.status, 200);
        assert_eq!(a.header("content-encoding"), Some("gzip"), "{t}");
        assert_eq!(a.header("content-length"), None);
        assert_eq!(a.header("accept-ranges"), None);
        assert_eq!(a.header("content-type"), Some("application/jsonl"));
        assert!(gunzip(&a.body) == plain.body, "{t}");
    }
    // Not for HEAD, for a range, for bodies under gzhttp's 1024 bytes, or for gzip;q=0.
    let head = srv.ask("HEAD", "all", &[("Accept-Encoding", "gzip")]);
    assert_eq!(head.header("content-encoding"), None);
    let a = srv.ask(
        "GET",
        "all",
        &[("Accept-Encoding", "gzip"), ("Range", "bytes=0-2000")],
    );
    assert_eq!((a.status, a.header("content-encoding")), (206, None));
    let small = srv.ask(
        "GET",
        "metas?package=no-such",
        &[("Accept-Encoding", "gzip")],
    );
    assert_eq!(small.header("content-encoding"), None);
    let a = srv.ask("GET", "all", &[("Accept-Encoding", "gzip;q=0")]);
    assert_eq!(a.header("content-encoding"), None);
}

#[test]
fn grpc_and_http_are_served_at_once() {
    use olmctl::serve::api;
    use olmctl::serve::api::registry_client::RegistryClient;
    let dir = common::fixture_catalog();
    let want = expected(&dir);
    let server = spawn_http(&dir, &["--catalog-name", "community"]);
    let http_port = server.http_port.expect("the HTTP port");
    wait_ready(http_port, "/catalogs/community/api/v1/all");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let names = rt.block_on(async {
        let url = format!("http://127.0.0.1:{}", server.port);
        let ch = tonic::transport::Endpoint::from_shared(url)
            .unwrap()
            .connect()
            .await
            .expect("gRPC port open");
        let mut c = RegistryClient::new(ch);
        let mut s = c
            .list_packages(api::ListPackageRequest {})
            .await
            .unwrap()
            .into_inner();
        let mut names = Vec::new();
        // HTTP answers while the gRPC stream is open.
        let a = request(
            http_port,
            "GET",
            "/catalogs/community/api/v1/metas?schema=olm.package",
            &[],
        )
        .unwrap();
        assert_eq!(a.status, 200);
        while let Some(p) = s.message().await.unwrap() {
            names.push(p.name);
        }
        names
    });
    let mut packages: Vec<String> = want
        .iter()
        .filter(|b| b.schema == "olm.package")
        .map(|b| b.name.clone())
        .collect();
    packages.sort();
    assert_eq!(names, packages);
    let a = request(http_port, "GET", "/catalogs/community/api/v1/all", &[]).unwrap();
    assert!(a.text() == concat(want.iter()));
}

#[test]
fn an_invalid_catalog_name_is_refused_before_serving() {
    let out = Command::new(common::olmctl_bin())
        .args(["catalog", "serve"])
        .arg(repo_catalog())
        .args(["--http", "0", "--catalog-name", "Not_Valid"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--catalog-name: invalid catalog name: a lowercase RFC 1123 subdomain"),
        "{err}"
    );
    // --no-grpc needs --http.
    let out = Command::new(common::olmctl_bin())
        .args(["catalog", "serve"])
        .arg(repo_catalog())
        .arg("--no-grpc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sigterm_stops_the_http_server_with_status_0() {
    let mut srv = start(&repo_catalog(), "olmctl", &["--no-grpc"]);
    let pid = srv._server.child.id() as i32;
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = srv._server.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let _ = &mut srv;
}

#[test]
fn hostile_requests_are_bounded() {
    use std::io::Write as _;
    let srv = start(&repo_catalog(), "olmctl", &["--no-grpc"]);
    // Headers beyond hyper's buffer: 431, the connection closed.
    let big = "x".repeat(500_000);
    let a = request(
        srv.port,
        "GET",
        &format!("{}/all", srv.base),
        &[("X-Big", &big)],
    )
    .unwrap();
    assert_eq!(a.status, 431);
    // Headers that never end: the connection is closed (after the 5 s header deadline)
    // without an answer, and the server still answers others.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    s.write_all(b"GET /catalogs/olmctl/api/v1/all HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).expect("closed, not timed out");
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    assert_eq!(srv.get("all").status, 200);
}
