//! `olmctl catalog serve` as a child process on a free port, killed when dropped.

use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server on `dir` with `flags`, under `ulimit -n nofile` when given (the shell
/// execs olmctl, so the child is the server). Does not wait for it to serve.
pub fn spawn(dir: &Path, nofile: Option<u32>, flags: &[&str]) -> Server {
    let port = super::free_port();
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
    let child = cmd
        .args(["catalog", "serve"])
        .arg(dir)
        .args(["--port", &port.to_string()])
        .args(flags)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start olmctl catalog serve");
    Server { child, port }
}
