#!/usr/bin/env bash
# Regenerates src/serve/gen/ (the registry API's Rust code and descriptor set) from
# proto/registry.proto. Needs network for the generator's crates, not protoc.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --manifest-path scripts/grpc-gen/Cargo.toml --target-dir target/grpc-gen
rustfmt --edition 2024 src/serve/gen/api.rs src/serve/gen/server.rs
sha256sum proto/registry.proto | cut -d' ' -f1 > src/serve/gen/registry.proto.sha256
