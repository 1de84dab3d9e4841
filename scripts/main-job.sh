#!/usr/bin/env bash
# The main job from README.md: build olmctl and validate, then list, the repo's own catalog/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked --release --bin olmctl
./target/release/olmctl catalog validate catalog/
./target/release/olmctl catalog ls catalog/
