#!/usr/bin/env bash
# Regenerates the operator's packaging from operator/: bundle/ (the current release), the older
# releases under operator/history/ (their CRDs from `olmctl-operator crd --release`), and
# catalog/ rendered from operator/catalog-template.yaml. Same input, same bytes.
# `scripts/bundle.sh --check` regenerates into a temporary copy and fails when anything differs.
set -euo pipefail
cd "$(dirname "$0")/.."
OLMCTL=${OLMCTL:-target/x86_64-unknown-linux-musl/release/olmctl}
OPERATOR=${OPERATOR:-target/x86_64-unknown-linux-musl/release/olmctl-operator}
check=false
if [ "${1:-}" = "--check" ]; then check=true; fi
out=.
if $check; then
  out=$(mktemp -d)
  mkdir -p "$out/operator"
  cp operator/*.yaml "$out/operator/"
fi
work=$(mktemp -d)
trap 'rm -rf "$work" ${out:+$( $check && echo "$out")}' EXIT

# release, previous release
generate() {
  local release=$1 previous=$2 dir=$3
  local m="$work/$release"
  mkdir -p "$m/samples"
  "$OPERATOR" crd --release "$release" > "$m/crd.yaml"
  # The image at this release; the OLM v1 parts (the ClusterExtension and ClusterCatalog
  # rules, catalogd's CAs), marked "olmv1: begin/end", came after 0.2.0.
  local image="s|ghcr.io/olmctl/olmctl-operator:[0-9.]*|ghcr.io/olmctl/olmctl-operator:$release|"
  local edits=(-e "$image")
  if [ "$release" != 0.3.0 ]; then
    edits+=(-e '/# olmv1: begin/,/# olmv1: end/d')
  fi
  sed "${edits[@]}" operator/config/rbac.yaml > "$m/rbac.yaml"
  sed "${edits[@]}" operator/config/deployment.yaml > "$m/deployment.yaml"
  sed "$image" operator/csv-base.yaml > "$work/csv-base-$release.yaml"
  cp operator/config/samples/upgradepolicy-v1alpha1.yaml "$m/samples/"
  if [ "$release" != 0.1.0 ]; then
    # v1 and its conversion webhook exist from 0.2.0 on.
    cp operator/config/service.yaml "$m/"
    cp operator/config/samples/upgradepolicy.yaml "$m/samples/"
  fi
  local replaces=()
  if [ -n "$previous" ]; then replaces=(--replaces "olmctl-operator.v$previous"); fi
  rm -rf "$dir"
  "$OLMCTL" bundle generate --manifests "$m"/*.yaml "$m/samples" \
    --csv-base "$work/csv-base-$release.yaml" --package olmctl-operator --version "$release" \
    --channels stable-v0 --default-channel stable-v0 "${replaces[@]}" -O "$dir" \
    --namespaced-rbac olmctl-operator-leader-election \
    >"$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
}

generate 0.1.0 "" "$out/operator/history/v0.1.0"
generate 0.2.0 0.1.0 "$out/operator/history/v0.2.0"
generate 0.3.0 0.2.0 "$out/bundle"
rm -rf "$out/catalog/olmctl-operator"
mkdir -p "$out/catalog/olmctl-operator"
"$OLMCTL" catalog template "$out/operator/catalog-template.yaml" \
  --bundles "$out/operator/bundle-images.yaml" > "$out/catalog/olmctl-operator/catalog.yaml"

if $check; then
  status=0
  for d in bundle operator/history catalog; do
    if ! diff -ru "$d" "$out/$d"; then status=1; fi
  done
  if [ "$status" != 0 ]; then
    echo "bundle/, operator/history/ or catalog/ is stale: run scripts/bundle.sh" >&2
    exit 1
  fi
  echo "bundle/, operator/history/ and catalog/ are current"
fi
