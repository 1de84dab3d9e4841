#!/usr/bin/env bash
# The olmctl and olmctl-operator images, daemonless, into OCI layouts (or pushed): each static
# binary (scripts/release.sh) on one shared runtime root made of CA certificates from Debian's
# ca-certificates package (fetched with `apt-get download`, cached in target/image-base/debs,
# unpacked with `dpkg-deb -x`), users and /tmp, added with `olmctl image build --layer`; both run
# as 65532 (the CSV's pod has runAsNonRoot; distroless's nonroot). The olmctl image works in
# /src (`docker run -v "$PWD:/src" IMAGE catalog validate catalog/`) and has a shell, Debian's
# static busybox (busybox-static) as /bin/sh and its applets, for CI systems that run job
# scripts inside the image (GitLab CI); PATH is /usr/local/bin:/bin. Same .deb files and
# binaries, same digests; the package versions are printed.
#   bash scripts/images.sh [olmctl] [operator]   # the images named (default: both) into
#                                                # $OUT/olmctl-image and $OUT/operator-image
#   bash scripts/images.sh --root                # only the root; prints its path
# Environment: OLMCTL, the olmctl that builds (default: the static release build); OLMCTL_BIN and
# OPERATOR_BIN, the binaries put in (default: the static release builds); OUT (default target);
# PUSH=REGISTRY/NAMESPACE pushes REGISTRY/NAMESPACE/olmctl:VERSION (and olmctl-operator) instead,
# with the credentials of the Docker config file.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022
export LC_ALL=C
# CA certificates: olmctl pulls and pushes images over TLS, the operator talks to the API server.
PACKAGES=(ca-certificates busybox-static)
# The images' user: distroless's nonroot.
USER_ID=65532
SOURCE=https://github.com/olmctl/olmctl
RELEASE=target/x86_64-unknown-linux-musl/release
base=target/image-base
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
    echo "images: ${#found[@]} cached versions of $p in $base/debs; remove all but one" >&2
    exit 1
  fi
  debs+=("${found[0]}")
done
for d in "${debs[@]}"; do
  echo "images: $(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version)" >&2
done
deb() { compgen -G "$base/debs/${1}_*.deb"; }

# The root, rebuilt when the .deb files or this script change.
key=$(sha256sum "${debs[@]}" scripts/images.sh | sha256sum | cut -d' ' -f1)
root="$base/root"
if [ "$(cat "$base/root.key" 2>/dev/null)" != "$key" ]; then
  rm -rf "$root" "$base/root.key" "$root.tmp"
  tmp="$root.tmp"
  mkdir -p "$tmp"
  dpkg-deb -x "$(deb ca-certificates)" "$tmp"
  # Only the certificate bundle is kept: update-ca-certificates (a shell script; the images have
  # no shell) would write it from the certificates in name order, as is done here.
  mkdir -p "$tmp/etc/ssl/certs"
  find "$tmp/usr/share/ca-certificates" -type f -name '*.crt' | sort | while read -r c; do
    sed -e '$a\' "$c"
  done > "$tmp/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$tmp/usr" "$tmp/etc/ca-certificates" "$tmp/etc/ca-certificates.conf"
  find "$tmp" -mindepth 1 -depth -type d -empty -delete
  # What a runtime image has beside the certificates: users and groups, and a /tmp.
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    "nonroot:x:$USER_ID:$USER_ID:nonroot:/home/nonroot:/sbin/nologin" > "$tmp/etc/passwd"
  printf '%s\n' 'root:x:0:' "nonroot:x:$USER_ID:" > "$tmp/etc/group"
  mkdir -p "$tmp/tmp"
  chmod 1777 "$tmp/tmp"
  mv "$tmp" "$root"
  echo "$key" > "$base/root.key"
fi
# olmctl's own layer (the operator's image shares only the root above): the working directory
# /src, where users mount their repository, and busybox with a link per applet in /bin.
if [ "$(cat "$base/olmctl-layer.key" 2>/dev/null)" != "$key" ]; then
  rm -rf "$base/olmctl-layer" "$base/olmctl-layer.key" "$base/busybox"
  dpkg-deb -x "$(deb busybox-static)" "$base/busybox"
  layer="$base/olmctl-layer.tmp"
  rm -rf "$layer"
  mkdir -p "$layer/src" "$layer/bin"
  cp "$base/busybox/bin/busybox" "$layer/bin/busybox"
  for applet in $("$layer/bin/busybox" --list | sort); do
    [ "$applet" = busybox ] || ln -s busybox "$layer/bin/$applet"
  done
  rm -rf "$base/busybox"
  mv "$layer" "$base/olmctl-layer"
  echo "$key" > "$base/olmctl-layer.key"
fi
if [ "${1:-}" = --root ]; then
  echo "$PWD/$root"
  exit 0
fi

OLMCTL=${OLMCTL:-$RELEASE/olmctl}
OLMCTL_BIN=${OLMCTL_BIN:-$RELEASE/olmctl}
OPERATOR_BIN=${OPERATOR_BIN:-$RELEASE/olmctl-operator}
OUT=${OUT:-target}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
images=("$@")
if [ "${#images[@]}" = 0 ]; then images=(olmctl operator); fi
for image in "${images[@]}"; do
  case "$image" in
    olmctl) name=olmctl bin=$OLMCTL_BIN crate=cli
      extra=(--layer "$base/olmctl-layer" --workdir /src --env PATH=/usr/local/bin:/bin)
      description="olmctl: build, validate and push OLM bundles and File-Based Catalogs" ;;
    operator) name=olmctl-operator bin=$OPERATOR_BIN crate=operator extra=()
      description="olmctl-operator: an upgrade gate that approves OLM InstallPlans by policy" ;;
    *) echo "images: unknown image $image (olmctl or operator)" >&2; exit 2 ;;
  esac
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$crate/Cargo.toml" | head -n 1)
  dest=(--oci-layout "$OUT/$image-image")
  repo="ghcr.io/olmctl/$name"
  if [ -n "${PUSH:-}" ]; then dest=(--push); repo="$PUSH/$name"; fi
  rm -rf "$OUT/$image-image"
  "$OLMCTL" image build --base-image scratch --layer "$root" "${extra[@]}" \
    --binary "$bin:/usr/local/bin/$name" --user "$USER_ID" --tag "$repo:$version" "${dest[@]}" \
    --label "org.opencontainers.image.title=$name" \
    --label "org.opencontainers.image.description=$description" \
    --label "org.opencontainers.image.source=$SOURCE" \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.revision=$revision"
  if [ -z "${PUSH:-}" ]; then
    echo "images: $(du -sb "$OUT/$image-image/blobs" | cut -f1) bytes in $OUT/$image-image" >&2
  fi
done
