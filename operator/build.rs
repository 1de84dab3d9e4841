//! Build script: the commit for `--version`, as olmctl's (cli/build.rs).
include!("../cli/build.rs");
