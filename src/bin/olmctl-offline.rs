//! `olmctl` without the commands that reach a cluster (`install` without `--print`,
//! `uninstall`): the library's command line with no Kubernetes client, built by this package so
//! that its integration tests and benchmarks run the command line through
//! `CARGO_BIN_EXE_olmctl-offline`. The `olmctl` binary users install is the `olmctl-cli`
//! package's (`cli/`), the same command line plus the cluster client.
fn main() -> std::process::ExitCode {
    olmctl::cli::main()
}
