//! `olmctl catalog serve` as a child process, killed when dropped.
//!
//! The server binds port 0 (`--port 0`, `--http 0`) and the test reads the ports it got from
//! its "serving ... on ADDRESS" lines. Picking a free port first and passing it on left a
//! window (the server binds after loading the catalog, about 2 s in a debug build) in which
//! another test's server or client could take the same port; a test's clients then talked to
//! another test's server, and were reset when that test ended.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Server {
    pub child: Child,
    /// The gRPC port (0 with `--no-grpc`).
    pub port: u16,
    /// The HTTP port (catalogd's API), when the server was started with `--http`.
    pub http_port: Option<u16>,
    /// What the server wrote to stderr so far.
    log: Arc<Mutex<String>>,
}

impl Server {
    /// What the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "catalog serve (pid {}) wrote:\n{}",
                self.child.id(),
                self.log()
            );
        }
    }
}

/// Starts the server on `dir` with `flags` on port 0 (and `--http 0` when `http`), under
/// `ulimit -n nofile` when given (the shell execs olmctl, so the child is the server), and
/// waits until it has bound its ports. Does not wait for it to answer.
pub fn spawn(dir: &Path, nofile: Option<u32>, flags: &[&str]) -> Server {
    spawn_with(dir, nofile, false, flags)
}

/// [`spawn`], also serving catalogd's HTTP API (`--http 0`); `flags` name the catalog.
pub fn spawn_http(dir: &Path, flags: &[&str]) -> Server {
    spawn_with(dir, None, true, flags)
}

fn spawn_with(dir: &Path, nofile: Option<u32>, http: bool, flags: &[&str]) -> Server {
    let mut cmd = match nofile {
        Some(n) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                .arg(super::olmctl_bin());
            c
        }
        None => Command::new(super::olmctl_bin()),
    };
    cmd.args(["catalog", "serve"])
        .arg(dir)
        .args(["--port", "0"]);
    if http {
        cmd.args(["--http", "0"]);
    }
    cmd.args(flags);
    run(cmd, !flags.contains(&"--no-grpc"), http)
}

/// Runs `cmd`, a `catalog serve` (or an image's entrypoint that is one) given `--port 0` (and
/// `--http 0`), and waits until it has said which ports it bound: the gRPC one when `grpc`,
/// the HTTP one when `http`.
pub fn run(mut cmd: Command, grpc: bool, http: bool) -> Server {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start olmctl catalog serve");
    let stderr = child.stderr.take().expect("piped stderr");
    let log = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = mpsc::channel();
    {
        let log = log.clone();
        // Reads until the server exits, so that it never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(port) = bound_port(&line) {
                    let _ = tx.send(port);
                }
                if let Ok(mut l) = log.lock() {
                    l.push_str(&line);
                    l.push('\n');
                }
            }
        });
    }
    let mut server = Server {
        child,
        port: 0,
        http_port: None,
        log,
    };
    while (grpc && server.port == 0) || (http && server.http_port.is_none()) {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok((true, port)) => server.http_port = Some(port),
            Ok((false, port)) => server.port = port,
            // The server exited (or hangs) before it bound what it was asked to.
            Err(e) => panic!("catalog serve never said the ports it bound ({e})"),
        }
    }
    server
}

/// The port a "serving ..." line of `catalog serve` names, and whether it is the HTTP one:
/// "serving 35 packages on 0.0.0.0:41043 (...)" or "serving catalogd's API at
/// http://0.0.0.0:41045/catalogs/NAME (...)".
fn bound_port(line: &str) -> Option<(bool, u16)> {
    let rest = line.strip_prefix("serving ")?;
    let (http, addr) = if let Some((_, a)) = rest.split_once(" at http://") {
        (true, a.split('/').next()?)
    } else {
        let (_, a) = rest.split_once(" on ")?;
        (false, a.split(' ').next()?)
    };
    let port = addr.rsplit_once(':')?.1.parse().ok()?;
    Some((http, port))
}
