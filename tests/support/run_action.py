"""Runs a composite action (action.yml) as GitHub's runner runs one, for the tests.

usage: run_action.py ACTION_DIR WITH_JSON

WITH_JSON holds the step's `with:` inputs. Each input is the given value, else its default;
each step's `env:` and `run:` get `${{ inputs.NAME }}` and `${{ github.action_path }}` substituted
(expressions the action uses; any other is an error here); the step runs as
`bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`) with GITHUB_ACTION_PATH set
and the environment given to this script (GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT,
GITHUB_PATH, RUNNER_TEMP). Directories appended to GITHUB_PATH go on PATH for the later steps;
a step's GITHUB_OUTPUT lines become `steps.ID.outputs` (a failing step's too). Stops at the
first failing step with its exit status; prints the action's outputs as JSON on the last line
of stdout (with `failed-step` when one failed).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

action_dir, given = sys.argv[1], json.loads(sys.argv[2])
action = yaml.safe_load(open(os.path.join(action_dir, "action.yml")))
assert action["runs"]["using"] == "composite", action["runs"]
inputs = {k: str(v.get("default", "")) for k, v in action.get("inputs", {}).items()}
for k, v in given.items():
    if k not in inputs:
        sys.exit(f"input {k!r} is not declared by the action (it has {sorted(inputs)})")
    inputs[k] = str(v)
steps_outputs = {}


def expand(s):
    def one(m):
        e = m.group(1).strip()
        if e == "github.action_path":
            return action_dir
        if e.startswith("inputs."):
            return inputs[e[len("inputs."):]]
        s = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", e)
        if s:
            return steps_outputs.get(s.group(1), {}).get(s.group(2), "")
        sys.exit(f"expression not supported here: {e}")
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(s))


path = os.environ["PATH"]
for step in action["runs"]["steps"]:
    assert step.get("shell") == "bash", step
    env = dict(os.environ)
    env["PATH"] = path
    env["GITHUB_ACTION_PATH"] = action_dir
    for k, v in step.get("env", {}).items():
        env[k] = expand(v)
    with tempfile.NamedTemporaryFile("r", delete=False) as out, \
            tempfile.NamedTemporaryFile("r", delete=False) as gpath:
        env["GITHUB_OUTPUT"] = out.name
        env["GITHUB_PATH"] = gpath.name
        rc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step["run"])],
            env=env,
        ).returncode
        lines = open(out.name).read().splitlines()
        added = [l for l in open(gpath.name).read().splitlines() if l]
    if "id" in step:
        steps_outputs[step["id"]] = dict(l.split("=", 1) for l in lines if "=" in l)
    for d in reversed(added):
        path = d + os.pathsep + path
    if rc != 0:
        break
outputs = {k: expand(v["value"]) for k, v in action.get("outputs", {}).items()}
if rc != 0:
    outputs["failed-step"] = step.get("name")
print(json.dumps(outputs))
sys.exit(rc)
