//! Hostile and broken registries (issue 14, network side): a tiny HTTP/1.1 server on 127.0.0.1
//! that accepts connections and never answers, streams endless bodies (manifests, blobs, token
//! and error responses) or sends more than it declared. The real `olmctl` binary runs against
//! it as a child; every command must end with exit status 2 and an error naming the image and
//! the timeout or limit, with bounded memory (the server counts what it sent) and never hang
//! (each child is killed after [`LIFETIME`], which fails the test).

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{PKG, bundle, fixture_operators, write_tree};

/// How long a fake server serves; also the hang guard of every child.
const LIFETIME: Duration = Duration::from_secs(60);
/// An endless body stops here even if the client never gives up (keeps the test bounded).
const SEND_CAP: u64 = 1 << 30;
/// What counts as "stopped early": well above every limit olmctl applies to such bodies, far
/// below what an unbounded client would have swallowed before the server's cap.
const BOUNDED: u64 = 64 << 20;

/// One request as the fake server saw it.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    authorization: Option<String>,
}

/// How the fake server answers a request.
#[derive(Clone)]
enum Reply {
    /// Read the request, then say nothing until the client goes away (or the server stops).
    Silent,
    /// A complete answer.
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// Status and headers, then a chunked body that never ends.
    Endless(u16, Vec<(String, String)>),
}

fn json(status: u16, body: &[u8]) -> Reply {
    Reply::Full(
        status,
        vec![("Content-Type".into(), "application/json".into())],
        body.to_vec(),
    )
}

fn endless(status: u16) -> Reply {
    Reply::Endless(
        status,
        vec![(
            "Content-Type".into(),
            "application/vnd.oci.image.manifest.v1+json".into(),
        )],
    )
}

/// A fake registry.
struct Fake {
    /// `127.0.0.1:<port>`.
    addr: String,
    /// Body bytes sent so far (endless bodies included).
    sent: Arc<AtomicU64>,
    /// Paths requested so far.
    seen: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    /// Serves `route` (which gets the request and this server's address) for [`LIFETIME`].
    fn start(route: impl Fn(&Request, &str) -> Reply + Send + Sync + 'static) -> Fake {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.set_nonblocking(true).expect("nonblocking");
        let addr = l.local_addr().expect("addr").to_string();
        let sent = Arc::new(AtomicU64::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let route = Arc::new(route);
        let deadline = Instant::now() + LIFETIME;
        let (a, s, n) = (addr.clone(), sent.clone(), seen.clone());
        std::thread::spawn(move || {
            while Instant::now() < deadline {
                match l.accept() {
                    Ok((c, _)) => {
                        let (route, a, s, n) = (route.clone(), a.clone(), s.clone(), n.clone());
                        std::thread::spawn(move || {
                            let _ = serve(c, deadline, &s, &n, |r| route(r, &a));
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Fake { addr, sent, seen }
    }

    /// `<addr>/<repo>`.
    fn image(&self, repo: &str) -> String {
        format!("{}/{repo}", self.addr)
    }

    fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    fn requested(&self, needle: &str) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|p| p.contains(needle)).count()
    }
}

/// Handles one connection (one request: every answer closes it).
fn serve(
    mut c: TcpStream,
    deadline: Instant,
    sent: &AtomicU64,
    seen: &Mutex<Vec<String>>,
    route: impl Fn(&Request) -> Reply,
) -> std::io::Result<()> {
    c.set_nonblocking(false)?;
    c.set_read_timeout(Some(Duration::from_millis(100)))?;
    c.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if Instant::now() > deadline || head.len() > 64 << 10 {
            return Ok(());
        }
        match c.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(_) => continue,
        }
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let path = text.split(' ').nth(1).unwrap_or("").to_string();
    let authorization = text
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("authorization")
                .then(|| v.trim().to_string())
        })
        .filter(|v| !v.is_empty());
    seen.lock().unwrap().push(path.clone());
    let head_of = |status: u16, headers: &[(String, String)], extra: &str| {
        let mut h = format!("HTTP/1.1 {status} Fake\r\nConnection: close\r\n{extra}");
        for (k, v) in headers {
            h.push_str(&format!("{k}: {v}\r\n"));
        }
        h.push_str("\r\n");
        h
    };
    match route(&Request {
        path,
        authorization,
    }) {
        Reply::Silent => {
            // Until the client hangs up (read gives 0) or the server's time is up.
            while Instant::now() < deadline {
                match c.read(&mut buf) {
                    Ok(0) => return Ok(()),
                    _ => continue,
                }
            }
        }
        Reply::Full(status, headers, body) => {
            let extra = format!("Content-Length: {}\r\n", body.len());
            c.write_all(head_of(status, &headers, &extra).as_bytes())?;
            c.write_all(&body)?;
            sent.fetch_add(body.len() as u64, Ordering::SeqCst);
        }
        Reply::Endless(status, headers) => {
            c.write_all(head_of(status, &headers, "Transfer-Encoding: chunked\r\n").as_bytes())?;
            let chunk = vec![b'{'; 64 << 10];
            let mut total = 0u64;
            while total < SEND_CAP && Instant::now() < deadline {
                c.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
                c.write_all(&chunk)?;
                c.write_all(b"\r\n")?;
                total += chunk.len() as u64;
                sent.fetch_add(chunk.len() as u64, Ordering::SeqCst);
            }
        }
    }
    Ok(())
}

/// A small valid catalog image: manifest, config and layer by digest.
struct Image {
    manifest: Vec<u8>,
    blobs: BTreeMap<String, Vec<u8>>,
    config: String,
}

fn catalog_image() -> Image {
    let files = vec![(
        PathBuf::from("foo/catalog.yaml"),
        format!(
            "{PKG}---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n{}",
            bundle("1.0.0")
        ),
    )];
    let layer = olmctl::oci::catalog_image::configs_layer(&files, 0).unwrap();
    let labels = olmctl::oci::catalog_image::labels(&BTreeMap::new());
    let art = olmctl::oci::catalog_image::standalone(&layer, &labels, None);
    let m = &art.manifests()[0];
    let mut blobs = BTreeMap::new();
    for b in &m.blobs {
        if let olmctl::oci::image::BlobData::Bytes(d) = &b.data {
            blobs.insert(b.desc.digest.clone(), d.to_vec());
        }
    }
    Image {
        manifest: m.bytes.clone(),
        config: m.blobs[0].desc.digest.clone(),
        blobs,
    }
}

impl Image {
    /// Answers manifest and blob requests like a registry.
    fn serve(&self, path: &str) -> Reply {
        if path.contains("/manifests/") {
            return Reply::Full(
                200,
                vec![(
                    "Content-Type".into(),
                    "application/vnd.oci.image.manifest.v1+json".into(),
                )],
                self.manifest.clone(),
            );
        }
        match path.rsplit_once("/blobs/") {
            Some((_, d)) if self.blobs.contains_key(d) => json(200, &self.blobs[d]),
            _ => json(
                404,
                br#"{"errors":[{"code":"BLOB_UNKNOWN","message":"no"}]}"#,
            ),
        }
    }
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs olmctl with an empty HOME (no auth files) and kills it after [`LIFETIME`]: a child
/// still running then is a hang, which fails the test.
fn olmctl(args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(crate::common::olmctl_bin())
        .args(args)
        .env("NO_COLOR", "1")
        .env("HOME", home.path())
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run olmctl");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > LIFETIME {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "olmctl {args:?} hung (killed after {LIFETIME:?}); stderr:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts exit status 2 and an error naming `image` and every one of `needles`; returns
/// stderr.
fn fails(o: &Output, image: &str, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "stderr:\n{err}");
    assert!(err.contains(image), "the error should name {image}:\n{err}");
    for n in needles {
        assert!(err.contains(n), "the error should say {n:?}:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// `catalog pull IMAGE DIR --timeout 1s` plus `extra`.
fn pull(image: &str, extra: &[&str]) -> Output {
    let dest = tempfile::tempdir().unwrap();
    let dir = dest.path().join("out");
    let mut args = vec!["catalog", "pull", image, p(&dir), "--timeout", "1s"];
    args.extend_from_slice(extra);
    olmctl(&args)
}

/// The retry flags of a test: no retries, then the default retries.
const RETRIES: [&[&str]; 2] = [&["--retries", "0"], &[]];

/// A registry that answers /v2/ with a Bearer challenge pointing at its own /token.
fn challenge(addr: &str) -> Reply {
    Reply::Full(
        401,
        vec![(
            "WWW-Authenticate".into(),
            format!(r#"Bearer realm="http://{addr}/token",service="fake""#),
        )],
        Vec::new(),
    )
}

/// The fake server serves a real image through a Bearer token flow: the positive control for
/// the hostile variants below (olmctl does this token flow itself).
#[test]
fn bearer_token_flow_pulls_an_image() {
    let img = catalog_image();
    let fake = Fake::start(move |r, addr| match r.path.as_str() {
        "/v2/" => challenge(addr),
        p if p.starts_with("/token?") => {
            assert!(p.contains("scope=repository%3Agood%2Fcat%3Apull"), "{p}");
            json(200, br#"{"token":"T0K3N","expires_in":300}"#)
        }
        p if r.authorization.as_deref() == Some("Bearer T0K3N") => img.serve(p),
        _ => json(
            401,
            br#"{"errors":[{"code":"UNAUTHORIZED","message":"no"}]}"#,
        ),
    });
    let image = fake.image("good/cat:v1");
    let dest = tempfile::tempdir().unwrap();
    let o = olmctl(&["catalog", "pull", &image, p(&dest.path().join("out"))]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dest.path().join("out/foo/catalog.yaml").is_file());
}

/// (a) A registry that accepts the connection and never answers, at /v2/ and at the manifest:
/// the pull ends after --timeout per attempt, with and without retries.
#[test]
fn silent_registry_times_out() {
    for silent_at in ["/v2/", "/manifests/"] {
        let fake = Fake::start(move |r, _| {
            if r.path.contains(silent_at) {
                Reply::Silent
            } else {
                json(200, b"{}")
            }
        });
        let image = fake.image("hostile/cat:v1");
        for extra in RETRIES {
            let err = fails(&pull(&image, extra), &image, &["timed out", "--timeout"]);
            if extra.is_empty() {
                assert!(err.contains("retry 4/4"), "{err}");
            }
        }
    }
}

/// Every command that talks to a registry takes --timeout and gives up on a silent one.
#[test]
fn every_registry_command_times_out() {
    let fake = Fake::start(|_, _| Reply::Silent);
    let image = fake.image("hostile/thing:v1");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let catalog = write_tree(&[(
        "foo/catalog.yaml",
        &format!(
            "{PKG}---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n{}",
            bundle("1.0.0")
        ),
    )]);
    let bundle_dir = fixture_operators().join("kube-green/0.7.1");
    let t = ["--timeout", "1s", "--retries", "0"];
    let commands: Vec<Vec<&str>> = vec![
        vec!["bundle", "unpack", &image, p(&out)],
        vec!["catalog", "pull", &image, p(&out)],
        vec!["catalog", "render", &image],
        vec!["check", "upgrade", &image, &image],
        vec!["bundle", "build", p(&bundle_dir), "--tag", &image, "--push"],
        vec!["catalog", "push", p(catalog.path()), "--tag", &image],
        vec![
            "catalog",
            "push",
            p(catalog.path()),
            "--tag",
            &image,
            "--base-image",
            &image,
        ],
    ];
    for mut args in commands {
        args.extend_from_slice(&t);
        let o = olmctl(&args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{args:?}:\n{err}");
        assert!(
            err.contains(&image) && err.contains("timed out"),
            "{args:?}:\n{err}"
        );
    }
}

/// (b) A manifest GET answered with an endless chunked body: cut at the manifest limit.
#[test]
fn endless_manifest_body_is_cut_at_the_limit() {
    for extra in RETRIES {
        let fake = Fake::start(|r, _| match r.path.as_str() {
            "/v2/" => json(200, b"{}"),
            _ => endless(200),
        });
        let image = fake.image("hostile/cat:v1");
        fails(&pull(&image, extra), &image, &["manifest", "4 MiB"]);
        assert!(fake.sent() < BOUNDED, "server sent {} bytes", fake.sent());
    }
}

/// (c) A blob GET answered with an endless body: cut at the size the descriptor declares
/// (the config here, a layer below); a layer declared larger than --max-size is refused
/// before it is requested.
#[test]
fn endless_blob_body_is_cut_at_its_declared_size() {
    let img = Arc::new(catalog_image());
    for which in ["config", "layer"] {
        let i = img.clone();
        let endless_blob = if which == "config" {
            i.config.clone()
        } else {
            i.blobs.keys().find(|d| **d != i.config).unwrap().clone()
        };
        let fake = Fake::start(move |r, _| {
            if r.path.ends_with(&endless_blob) {
                endless(200)
            } else if r.path == "/v2/" {
                json(200, b"{}")
            } else {
                i.serve(&r.path)
            }
        });
        let image = fake.image("hostile/cat:v1");
        fails(
            &pull(&image, &[]),
            &image,
            &["more than the", "bytes the descriptor declares"],
        );
        assert!(fake.sent() < BOUNDED, "server sent {} bytes", fake.sent());
    }
}

#[test]
fn blob_over_max_size_is_refused_before_download() {
    let img = Arc::new(catalog_image());
    let layer = img
        .blobs
        .keys()
        .find(|d| **d != img.config)
        .unwrap()
        .clone();
    // The manifest declares a 3 GiB layer (over the default --max-size of 2G).
    let mut m: serde_json::Value = serde_json::from_slice(&img.manifest).unwrap();
    m["layers"][0]["size"] = serde_json::json!(3u64 << 30);
    let manifest = serde_json::to_vec(&m).unwrap();
    let i = img.clone();
    let fake = Fake::start(move |r, _| {
        if r.path.contains("/manifests/") {
            json(200, &manifest)
        } else if r.path == "/v2/" {
            json(200, b"{}")
        } else {
            i.serve(&r.path)
        }
    });
    let image = fake.image("hostile/cat:v1");
    fails(&pull(&image, &[]), &image, &["--max-size"]);
    assert_eq!(fake.requested(&layer), 0);
}

/// (d) A token realm that never answers, or answers with an endless body.
#[test]
fn hostile_token_realm_is_bounded() {
    for extra in RETRIES {
        let fake = Fake::start(|r, addr| match r.path.as_str() {
            "/v2/" => challenge(addr),
            p if p.starts_with("/token") => Reply::Silent,
            _ => json(401, b"{}"),
        });
        let image = fake.image("hostile/cat:v1");
        fails(&pull(&image, extra), &image, &["timed out", "--timeout"]);
    }
    let fake = Fake::start(|r, addr| match r.path.as_str() {
        "/v2/" => challenge(addr),
        p if p.starts_with("/token") => endless(200),
        _ => json(401, b"{}"),
    });
    let image = fake.image("hostile/cat:v1");
    fails(&pull(&image, &[]), &image, &["token", "1 MiB"]);
    assert!(fake.sent() < BOUNDED, "server sent {} bytes", fake.sent());
}

/// Error answers (404, 500) with endless bodies are read only up to a small prefix.
#[test]
fn endless_error_bodies_are_cut() {
    for status in [404, 500] {
        let fake = Fake::start(move |r, _| match r.path.as_str() {
            "/v2/" => json(200, b"{}"),
            _ => endless(status),
        });
        let image = fake.image("hostile/cat:v1");
        fails(
            &pull(&image, &["--retries", "1"]),
            &image,
            &[&status.to_string()],
        );
        assert!(fake.sent() < BOUNDED, "server sent {} bytes", fake.sent());
    }
}

/// A push target that has no blobs and answers the upload with an endless error body: read
/// only up to a small prefix too.
#[test]
fn endless_error_bodies_of_a_push_target_are_cut() {
    let fake = Fake::start(|r, _| match r.path.as_str() {
        "/v2/" => json(200, b"{}"),
        p if p.contains("/blobs/uploads/") => endless(500),
        _ => Reply::Full(404, Vec::new(), Vec::new()),
    });
    let image = fake.image("hostile/bundle:v1");
    let bundle_dir = fixture_operators().join("kube-green/0.7.1");
    let o = olmctl(&[
        "bundle",
        "build",
        p(&bundle_dir),
        "--tag",
        &image,
        "--push",
        "--retries",
        "1",
        "--timeout",
        "5s",
    ]);
    fails(&o, &image, &["500"]);
    assert!(fake.sent() < BOUNDED, "server sent {} bytes", fake.sent());
}
