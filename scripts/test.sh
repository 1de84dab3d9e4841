#!/usr/bin/env bash
# The test command from README.md: unit, integration, CLI, fixture and image tests (one debug
# build). The image tests start a real registry (Debian's docker-registry, the CNCF distribution
# registry) on 127.0.0.1 and check images with skopeo; both are installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# tests/graph_report.rs opens the HTML report in headless Chromium.
if ! command -v docker-registry >/dev/null || ! command -v skopeo >/dev/null \
  || ! command -v chromium >/dev/null; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    docker-registry skopeo chromium
fi
# tests/install_print.rs validates manifests with jsonschema (Python), as OLM's CRDs are schemas.
if ! python3 -c "import yaml, jsonschema" 2>/dev/null; then
  python3 -m pip install -q pyyaml jsonschema
fi
# operator/tests/image.rs runs the operator image from its layers: the Debian runtime root
# (downloaded with apt-get, cached in target/operator-base) is prepared here.
bash scripts/operator-image.sh --root >/dev/null
cargo test --locked --workspace "$@"
# The operator's own packaging, with the debug binaries the tests just built.
OLMCTL=target/debug/olmctl OPERATOR=target/debug/olmctl-operator bash scripts/packaging.sh
