#!/usr/bin/env bash
# The entry of the hooks in .pre-commit-hooks.yaml (pre-commit's `language: script`):
#   pre-commit-hook.sh catalog validate catalog/    # olmctl with these arguments
#   pre-commit-hook.sh --bundles [OPTION...] FILE...
#       `olmctl bundle validate [OPTION...] -- DIR...` for the bundle directories of the files
#       (a file in DIR/manifests/ or DIR/metadata/, where DIR holds a CSV or
#       metadata/annotations.yaml); the other arguments are bundle validate's options.
# olmctl is $OLMCTL, else olmctl on PATH (the release binary, the container image's, cargo
# install), else built once from this repository with cargo (pre-commit keeps its clone): the
# hooks run with or without olmctl installed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${OLMCTL:-}" ]; then
  bin=$OLMCTL
elif command -v olmctl >/dev/null; then
  bin=olmctl
elif command -v cargo >/dev/null; then
  bin="$repo/target/release/olmctl"
  if [ ! -x "$bin" ]; then
    echo "olmctl hook: olmctl is not on PATH; building it from $repo (once)" >&2
  fi
  cargo build --quiet --locked --release -p olmctl-cli --manifest-path "$repo/Cargo.toml" >&2
else
  echo "olmctl hook: no olmctl on PATH and no cargo to build it; install olmctl (README:" \
    "Install) or Rust" >&2
  exit 2
fi
if [ "${1:-}" != --bundles ]; then
  exec "$bin" "$@"
fi
shift
# The arguments are the hook's `args` (bundle validate's options), then pre-commit's file names:
# an argument in a manifests/ or metadata/ directory is a file name (whatever it starts with),
# any other an option. The directories go after `--`, so that a directory named `--help` or
# `--select=GP003` is a directory to olmctl; glob characters in a name are that name (the CSV
# is looked for with a quoted prefix, not a pattern built from the name).
shopt -s nullglob
options=()
dirs=()
declare -A seen=()
for a in "$@"; do
  d=$(dirname -- "$a")
  case "$(basename -- "$d")" in
    manifests|metadata)
      b=$(dirname -- "$d")
      if [ -f "$a" ] && [ -z "${seen[$b]:-}" ]; then
        csvs=("$b"/manifests/*.clusterserviceversion.*)
        if [ "${#csvs[@]}" != 0 ] || [ -f "$b/metadata/annotations.yaml" ]; then
          seen[$b]=1
          dirs+=("$b")
        fi
      fi
      continue
      ;;
  esac
  options+=("$a")
done
if [ "${#dirs[@]}" = 0 ]; then
  exit 0
fi
exec "$bin" bundle validate "${options[@]}" -- "${dirs[@]}"
