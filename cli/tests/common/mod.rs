//! Shared helpers for the command line's tests: the test data of [`olmctl_testdata`]
//! (the library's tests use the same) and running the real `olmctl` binary.
#![allow(dead_code, unused_imports)]

pub mod bounded;
pub mod cli;
pub mod flaky;
pub mod http;
pub mod served;
pub mod terminal;

use std::path::PathBuf;

pub use olmctl_testdata::*;

/// The `olmctl` binary this package builds.
pub fn olmctl_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_olmctl"))
}
