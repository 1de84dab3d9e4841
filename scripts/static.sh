#!/usr/bin/env bash
# `cargo build --locked --target x86_64-unknown-linux-musl ARGS...`: static Linux binaries (no
# ELF interpreter, no shared library). Adds the target's standard library with rustup and a C
# compiler for musl (ring's C and assembly: Debian's musl-tools) when missing.
#   bash scripts/static.sh --release --workspace     # scripts/release.sh
#   bash scripts/static.sh -p olmctl-cli --bin olmctl -p olmctl-operator --bin olmctl-operator
#                                                    # scripts/test.sh (debug, for the image tests)
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=x86_64-unknown-linux-musl
if ! rustup target list --installed | grep -qx "$TARGET"; then
  rustup target add "$TARGET"
fi
if ! command -v musl-gcc >/dev/null; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends musl-tools
fi
CC_x86_64_unknown_linux_musl=musl-gcc exec cargo build --locked --target "$TARGET" "$@"
