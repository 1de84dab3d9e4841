fn main() -> std::process::ExitCode {
    olmctl::cli::main()
}
