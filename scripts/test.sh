#!/usr/bin/env bash
# The test command from README.md: unit, integration, CLI and fixture tests (one debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked "$@"
