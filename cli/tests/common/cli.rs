//! Running the `olmctl` binary as a child process.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `olmctl args...` without colour and returns what it printed.
pub fn olmctl(args: &[&str]) -> Output {
    Command::new(crate::common::olmctl_bin())
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run olmctl")
}

/// The exit status.
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

/// `path` as an argument.
pub fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}
