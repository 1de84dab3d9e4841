#!/usr/bin/env bash
# The operator image, daemonless, into the OCI layout target/operator-image: olmctl-operator on a
# runtime root made of Debian packages (the C runtime it links, CA certificates), fetched with
# `apt-get download` (cached in target/operator-base/debs), unpacked with `dpkg-deb -x`, pruned
# and added with `olmctl image build --layer`; the image runs as 65532 (the CSV's pod has
# runAsNonRoot). Same .deb files and binary, same digest; the package versions are printed.
#   bash scripts/operator-image.sh          # the image; OLMCTL and OPERATOR name the binaries
#                                           # (default: the release builds)
#   bash scripts/operator-image.sh --root   # only the root; prints its path (operator/tests/image.rs)
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022
export LC_ALL=C
# What `ldd olmctl-operator` lists (libc, libm, the loader: libc6; libgcc_s: libgcc-s1).
PACKAGES=(libc6 libgcc-s1 ca-certificates)
# The image's user: distroless's nonroot.
USER_ID=65532
base=target/operator-base
mkdir -p "$base/debs"
# One preparation at a time (the tests and the main job may share the cache).
exec 9>"$base/lock"
flock 9

# The .deb of each package: the cached one, else downloaded (the package lists are read with
# `apt-get update` first when apt cannot find a package).
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
APT_OPTS=()
# As root apt drops to the _apt user, who cannot write here.
if [ "$(id -u)" = 0 ]; then APT_OPTS=(-o APT::Sandbox::User=root); fi
missing=()
for p in "${PACKAGES[@]}"; do
  compgen -G "$base/debs/${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" != 0 ]; then
  if ! (cd "$base/debs" && apt-get download -qq "${APT_OPTS[@]}" "${missing[@]}"); then
    $SUDO apt-get update -qq
    (cd "$base/debs" && apt-get download -qq "${APT_OPTS[@]}" "${missing[@]}")
  fi
fi
shopt -s nullglob
debs=()
for p in "${PACKAGES[@]}"; do
  found=("$base/debs/${p}_"*.deb)
  if [ "${#found[@]}" != 1 ]; then
    echo "operator-image: ${#found[@]} cached versions of $p in $base/debs; remove all but one" >&2
    exit 1
  fi
  debs+=("${found[0]}")
done
for d in "${debs[@]}"; do
  echo "operator-image: $(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version)" >&2
done

# The root, rebuilt when the .deb files or this script change.
key=$(sha256sum "${debs[@]}" scripts/operator-image.sh | sha256sum | cut -d' ' -f1)
root="$base/root"
if [ "$(cat "$base/root.key" 2>/dev/null)" != "$key" ]; then
  rm -rf "$root" "$base/root.key" "$root.tmp"
  tmp="$root.tmp"
  mkdir -p "$tmp"
  for d in "${debs[@]}"; do dpkg-deb -x "$d" "$tmp"; done
  # Not needed at run time: documentation, manual pages, lintian overrides, iconv modules, and
  # update-ca-certificates (a shell script, and the image has no shell); its bundle is written
  # here instead, from the certificates in name order.
  rm -rf "$tmp/usr/share/doc" "$tmp/usr/share/man" "$tmp/usr/share/lintian" \
    "$tmp"/usr/lib/*/gconv \
    "$tmp/usr/sbin" "$tmp/etc/ca-certificates"
  mkdir -p "$tmp/etc/ssl/certs"
  find "$tmp/usr/share/ca-certificates" -type f -name '*.crt' | sort | while read -r c; do
    sed -e '$a\' "$c"
  done > "$tmp/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$tmp/usr/share/ca-certificates"
  find "$tmp" -mindepth 1 -depth -type d -empty -delete
  # What a runtime image has beside the libraries: name lookup through /etc/hosts first (the
  # kubelet writes it), users and groups, and a /tmp.
  printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files dns' \
    'networks: files' 'protocols: files' 'services: files' > "$tmp/etc/nsswitch.conf"
  printf '%s\n' 'root:x:0:0:root:/root:/usr/sbin/nologin' \
    "nonroot:x:$USER_ID:$USER_ID:nonroot:/nonexistent:/usr/sbin/nologin" > "$tmp/etc/passwd"
  printf '%s\n' 'root:x:0:' "nonroot:x:$USER_ID:" > "$tmp/etc/group"
  mkdir -p "$tmp/tmp"
  chmod 1777 "$tmp/tmp"
  mv "$tmp" "$root"
  echo "$key" > "$base/root.key"
fi
if [ "${1:-}" = --root ]; then
  echo "$PWD/$root"
  exit 0
fi

OLMCTL=${OLMCTL:-target/release/olmctl}
OPERATOR=${OPERATOR:-target/release/olmctl-operator}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' operator/Cargo.toml | head -n 1)
rm -rf target/operator-image
"$OLMCTL" image build --base-image scratch --layer "$root" \
  --binary "$OPERATOR:/usr/local/bin/olmctl-operator" --user "$USER_ID" \
  --tag "ghcr.io/olmctl/olmctl-operator:$version" --oci-layout target/operator-image
echo "operator-image: $(du -sb target/operator-image/blobs | cut -f1) bytes in target/operator-image" >&2
