#!/usr/bin/env bash
# The release: olmctl and olmctl-operator as static Linux binaries (x86_64-unknown-linux-musl:
# no ELF interpreter, no shared library, so no glibc version to match), stripped, with
# `--version` naming the commit; one tar.gz each, SHA256SUMS and the krew manifest in target/dist;
# then both images from those binaries (scripts/images.sh). One release build of the workspace,
# which the main job shares. The tarballs are reproducible: same binaries, same bytes.
#   bash scripts/release.sh              # target/dist and target/{olmctl,operator}-image
#   PUSH=ghcr.io/olmctl bash scripts/release.sh   # the images pushed instead
# The build is scripts/static.sh's (it adds the musl target and a C compiler for it when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
TARGET=x86_64-unknown-linux-musl
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "release: the working tree has changes; --version names HEAD's commit all the same" >&2
fi
start=$(date +%s)
bash scripts/static.sh --release --workspace
echo "release: build took $(( $(date +%s) - start )) s" >&2
out=target/$TARGET/release
for bin in olmctl olmctl-operator; do
  if readelf -lW "$out/$bin" | grep -q 'INTERP'; then
    echo "release: $out/$bin names an ELF interpreter: not static" >&2
    exit 1
  fi
done

dist=target/dist
rm -rf "$dist"
mkdir -p "$dist"
# The commit's time for every file in the tarballs: same binaries, same tarball bytes.
mtime=$(git log -1 --format=%ct 2>/dev/null || echo 0)
for bin in olmctl olmctl-operator; do
  crate=cli
  if [ "$bin" = olmctl-operator ]; then crate=operator; fi
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$crate/Cargo.toml" | head -n 1)
  name="$bin-v$version-$TARGET"
  tar --sort=name --mtime="@$mtime" --owner=0 --group=0 --numeric-owner --mode='u=rwx,go=rx' \
    -C "$out" -cf - "$bin" | gzip -9n > "$dist/$name.tar.gz"
  echo "release: $dist/$name.tar.gz ($(stat -c %s "$out/$bin") bytes unpacked, $(stat -c %s "$dist/$name.tar.gz") packed): $("$out/$bin" --version)" >&2
done
(cd "$dist" && sha256sum -- *.tar.gz > SHA256SUMS)
cat "$dist/SHA256SUMS"
# The krew manifest of `kubectl olm` for this archive (deploy/krew/olm.yaml with its uri and
# sha256 written in).
cp deploy/krew/olm.yaml "$dist/krew-olm.yaml"
MANIFEST="$dist/krew-olm.yaml" bash scripts/krew-manifest.sh \
  "$dist/olmctl-v$(sed -n 's/^version = "\(.*\)"$/\1/p' cli/Cargo.toml | head -n 1)-$TARGET.tar.gz" >&2
OLMCTL="$out/olmctl" OLMCTL_BIN="$out/olmctl" OPERATOR_BIN="$out/olmctl-operator" \
  bash scripts/images.sh
