//! A real OCI registry for tests: Debian's `docker-registry` (the CNCF distribution registry)
//! on 127.0.0.1 with a port it picks and a temporary storage directory, stopped on drop.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The test user of [`TestRegistry::start_with_auth`].
pub const USER: &str = "olmctl";
/// Its password (a test credential, bcrypt cost 4 in the htpasswd file below).
pub const PASSWORD: &str = "s3cret-pass";
const HTPASSWD: &str = "olmctl:$2b$04$10hdIsKok89LPuz0Wk.Ex.JIqZFN9k1VRzA6ou4kfsdCiFAkWOmE6\n";

/// A running registry.
pub struct TestRegistry {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    dir: tempfile::TempDir,
}

fn binary() -> PathBuf {
    for name in ["docker-registry", "registry"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "no docker-registry binary on PATH: install Debian's docker-registry package (apt-get install docker-registry), as .ci/run does"
    );
}

impl TestRegistry {
    /// Starts an anonymous registry.
    pub fn start() -> TestRegistry {
        Self::start_inner(false, false)
    }

    /// Starts an anonymous registry that logs every request ([`TestRegistry::requests`]).
    pub fn start_logged() -> TestRegistry {
        Self::start_inner(false, true)
    }

    /// Starts a registry with htpasswd basic auth ([`USER`]/[`PASSWORD`]).
    pub fn start_with_auth() -> TestRegistry {
        Self::start_inner(true, false)
    }

    fn start_inner(auth: bool, access_log: bool) -> TestRegistry {
        let bin = binary();
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("tempdir");
            // Port 0: the registry binds a free port and logs it ("listening on ADDR", at
            // info). A port picked here first could be taken by another test's server before
            // the registry binds it, and this test would then talk to that one.
            let mut cfg = format!(
                "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: {}\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:0\n",
                !access_log,
                dir.path().join("data").display()
            );
            if auth {
                let h = dir.path().join("htpasswd");
                std::fs::write(&h, HTPASSWD).expect("htpasswd");
                cfg.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: olmctl-test\n    path: {}\n",
                    h.display()
                ));
            }
            let cfg_path = dir.path().join("config.yml");
            std::fs::write(&cfg_path, cfg).expect("config");
            let log = std::fs::File::create(dir.path().join("registry.log")).expect("log");
            let child = Command::new(&bin)
                .arg("serve")
                .arg(&cfg_path)
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log"))
                .stderr(log)
                .spawn()
                .expect("start docker-registry");
            let mut reg = TestRegistry {
                child,
                addr: String::new(),
                dir,
            };
            if reg.wait_ready() {
                return reg;
            }
            let _ = reg.child.kill();
        }
        panic!("docker-registry did not start after 5 tries");
    }

    /// Waits until the registry has logged the address it bound, then until it answers there.
    fn wait_ready(&mut self) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if self.addr.is_empty() {
                if let Some(addr) = listening_on(&self.log()) {
                    self.addr = addr;
                }
            } else if let Some(status) = http_status(&self.addr, "/v2/") {
                return status == 200 || status == 401;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// `127.0.0.1:<port>/<repo>`.
    pub fn image(&self, repo_tag: &str) -> String {
        format!("{}/{repo_tag}", self.addr)
    }

    /// The storage root (for tests that corrupt blobs on purpose).
    pub fn storage(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The requests logged so far (`METHOD /path`), for a registry started with
    /// [`TestRegistry::start_logged`].
    pub fn requests(&self) -> Vec<String> {
        self.log()
            .lines()
            .filter_map(|l| {
                let q = l.split('"').nth(1)?;
                let mut parts = q.split_whitespace();
                let (method, path) = (parts.next()?, parts.next()?);
                path.starts_with("/v2/").then(|| format!("{method} {path}"))
            })
            .collect()
    }

    /// The registry's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in distribution's `msg="listening on 127.0.0.1:PORT"` line, if logged yet.
fn listening_on(log: &str) -> Option<String> {
    log.lines().find_map(|l| {
        let rest = l.split_once("msg=\"listening on ")?.1;
        Some(rest.split('"').next()?.to_string())
    })
}

/// GETs `path` from `addr` with plain HTTP/1.0; returns the status code.
pub fn http_status(addr: &str, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).ok()?;
    let head = std::str::from_utf8(&buf[..n]).ok()?;
    head.split_whitespace().nth(1)?.parse().ok()
}

/// A current-thread runtime for one test's registry calls.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A registry client for `reg` (no progress lines).
pub fn client(reg: &TestRegistry) -> olmctl::oci::registry::Registry {
    let r = olmctl::oci::registry::parse_ref(&reg.image("x:y")).expect("reference");
    olmctl::oci::registry::Registry::new(
        olmctl::oci::registry::Options {
            ..Default::default()
        },
        &[&r],
        &[&r],
    )
}
