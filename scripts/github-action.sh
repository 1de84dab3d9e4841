#!/usr/bin/env bash
# The work of the GitHub Action (action.yml), runnable anywhere with the variables GitHub sets:
# GITHUB_WORKSPACE (the checkout; default: the current directory), GITHUB_STEP_SUMMARY and
# GITHUB_OUTPUT (files appended to; optional), RUNNER_TEMP. The action's inputs arrive as:
#   OLMCTL_CATALOG     the catalog directory, relative to the workspace (default: catalog)
#   OLMCTL_CHECKS      checks, separated by white space or commas: validate, lint,
#                      check-upgrades, bundle-validate (default: validate lint check-upgrades)
#   OLMCTL_BASE_REF    a git ref holding the base catalog (e.g. the pull request's base): with
#                      it, check-upgrades runs and `catalog diff` goes to the job summary
#   OLMCTL_BUNDLES     bundle directories for bundle-validate, relative to the workspace,
#                      separated by white space (spaces, tabs, line breaks: one a line in a YAML
#                      block is fine); each is a name as written (`*` is no pattern; a name
#                      holding white space cannot be given)
#   OLMCTL_FAIL_LEVEL  error (default), warning or none: the findings that fail the step
#   OLMCTL_SARIF       the SARIF file written, for github/codeql-action/upload-sarif
#                      (default: olmctl.sarif, relative to the workspace)
#   OLMCTL             the olmctl to run (default: olmctl on PATH)
# Each check prints its findings as workflow commands (annotations) and adds them to one SARIF
# run; the step summary gets each check's summary line and the diff. Exit 1 when findings at the
# fail level exist, 2 when a check could not run (bad input, unreadable catalog).
# A path that starts with `-` is given to olmctl as `./-...` (a directory, not an option); every
# value from the inputs that reaches the log or the summary goes through `shown`.
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

# `shown data|code VALUE`: VALUE as the log or the job summary shows it. Each control and
# bidirectional character is written as olmctl's text::escape (src/text.rs) writes it (`\n`,
# `\r`, `\t`, else `\u{1b}`), so that a value cannot end the line (and start a workflow command
# of its own), move the cursor, retitle the terminal or reorder what a reader sees; then, for
# `data` (a workflow command's message), `%` as @actions/core's escapeData writes it (the rest
# of escapeData, CR and LF, is gone by then); for `code`, a Markdown code span one backtick
# longer than the value's longest run of them (src/markdown.rs :: code).
shown() {
  python3 - "$1" "$2" <<'PY'
import re, sys
how, value = sys.argv[1], sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
short = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
def esc(c):
    o = ord(c)
    if c in short:
        return short[c]
    if (o < 0x20 or 0x7F <= o <= 0x9F or o in (0x61C, 0x200E, 0x200F, 0x2028, 0x2029)
            or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069):
        return "\\u{%x}" % o
    return c
v = "".join(map(esc, value))
if how == "data":
    v = v.replace("%", "%25")
else:
    fence = "`" * (max([len(r) for r in re.findall("`+", v)], default=0) + 1)
    pad = " " if v == "" or v[0] in "` " or v[-1] in "` " else ""
    v = fence + pad + v + pad + fence
sys.stdout.buffer.write(v.encode("utf-8"))
PY
}

case "$fail_level" in
  error|warning|none) ;;
  *)
    echo "::error title=olmctl::fail-level $(shown data "$fail_level"): give error, warning or none"
    exit 2 ;;
esac
case "$sarif" in
  *$'\n'*|*$'\r'*)
    # A line break would start a line of GITHUB_OUTPUT of its own (another output).
    echo "::error title=olmctl::sarif-file $(shown data "$sarif"): give a path without line breaks"
    exit 2 ;;
esac
tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/olmctl.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# The base catalog: the catalog directory as the base ref has it (empty when it has none).
# The ref is resolved once: git reads the commit's name from then on, never the ref as an option.
base=""
if [ -n "$base_ref" ]; then
  if ! commit=$(git rev-parse --verify --quiet --end-of-options "$base_ref^{commit}"); then
    echo "::error title=olmctl::base-ref $(shown data "$base_ref") is not a commit of" \
      "$(shown data "$PWD") (fetch it: actions/checkout with fetch-depth: 0)"
    exit 2
  fi
  base="$tmp/base/$catalog"
  mkdir -p "$base"
  if git cat-file -e "$commit:$catalog" 2>/dev/null; then
    git --literal-pathspecs archive "$commit" -- "$catalog" | tar -x -C "$tmp/base" || exit 2
  fi
fi

status=0
n=0
{
  echo "## olmctl"
  echo
} >> "$summary"
# Words split at white space (and commas for the checks) by `read`, which expands no pattern;
# -d '' reads every line, not the first.
read -r -d '' -a check_list <<< "${checks//,/ }"
read -r -d '' -a bundle_list <<< "${OLMCTL_BUNDLES:-}"
catalog_arg=$catalog
case "$catalog" in -*) catalog_arg=./$catalog ;; esac
for check in "${check_list[@]}"; do
  case "$check" in
    validate) args=(catalog validate "$catalog_arg") ;;
    lint) args=(catalog lint "$catalog_arg") ;;
    check-upgrades)
      if [ -z "$base" ]; then
        echo "::notice title=olmctl::check-upgrades skipped: no base-ref"
        continue
      fi
      args=(catalog check-upgrades "$catalog_arg" --base "$base") ;;
    bundle-validate)
      if [ "${#bundle_list[@]}" = 0 ]; then
        echo "::error title=olmctl::bundle-validate needs the bundles input"
        status=2
        continue
      fi
      args=(bundle validate)
      for d in "${bundle_list[@]}"; do
        case "$d" in -*) d=./$d ;; esac
        args+=("$d")
      done ;;
    *)
      echo "::error title=olmctl::unknown check $(shown data "$check") (validate, lint," \
        "check-upgrades, bundle-validate)"
      status=2
      continue ;;
  esac
  # As people read it: the base catalog named by its ref, not by the temporary copy.
  command="olmctl ${args[*]}"
  if [ -n "$base" ]; then command=${command//"$base"/"$base_ref:$catalog"}; fi
  echo "::group::$(shown data "$command")"
  "$olmctl" "${args[@]}" -o github | tee "$tmp/$n.log"
  rc=${PIPESTATUS[0]}
  echo "::endgroup::"
  if [ "$rc" -ge 2 ]; then
    status=2
    echo "- $(shown code "$command"): could not run (exit $rc)" >> "$summary"
    continue
  fi
  "$olmctl" "${args[@]}" -o sarif > "$tmp/$n.sarif"
  echo "- $(shown code "$command"): $(tail -n 1 "$tmp/$n.log")" >> "$summary"
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
    echo "### Catalog changes against $(shown code "$base_ref")"
    echo
  } >> "$summary"
  "$olmctl" catalog diff "$base" "$catalog_arg" -o markdown >> "$summary"
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
