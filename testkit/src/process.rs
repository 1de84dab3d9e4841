//! Real processes as pods: a binary started with a kubeconfig to the API double (the
//! stand-in for the ServiceAccount token a pod mounts), `POD_NAME` and `POD_NAMESPACE` from
//! the downward API, and an IP address of its own.
//!
//! A pod has its own network namespace, so every replica of a Deployment listens on the same
//! container ports. Here each pod gets its own loopback address (127.1.x.y; Linux routes all
//! of 127.0.0.0/8 to `lo`), and the kubelet double tells the binary to listen there with the
//! flags it has for its addresses. That flag is the only difference from the pod spec.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static NEXT_IP: AtomicU32 = AtomicU32::new(0);

/// A loopback address no other pod of this test process has.
pub fn pod_ip() -> Ipv4Addr {
    let n = NEXT_IP.fetch_add(1, Ordering::SeqCst);
    // 127.1.0.2 onwards, a different /16 per test process to keep runs apart.
    let base = (std::process::id() % 200) as u8 + 1;
    Ipv4Addr::new(127, base, (n / 250) as u8, (n % 250) as u8 + 2)
}

/// How to start a process.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The binary.
    pub bin: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Where its kubeconfig, log and files go.
    pub dir: PathBuf,
    /// The kubeconfig text.
    pub kubeconfig: String,
}

/// A running process.
pub struct Proc {
    child: Child,
    /// Its combined stdout and stderr.
    pub log: PathBuf,
}

impl Proc {
    /// Starts it.
    pub fn start(l: &Launch) -> std::io::Result<Proc> {
        std::fs::create_dir_all(&l.dir)?;
        let kc = l.dir.join("kubeconfig");
        std::fs::write(&kc, &l.kubeconfig)?;
        let log = l.dir.join("log");
        let out = std::fs::File::create(&log)?;
        let err = out.try_clone()?;
        let mut cmd = Command::new(&l.bin);
        cmd.args(&l.args)
            .env_clear()
            .env("KUBECONFIG", &kc)
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &l.dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        for (k, v) in &l.env {
            cmd.env(k, v);
        }
        Ok(Proc {
            child: cmd.spawn()?,
            log,
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM (what the kubelet sends first).
    pub fn terminate(&self) {
        signal(self.child.id(), libc::SIGTERM);
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
    }

    /// SIGSTOP: the process freezes (a node that stops scheduling it).
    pub fn freeze(&self) {
        signal(self.child.id(), libc::SIGSTOP);
    }

    /// SIGCONT.
    pub fn thaw(&self) {
        signal(self.child.id(), libc::SIGCONT);
    }

    /// The exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `timeout` for it to exit.
    pub async fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            if tokio::time::Instant::now() >= end {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// What it printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a pid this process started; no memory is shared.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// One HTTP/1.1 GET to `addr` (a pod's probe port); `None` when nothing answers in time.
pub async fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    use http_body_util::{BodyExt, Empty};
    let fut = async {
        let tcp = tokio::net::TcpStream::connect(addr).await.ok()?;
        let (mut tx, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .ok()?;
        tokio::spawn(conn);
        let req = http::Request::get(path)
            .header("host", addr.to_string())
            .body(Empty::<bytes::Bytes>::new())
            .ok()?;
        let resp = tx.send_request(req).await.ok()?;
        let code = resp.status().as_u16();
        let body = resp.into_body().collect().await.ok()?.to_bytes();
        Some((code, String::from_utf8_lossy(&body).into_owned()))
    };
    tokio::time::timeout(Duration::from_secs(2), fut)
        .await
        .ok()
        .flatten()
}

/// Waits (polling every 50 ms, at most `timeout`) until `f` holds; false on timeout.
pub async fn eventually<F, Fut>(timeout: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let end = tokio::time::Instant::now() + timeout;
    loop {
        if f().await {
            return true;
        }
        if tokio::time::Instant::now() >= end {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The workspace's target directory binary `name` (built by `cargo test --workspace`), for
/// tests of another package.
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    // target/debug/deps/<test> -> target/debug/<name>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    dir.join(name)
}
