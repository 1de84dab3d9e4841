#!/usr/bin/env bash
# Writes a release archive's version, uri and sha256 into the krew manifest:
#   scripts/krew-manifest.sh olmctl-v0.2.0-x86_64-unknown-linux-musl.tar.gz
# The archive is named olmctl-<version>-<target>.tar.gz and holds `olmctl` at its top; the uri
# is its place among the GitHub release's assets. MANIFEST names another manifest file
# (default: deploy/krew/olm.yaml).
set -euo pipefail
archive=${1:?usage: krew-manifest.sh ARCHIVE}
manifest=${MANIFEST:-"$(dirname "$0")/../deploy/krew/olm.yaml"}
name=$(basename "$archive")
if [[ ! "$name" =~ ^olmctl-(v[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*)-x86_64-unknown-linux-musl\.tar\.gz$ ]]; then
  echo "error: $name is not named olmctl-v<version>-x86_64-unknown-linux-musl.tar.gz" >&2
  exit 2
fi
version=${BASH_REMATCH[1]}
# Listed whole first: `| grep -q` under pipefail fails when grep exits before tar is done.
listing=$(tar -tzf "$archive")
if ! grep -qxE '(\./)?olmctl' <<<"$listing"; then
  echo "error: $archive has no olmctl at its top (krew links spec.platforms[].bin: olmctl)" >&2
  exit 2
fi
sum=$(sha256sum "$archive" | cut -d' ' -f1)
uri="https://github.com/olmctl/olmctl/releases/download/$version/$name"
sed -i \
  -e "s|^  version: .*|  version: $version|" \
  -e "s|^    uri: .*|    uri: $uri|" \
  -e "s|^    sha256: .*|    sha256: \"$sum\"|" \
  "$manifest"
echo "$manifest: $version, sha256 $sum"
