fn main() -> std::process::ExitCode {
    olmctl_cli::main()
}
