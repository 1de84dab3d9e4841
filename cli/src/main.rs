/// The static (musl) builds allocate with mimalloc: musl's allocator is several times slower
/// (cli/Cargo.toml).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    olmctl_cli::main()
}
