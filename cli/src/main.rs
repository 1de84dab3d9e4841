fn main() -> std::process::ExitCode {
    olmctl::cli::main_with(Box::new(olmctl_cli::Kube))
}
