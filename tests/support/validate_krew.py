#!/usr/bin/env python3
"""Validates a krew plugin manifest as krew does (kubernetes-sigs/krew at db921d5).

Usage: validate_krew.py SCHEMA MANIFEST [ARCHIVE KREW_ROOT]

1. The manifest against SCHEMA (krew-plugin.schema.json: the structure and the rules a schema
   can express).
2. The rules it cannot express, each as the upstream function named beside it.
3. With ARCHIVE and KREW_ROOT: the install of the linux/amd64 platform from ARCHIVE as
   `kubectl krew install --manifest M --archive ARCHIVE` does it (internal/installation/
   install.go :: install): the archive's sha256 checked, extracted, spec.files applied, and
   `bin` linked as KREW_ROOT/bin/kubectl-<name>; that link's path is printed last.

Every problem is printed as `MANIFEST: ...`; exit status 1 when there is any. Needs PyYAML and
jsonschema.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import sys
import tarfile

import yaml
from jsonschema import Draft202012Validator

# validate-krew-manifest/main.go :: allPlatforms
ALL_PLATFORMS = [
    ("windows", "386"), ("windows", "amd64"), ("windows", "arm64"),
    ("linux", "386"), ("linux", "amd64"), ("linux", "arm"), ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"), ("darwin", "amd64"), ("darwin", "arm64"),
]
# internal/index/validation/validate.go :: windowsForbidden
WINDOWS_FORBIDDEN = ["CON", "PRN", "AUX", "NUL"] + [f"COM{i}" for i in range(1, 10)] + [
    f"LPT{i}" for i in range(1, 10)]
# k8s.io/apimachinery pkg/util/version/version.go :: versionMatchRE, extraMatchRE
VERSION_MATCH = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$", re.ASCII)
EXTRA_MATCH = re.compile(
    r"^(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*$")


def parse_semver(s):
    """internal/installation/semver :: Parse (a leading v), then apimachinery's
    version.ParseSemantic (parse with semver=true). Returns an error text or None."""
    if not s.startswith("v"):
        return f"version string {s!r} not starting with 'v'"
    m = VERSION_MATCH.match(s)
    if not m:
        return f"could not parse {s!r} as version"
    numbers, extra = m.group(1), m.group(2)
    components = numbers.split(".")
    if len(components) != 3:
        return f"illegal version string {s!r}"
    for c in components:
        if c.startswith("0") and c != "0":
            return f"illegal zero-prefixed version component {c!r} in {s!r}"
    if extra:
        e = EXTRA_MATCH.match(extra)
        if not e:
            return f"could not parse pre-release/metadata ({extra}) in version {s!r}"
        for c in (e.group(1) or "").split("."):
            if c.isdigit() and c.startswith("0") and c != "0":
                return f"illegal zero-prefixed version component {c!r} in {s!r}"
    return None


def selector_matches(sel, os_, arch):
    """apimachinery metav1.LabelSelectorAsSelector(sel).Matches({os, arch}), as
    validate-krew-manifest :: selectorMatchesOSArch calls it."""
    labels = {"os": os_, "arch": arch}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in values:
            return False
        if op == "NotIn" and k in labels and labels[k] in values:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def go_rules(path, plugin):
    errors = []
    spec = plugin.get("spec") or {}
    name = (plugin.get("metadata") or {}).get("name", "")
    # validate-krew-manifest :: validateManifestFile: the file is <name>.yaml.
    base = os.path.basename(path)
    stem, ext = os.path.splitext(base)
    if ext != ".yaml":
        errors.append(f"expected manifest extension \".yaml\" but found {ext!r}")
    # validation :: ValidatePlugin: the plugin is named as its file.
    if name != stem:
        errors.append(f"plugin should be named {stem!r}, not {name!r}")
    # validation :: IsSafePluginName: no Windows device name, whatever its case.
    if any(f.lower() == str(name).lower() for f in WINDOWS_FORBIDDEN):
        errors.append(f"the plugin name {name!r} is not allowed")
    # validation :: ValidatePlugin: semver.Parse(spec.version).
    err = parse_semver(str(spec.get("version", "")))
    if err:
        errors.append(f"failed to parse plugin version: {err}")
    platforms = spec.get("platforms") or []
    # validate-krew-manifest :: findAnyMatchingPlatform, for each platform.
    for i, p in enumerate(platforms):
        sel = p.get("selector") or {}
        if not any(selector_matches(sel, o, a) for o, a in ALL_PLATFORMS):
            errors.append(f"spec.platform[{i}]'s selector doesn't match any supported platforms")
    # validate-krew-manifest :: isOverlappingPlatformSelectors.
    for o, a in ALL_PLATFORMS:
        hits = [i for i, p in enumerate(platforms) if selector_matches(p.get("selector") or {}, o, a)]
        if len(hits) > 1:
            errors.append(
                "overlapping platform selectors found: multiple spec.platforms "
                f"(at indexes {hits}) have overlapping selectors that select {o}/{a}")
    return errors


def install(plugin, archive, root):
    """internal/installation/install.go :: install for linux/amd64, from a local archive."""
    spec = plugin["spec"]
    name = plugin["metadata"]["name"]
    matching = [p for p in spec["platforms"] if selector_matches(p["selector"], "linux", "amd64")]
    if not matching:
        return None, ["no platform for linux/amd64"]
    p = matching[0]
    # internal/download :: NewSha256Verifier.
    with open(archive, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != p["sha256"]:
        return None, [f"checksum does not match, want: {p['sha256']}, got {got}"]
    staging = os.path.join(root, "downloads")
    os.makedirs(staging)
    with tarfile.open(archive, "r:gz") as t:
        t.extractall(staging, filter="data")
    install_dir = os.path.join(root, "store", name, spec["version"])
    os.makedirs(install_dir)
    # install.go :: applyDefaults; move.go :: findMoveTargets (getDirectMove, else a glob).
    for fo in p.get("files") if p.get("files") is not None else [{"from": "*", "to": "."}]:
        src = os.path.normpath(os.path.join(staging, fo["from"]))
        if os.path.exists(src):
            to = os.path.basename(src) if os.path.normpath(fo["to"]) == "." else fo["to"]
            moves = [(src, os.path.join(install_dir, to))]
        else:
            found = sorted(glob.glob(os.path.join(staging, fo["from"])))
            if not found:
                return None, [f"no files in the plugin archive matched the glob pattern={fo['from']}"]
            moves = [(f, os.path.join(install_dir, fo["to"], os.path.basename(f))) for f in found]
        for a, b in moves:
            if not os.path.abspath(b).startswith(os.path.abspath(install_dir) + os.sep):
                return None, [f"can't move, move target {b} is out of bounds"]
            os.makedirs(os.path.dirname(b), exist_ok=True)
            shutil.move(a, b)
    # install.go :: createOrUpdateLink; pluginNameToBin.
    binary = os.path.join(install_dir, p["bin"])
    if not os.path.exists(binary):
        return None, [f"can't create symbolic link, source binary ({binary!r}) cannot be found in extracted archive"]
    bindir = os.path.join(root, "bin")
    os.makedirs(bindir)
    link = os.path.join(bindir, "kubectl-" + name.replace("-", "_"))
    os.symlink(binary, link)
    return link, []


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    schema_path, path = sys.argv[1], sys.argv[2]
    with open(schema_path) as f:
        schema = json.load(f)
    with open(path) as f:
        plugin = yaml.safe_load(f)
    errors = [
        f"{'.'.join(str(x) for x in e.absolute_path) or '(top)'}: {e.message}"
        for e in sorted(Draft202012Validator(schema).iter_errors(plugin), key=str)
    ]
    if not errors:
        errors = go_rules(path, plugin)
    link = None
    if not errors and len(sys.argv) == 5:
        link, errors = install(plugin, sys.argv[3], sys.argv[4])
    for e in errors:
        print(f"{path}: {e}")
    if errors:
        sys.exit(1)
    print(f"{path}: valid")
    if link:
        print(link)


main()
