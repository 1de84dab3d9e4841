//! Writes the Rust code and the file descriptor set of proto/registry.proto into src/serve/gen/
//! with protox (a protobuf compiler in Rust: no protoc needed) and tonic-prost-build:
//! - `api.rs`: the messages and the client;
//! - `server.rs`: the servers, over those messages except `api.Bundle`, which the server sends
//!   as `crate::serve::reply::BundleReply` (encoded straight from the served catalog, no copy of
//!   the bundle's JSON per call).
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let proto = root.join("proto");
    let out = root.join("src/serve/gen");
    std::fs::create_dir_all(&out).expect("mkdir");
    let fds = protox::compile([proto.join("registry.proto")], [&proto]).expect("compile proto");
    let bytes = prost::Message::encode_to_vec(&fds);
    std::fs::write(out.join("registry.bin"), &bytes).expect("write descriptor set");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .out_dir(&out)
        .compile_fds(fds.clone())
        .expect("generate messages and client");
    let tmp = root.join("target/grpc-gen/server");
    std::fs::create_dir_all(&tmp).expect("mkdir");
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        // prost's codec with malformed requests as InvalidArgument (src/serve/codec.rs).
        .codec_path("crate::serve::codec::Codec")
        .extern_path(".api", "crate::serve::api")
        .extern_path(".api.Bundle", "crate::serve::reply::BundleReply")
        .out_dir(&tmp)
        .compile_fds(fds)
        .expect("generate servers");
    std::fs::copy(tmp.join("api.rs"), out.join("server.rs")).expect("copy server.rs");
}
