//! Running `olmctl` as a child with bounded resources, for hostile-input tests: an
//! address-space limit (a runaway allocation aborts the child instead of the machine), a
//! watchdog that kills a hung child, and the child's own peak RSS from `wait4`.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Address space a child may map: the CLI reserves 256 MiB stacks for its worker and parser
/// threads, so this leaves room for them and about 2 GiB of heap.
pub const ADDRESS_SPACE: u64 = 3 << 30;

/// A hang guard, not a timing assertion: a child still running after this is killed and the
/// test fails.
pub const WATCHDOG: Duration = Duration::from_secs(120);

/// What a bounded run gave.
#[derive(Debug)]
pub struct Run {
    /// The exit code, `None` when killed by a signal.
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Killed by the watchdog.
    pub hung: bool,
    /// Peak resident memory in bytes.
    pub max_rss: u64,
    /// What it printed.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

impl Run {
    /// Asserts the run ended by itself with exit code 0, 1 or 2 under `max_rss` bytes, and
    /// returns the code.
    #[track_caller]
    pub fn bounded(&self, max_rss: u64) -> i32 {
        assert!(!self.hung, "hung (killed after {WATCHDOG:?}): {self:?}");
        let code = self
            .code
            .unwrap_or_else(|| panic!("killed by signal: {self:?}"));
        assert!(
            (0..=2).contains(&code),
            "exit {code} is not 0, 1 or 2: {}",
            self.stderr
        );
        assert!(
            self.max_rss < max_rss,
            "peak RSS {} MiB is over {} MiB: {}",
            self.max_rss >> 20,
            max_rss >> 20,
            self.stderr
        );
        code
    }
}

/// Runs `olmctl args...` with `stdin` closed.
pub fn run(args: &[&str]) -> Run {
    run_env(args, &[])
}

/// [`run`] with extra environment variables.
// The child is reaped by `wait4` (which also gives its own peak RSS), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(crate::common::olmctl_bin());
    cmd.args(args)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn olmctl");
    let pid = child.id() as libc::pid_t;
    let read_all = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = read_all(Box::new(child.stdout.take().expect("stdout")));
    let err = read_all(Box::new(child.stderr.take().expect("stderr")));
    let done = Arc::new(AtomicBool::new(false));
    let hung = Arc::new(AtomicBool::new(false));
    let (d, h) = (done.clone(), hung.clone());
    let watchdog = std::thread::spawn(move || {
        let start = Instant::now();
        while !d.load(Ordering::SeqCst) {
            if start.elapsed() > WATCHDOG {
                h.store(true, Ordering::SeqCst);
                // SAFETY: signalling our own child, which has not been reaped yet.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child; std's Child is not waited on afterwards.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    done.store(true, Ordering::SeqCst);
    let _ = watchdog.join();
    assert_eq!(r, pid, "wait4 failed");
    let st = std::process::ExitStatus::from_raw(status);
    Run {
        code: st.code(),
        signal: st.signal(),
        hung: hung.load(Ordering::SeqCst),
        max_rss: usage.ru_maxrss as u64 * 1024,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Asserts that what `r` printed (stdout and stderr) contains every needle.
#[track_caller]
pub fn assert_mentions(r: &Run, needles: &[&str]) {
    let all = format!("{}{}", r.stdout, r.stderr);
    for n in needles {
        assert!(all.contains(n), "output lacks {n:?}:\n{all}");
    }
}
