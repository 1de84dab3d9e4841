#!/usr/bin/env bash
# The GitHub Action's install step (action.yml): nothing when olmctl is on PATH; else the static
# release binary of OLMCTL_VERSION (x86_64 Linux) downloaded from the release, checked against
# the release's SHA256SUMS and unpacked into $RUNNER_TEMP/olmctl/bin, which goes on $GITHUB_PATH;
# or, with OLMCTL_VERSION=source, built from the action's own checkout with cargo.
# OLMCTL_RELEASES names another place holding the releases (default: the GitHub releases;
# <place>/v<version>/<asset>).
set -euo pipefail
if command -v olmctl >/dev/null; then
  echo "olmctl on PATH: $(olmctl --version)"
  exit 0
fi
version=${OLMCTL_VERSION:?OLMCTL_VERSION: a release (e.g. 0.1.0) or source}
action=$(cd "$(dirname "$0")/.." && pwd)
path_file=${GITHUB_PATH:-/dev/null}
if [ "$version" = source ]; then
  cargo build --quiet --locked --release -p olmctl-cli --manifest-path "$action/Cargo.toml"
  echo "$action/target/release" >> "$path_file"
  "$action/target/release/olmctl" --version
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "::error title=olmctl::no release binary for $(uname -s) $(uname -m); set version: source"
  exit 2
fi
version=${version#v}
releases=${OLMCTL_RELEASES:-https://github.com/olmctl/olmctl/releases/download}
asset="olmctl-v$version-x86_64-unknown-linux-musl.tar.gz"
dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/olmctl"
rm -rf "$dir"
mkdir -p "$dir/bin"
curl -fsSL --retry 3 -o "$dir/$asset" "$releases/v$version/$asset"
curl -fsSL --retry 3 -o "$dir/SHA256SUMS" "$releases/v$version/SHA256SUMS"
(cd "$dir" && grep -E "  $asset\$" SHA256SUMS | sha256sum --check --strict -) >&2
tar -xzf "$dir/$asset" -C "$dir/bin" olmctl
echo "$dir/bin" >> "$path_file"
"$dir/bin/olmctl" --version
