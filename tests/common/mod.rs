//! Shared helpers for the library's integration tests: the test data of
//! [`olmctl_testdata`] (the command line's tests in `cli/tests/` use the same).
#![allow(dead_code, unused_imports)]

pub use olmctl_testdata::*;
