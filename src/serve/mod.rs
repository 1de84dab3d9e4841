//! `olmctl catalog serve`: OLM's registry gRPC API (`api.Registry`, operator-registry's
//! `pkg/api/registry.proto`) over a File-Based Catalog, with the standard health service and
//! server reflection, as `opm serve` offers them to OLM's catalog operator.
//!
//! - [`api`], [`api_server`]: the messages, client and servers generated from
//!   `proto/registry.proto` (`scripts/grpc-gen.sh`; checked in, so building needs no protoc);
//! - [`reply`]: `api.Bundle` encoded from the served catalog without copying it;
//! - [`csv`]: the CSV opm serves for a bundle described only by `olm.csv.metadata`;
//! - [`rope`]: bundle JSON as shared pieces (one copy of a package's icon);
//! - [`catalog`]: the index the answers come from, built once at start;
//! - [`registry`]: the `api.Registry` service;
//! - [`server`]: the listener, health, reflection and shutdown;
//! - [`http`]: catalogd's HTTP API (OLM v1) over the same catalog.

pub mod catalog;
pub mod codec;
pub mod conn;
pub mod csv;
pub mod echo;
pub mod http;
pub mod listen;
pub mod registry;
pub mod reply;
pub mod rope;
pub mod run;
pub mod server;

/// The registry API's messages and client, generated from `proto/registry.proto` by
/// `scripts/grpc-gen.sh`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod api {
    include!("gen/api.rs");
}

/// The registry API's servers, generated with `api.Bundle` sent as [`reply::BundleReply`].
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod api_server {
    include!("gen/server.rs");
}

/// The file descriptor set of `proto/registry.proto` (and `google/protobuf/struct.proto`), for
/// server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("gen/registry.bin");

/// Gives freed heap pages back to the system (glibc keeps them): called once the parsed catalog
/// is dropped and only the served index remains.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; no pointer is involved.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Makes every thread allocate from glibc's main arena (`M_ARENA_MAX` 1), where
/// [`release_freed_memory`] can give back all that is free. Called before any other thread
/// starts by `catalog serve --no-grpc`, whose memory is otherwise mostly what loading left: with
/// the per-thread arenas, the idle RSS of the 10x catalog varied from 13.7 to 31 MB between runs
/// (a parser thread's arena keeps its free top), with one it stays at 13.1-13.7 MB.
pub fn single_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; no pointer is involved.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Fixes glibc's mmap threshold at its default, 128 KiB, so that large buffers (megabytes) are
/// mapped and given back when freed: glibc otherwise raises the threshold to the size of the
/// first large buffer freed and serves later ones from its arenas, which keep the memory.
/// Called before any other thread starts by olmctl-operator, whose conversion webhook holds
/// review bodies and answers of megabytes: under eight hostile 8 MiB reviews at once, twice,
/// its peak RSS was 100 MB without, 64 to 74 MB with. (The static musl builds allocate with
/// mimalloc.)
pub fn map_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; no pointer is involved.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

#[cfg(test)]
mod tests {
    /// The generated code is from the proto as checked in (rerun scripts/grpc-gen.sh after
    /// changing it).
    #[test]
    fn generated_code_matches_the_proto() {
        let proto = include_bytes!("../../proto/registry.proto");
        let want = include_str!("gen/registry.proto.sha256").trim();
        let got = crate::oci::digest::sha256(proto);
        assert_eq!(
            got.strip_prefix("sha256:"),
            Some(want),
            "proto/registry.proto changed: run scripts/grpc-gen.sh"
        );
    }
}
