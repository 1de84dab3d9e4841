#!/usr/bin/env bash
# The main job from README.md: build olmctl, then validate, list, lint and graph the repo's own catalog/,
# and build its catalog image.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked --release --bin olmctl
./target/release/olmctl catalog validate catalog/
./target/release/olmctl catalog ls catalog/
./target/release/olmctl catalog lint catalog/
./target/release/olmctl catalog graph catalog/ --format text
# Build the catalog image daemonless into an OCI layout (push with --tag REF and no --oci-layout).
rm -rf target/catalog-image
./target/release/olmctl catalog push catalog/ --tag localhost/olmctl/example-catalog:dev \
  --oci-layout target/catalog-image
