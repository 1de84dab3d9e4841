#!/usr/bin/env bash
# The work of the GitHub Action (action.yml), runnable anywhere with the variables GitHub sets:
# GITHUB_WORKSPACE (the checkout; default: the current directory), GITHUB_STEP_SUMMARY and
# GITHUB_OUTPUT (files appended to; optional), RUNNER_TEMP. The action's inputs arrive as:
#   OLMCTL_CATALOG     the catalog directory, relative to the workspace (default: catalog)
#   OLMCTL_CHECKS      checks, space- or comma-separated: validate, lint, check-upgrades,
#                      bundle-validate (default: validate lint check-upgrades)
#   OLMCTL_BASE_REF    a git ref holding the base catalog (e.g. the pull request's base): with
#                      it, check-upgrades runs and `catalog diff` goes to the job summary
#   OLMCTL_BUNDLES     bundle directories for bundle-validate (space-separated)
#   OLMCTL_FAIL_LEVEL  error (default), warning or none: the findings that fail the step
#   OLMCTL_SARIF       the SARIF file written, for github/codeql-action/upload-sarif
#                      (default: olmctl.sarif, relative to the workspace)
#   OLMCTL             the olmctl to run (default: olmctl on PATH)
# Each check prints its findings as workflow commands (annotations) and adds them to one SARIF
# run; the step summary gets each check's summary line and the diff. Exit 1 when findings at the
# fail level exist, 2 when a check could not run (bad input, unreadable catalog).
set -uo pipefail
olmctl=${OLMCTL:-olmctl}
cd "${GITHUB_WORKSPACE:-.}" || exit 2
catalog=${OLMCTL_CATALOG:-catalog}
checks=${OLMCTL_CHECKS:-validate lint check-upgrades}
base_ref=${OLMCTL_BASE_REF:-}
fail_level=${OLMCTL_FAIL_LEVEL:-error}
sarif=${OLMCTL_SARIF:-olmctl.sarif}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
outputs=${GITHUB_OUTPUT:-/dev/null}
case "$fail_level" in
  error|warning|none) ;;
  *) echo "::error title=olmctl::fail-level $fail_level: give error, warning or none"; exit 2 ;;
esac
tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/olmctl.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# The base catalog: the catalog directory as the base ref has it (empty when it has none).
base=""
if [ -n "$base_ref" ]; then
  if ! git rev-parse --verify --quiet "$base_ref^{commit}" >/dev/null; then
    echo "::error title=olmctl::base-ref $base_ref is not a commit of $PWD (fetch it: actions/checkout with fetch-depth: 0)"
    exit 2
  fi
  base="$tmp/base/$catalog"
  mkdir -p "$base"
  if git cat-file -e "$base_ref:$catalog" 2>/dev/null; then
    git archive "$base_ref" -- "$catalog" | tar -x -C "$tmp/base" || exit 2
  fi
fi

status=0
n=0
{
  echo "## olmctl"
  echo
} >> "$summary"
for check in ${checks//,/ }; do
  case "$check" in
    validate) args=(catalog validate "$catalog") ;;
    lint) args=(catalog lint "$catalog") ;;
    check-upgrades)
      if [ -z "$base" ]; then
        echo "::notice title=olmctl::check-upgrades skipped: no base-ref"
        continue
      fi
      args=(catalog check-upgrades "$catalog" --base "$base") ;;
    bundle-validate)
      read -r -a dirs <<< "${OLMCTL_BUNDLES:-}"
      if [ "${#dirs[@]}" = 0 ]; then
        echo "::error title=olmctl::bundle-validate needs the bundles input"
        status=2
        continue
      fi
      args=(bundle validate "${dirs[@]}") ;;
    *)
      echo "::error title=olmctl::unknown check $check (validate, lint, check-upgrades, bundle-validate)"
      status=2
      continue ;;
  esac
  # As people read it: the base catalog named by its ref, not by the temporary copy.
  shown="${args[*]}"
  if [ -n "$base" ]; then shown=${shown//"$base"/"$base_ref:$catalog"}; fi
  echo "::group::olmctl $shown"
  "$olmctl" "${args[@]}" -o github | tee "$tmp/$n.log"
  rc=${PIPESTATUS[0]}
  echo "::endgroup::"
  if [ "$rc" -ge 2 ]; then
    status=2
    echo "- \`olmctl $shown\`: could not run (exit $rc)" >> "$summary"
    continue
  fi
  "$olmctl" "${args[@]}" -o sarif > "$tmp/$n.sarif"
  echo "- \`olmctl $shown\`: $(tail -n 1 "$tmp/$n.log")" >> "$summary"
  n=$((n + 1))
done

# One SARIF run from every check's (code scanning takes one run per tool and category).
counts=$(python3 - "$sarif" "$tmp"/*.sarif <<'PY'
import json, sys
out, files = sys.argv[1], [f for f in sys.argv[2:] if not f.endswith("*.sarif")]
logs = [json.load(open(f)) for f in sorted(files, key=lambda f: int(f.rsplit("/", 1)[1][:-6]))]
runs = [r for log in logs for r in log["runs"]]
rules = {}
for r in runs:
    for rule in r["tool"]["driver"].get("rules", []):
        rules.setdefault(rule["id"], rule)
ids = sorted(rules)
results = []
for r in runs:
    own = r["tool"]["driver"].get("rules", [])
    for res in r.get("results", []):
        res = dict(res)
        res["ruleIndex"] = ids.index(own[res["ruleIndex"]]["id"] if "ruleIndex" in res else res["ruleId"])
        results.append(res)
driver = dict(runs[0]["tool"]["driver"]) if runs else {"name": "olmctl"}
driver["rules"] = [rules[i] for i in ids]
merged = {
    "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
    "version": "2.1.0",
    "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}],
}
with open(out, "w") as f:
    json.dump(merged, f, indent=2)
    f.write("\n")
levels = [r.get("level", "warning") for r in results]
print(levels.count("error"), levels.count("warning"))
PY
) || exit 2
read -r errors warnings <<< "$counts"

if [ -n "$base" ]; then
  {
    echo
    echo "### Catalog changes against \`$base_ref\`"
    echo
  } >> "$summary"
  "$olmctl" catalog diff "$base" "$catalog" -o markdown >> "$summary"
  if [ "$?" -ge 2 ]; then status=2; fi
fi
{
  echo "sarif-file=$sarif"
  echo "errors=$errors"
  echo "warnings=$warnings"
} >> "$outputs"
if [ "$status" = 2 ]; then exit 2; fi
case "$fail_level" in
  error) [ "$errors" = 0 ] || exit 1 ;;
  warning) [ "$((errors + warnings))" = 0 ] || exit 1 ;;
esac
exit 0
