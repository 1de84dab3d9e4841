#!/usr/bin/env bash
# Checks the operator's own packaging, as CI does after the tests (scripts/test.sh): bundle/,
# operator/history/ and catalog/ are current (scripts/bundle.sh --check); every bundle validates
# with every suite, no errors and no warnings; the catalog validates and lints; no user of the
# previous commit's catalog is stranded (check-upgrades); every edge passes `check catalog`.
# OLMCTL and OPERATOR name the binaries (default: the static release builds, scripts/release.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
OLMCTL=${OLMCTL:-target/x86_64-unknown-linux-musl/release/olmctl}
export OLMCTL OPERATOR=${OPERATOR:-target/x86_64-unknown-linux-musl/release/olmctl-operator}
bash scripts/bundle.sh --check
for b in bundle operator/history/*/; do
  out=$("$OLMCTL" bundle validate "$b" --select all)
  echo "$b: $out"
  case "$out" in *"0 errors, 0 warnings"*) ;; *) echo "$b: findings" >&2; exit 1 ;; esac
done
"$OLMCTL" catalog validate catalog/
"$OLMCTL" catalog lint catalog/
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
# The base is the previous commit's catalog once it was rendered from the template (before
# that, catalog/ held a hand-written example that was never published).
if git rev-parse -q --verify HEAD~1 >/dev/null 2>&1 \
  && git cat-file -e HEAD~1:operator/catalog-template.yaml 2>/dev/null; then
  mkdir -p "$base/olmctl-operator"
  git show HEAD~1:catalog/olmctl-operator/catalog.yaml > "$base/olmctl-operator/catalog.yaml"
  "$OLMCTL" catalog check-upgrades catalog/ --base "$base"
else
  echo "check-upgrades: the previous commit has no rendered catalog (or no history here); nothing to compare"
fi
"$OLMCTL" check catalog catalog/ --bundles operator/bundle-names.yaml
