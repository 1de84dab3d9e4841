#!/usr/bin/env bash
# The test command from README.md: unit, integration, CLI, fixture and image tests (one debug
# build). The image tests start a real registry (Debian's docker-registry, the CNCF distribution
# registry) on 127.0.0.1 and check images with skopeo; both are installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# tests/graph_report.rs opens the HTML report in headless Chromium.
# cli/tests/shell.rs renders the man pages with groff (groff-base).
if ! command -v docker-registry >/dev/null || ! command -v skopeo >/dev/null \
  || ! command -v chromium >/dev/null || ! command -v groff >/dev/null; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    docker-registry skopeo chromium groff-base
fi
# tests/install_print.rs validates manifests with jsonschema (Python), as OLM's CRDs are schemas.
# tests/yaml_corpus.rs compares the YAML reader with PyYAML's libyaml loader (CSafeLoader).
if ! python3 -c "import yaml, jsonschema; yaml.CSafeLoader" 2>/dev/null; then
  python3 -m pip install -q pyyaml jsonschema
fi
# cli/tests/pre_commit.rs runs the hooks with the real pre-commit (PyPI), pinned.
if ! python3 -m pre_commit --version 2>/dev/null | grep -qx 'pre-commit 4.7.0'; then
  python3 -m pip install -q pre-commit==4.7.0
fi
# cli/tests/ci_formats.rs compares `-o github` with what GitHub's toolkit prints: @actions/core
# from the npm registry, pinned, into target/npm (node is on the machine).
if [ ! -f target/npm/node_modules/@actions/core/package.json ]; then
  mkdir -p target/npm
  npm install --silent --no-audit --no-fund --prefix target/npm @actions/core@1.11.1
fi
# testkit/tests/kubectl.rs drives the API double with the real kubectl 1.32: the Cloud SDK's
# kubectl.1.32 or kubectl on PATH (KUBECTL=path picks another); when neither is 1.32 it is
# downloaded from dl.k8s.io into target/kubectl and checked against its published SHA-256.
# The output is read whole first: `| grep -q` under pipefail failed at random when grep exited
# before kubectl wrote its last line (SIGPIPE). A "-dispatcher" build (gcloud's kubectl, minor
# "32+") is not taken: the test wants minor "32".
is_kubectl_132() {
  local v
  v="$("$1" version --client 2>/dev/null)" || return 1
  [[ "$v" =~ Client\ Version:\ v1\.32\.[0-9]+($|[[:space:]]) ]]
}
if [ -z "${KUBECTL:-}" ]; then
  for k in /usr/lib/google-cloud-sdk/bin/kubectl.1.32 "$(command -v kubectl || true)" target/kubectl/kubectl; do
    if [ -n "$k" ] && [ -x "$k" ] && is_kubectl_132 "$k"; then KUBECTL="$k"; break; fi
  done
  if [ -z "${KUBECTL:-}" ]; then
    url=https://dl.k8s.io/release/v1.32.5/bin/linux/amd64/kubectl
    mkdir -p target/kubectl
    curl -fsSLo target/kubectl/kubectl.part "$url"
    echo "$(curl -fsSL "$url.sha256")  target/kubectl/kubectl.part" | sha256sum --check --quiet
    chmod 0755 target/kubectl/kubectl.part && mv target/kubectl/kubectl.part target/kubectl/kubectl
    KUBECTL=target/kubectl/kubectl
  fi
  KUBECTL="$(cd "$(dirname "$KUBECTL")" && pwd)/$(basename "$KUBECTL")"
fi
export KUBECTL
# The image tests (operator/tests/image.rs, cli/tests/release.rs) run the images from their
# layers: the runtime root (CA certificates downloaded with apt-get, cached in target/image-base)
# is prepared here, and the static (musl) debug builds of both binaries the images hold.
bash scripts/images.sh --root >/dev/null
bash scripts/static.sh -p olmctl-cli --bin olmctl -p olmctl-operator --bin olmctl-operator
export STATIC_BIN_DIR="$PWD/target/x86_64-unknown-linux-musl/debug"
cargo test --locked --workspace "$@"
# The operator's own packaging, with the debug binaries the tests just built.
OLMCTL=target/debug/olmctl OPERATOR=target/debug/olmctl-operator bash scripts/packaging.sh
