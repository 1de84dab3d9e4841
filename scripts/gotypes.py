#!/usr/bin/env python3
"""Writes src/olmv1/gotypes.json: the Go types operator-controller decodes a bundle's objects
into and serialises again, read from their Go sources: for each struct its JSON fields in
declaration order with their Go types and `omitempty` / `omitzero` / `,inline` tags, and each
named non-struct type's underlying type.

    scripts/gotypes.py MIRRORS > src/olmv1/gotypes.json

MIRRORS holds git mirrors of kubernetes/api, kubernetes/apimachinery and
kubernetes/apiextensions-apiserver (`MIRRORS/kubernetes+api/repo`, ...); the tags read are
those operator-controller df2c201d's go.mod names. Types with their own JSON methods
(metav1.Time, resource.Quantity, intstr.IntOrString, ...) are kept by name: the renderer's
round trip (src/olmv1/gotype.rs) implements each.
"""

import json
import re
import subprocess
import sys

# (package key, mirror, tag, directory, files)
SOURCES = [
    ("core", "kubernetes+api", "v0.36.3", "core/v1", ["types.go"]),
    ("apps", "kubernetes+api", "v0.36.3", "apps/v1", ["types.go"]),
    ("rbac", "kubernetes+api", "v0.36.3", "rbac/v1", ["types.go"]),
    ("admission", "kubernetes+api", "v0.36.3", "admissionregistration/v1", ["types.go"]),
    ("meta", "kubernetes+apimachinery", "v0.36.3", "pkg/apis/meta/v1", ["types.go"]),
    (
        "apiext",
        "kubernetes+apiextensions-apiserver",
        "v0.36.2",
        "pkg/apis/apiextensions/v1",
        ["types.go", "types_jsonschema.go"],
    ),
]
IMPORTS = {
    "k8s.io/api/core/v1": "core",
    "k8s.io/api/apps/v1": "apps",
    "k8s.io/apimachinery/pkg/apis/meta/v1": "meta",
    "k8s.io/apimachinery/pkg/api/resource": "resource",
    "k8s.io/apimachinery/pkg/util/intstr": "intstr",
    "k8s.io/apimachinery/pkg/types": "types",
    "k8s.io/apimachinery/pkg/runtime": "runtime",
}
# The roots: every type reachable from them is written.
ROOTS = [
    "apps.Deployment",
    "core.Service",
    "core.ServiceAccount",
    "rbac.Role",
    "rbac.ClusterRole",
    "rbac.RoleBinding",
    "rbac.ClusterRoleBinding",
    "admission.ValidatingWebhookConfiguration",
    "admission.MutatingWebhookConfiguration",
    "apiext.CustomResourceDefinition",
]
BUILTIN = {"string", "bool", "int", "int32", "int64", "float64", "byte", "uint8", "interface{}", "any"}
# Types whose JSON methods the round trip implements itself.
SPECIAL = {
    "meta.Time",
    "meta.MicroTime",
    "meta.Duration",
    "meta.FieldsV1",
    "resource.Quantity",
    "intstr.IntOrString",
    "runtime.RawExtension",
    "apiext.JSON",
    "apiext.JSONSchemaPropsOrArray",
    "apiext.JSONSchemaPropsOrBool",
    "apiext.JSONSchemaPropsOrStringArray",
    "types.UID",
}


def source(mirror, tag, path):
    repo = f"{sys.argv[1]}/{mirror}/repo"
    return subprocess.run(
        ["git", "-C", repo, "show", f"{tag}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def imports(text):
    out = {}
    block = re.search(r"^import \((.*?)^\)", text, re.S | re.M)
    lines = block.group(1).splitlines() if block else re.findall(r"^import (.*)$", text, re.M)
    for line in lines:
        m = re.match(r'\s*(\w+)?\s*"([^"]+)"', line)
        if m and m.group(2) in IMPORTS:
            alias = m.group(1) or m.group(2).rsplit("/", 1)[1]
            out[alias] = IMPORTS[m.group(2)]
    return out


def qualify(expr, pkg, aliases):
    """A Go type expression with every named type written as `pkg.Name`."""
    if expr.startswith("*"):
        return "*" + qualify(expr[1:], pkg, aliases)
    if expr.startswith("[]"):
        return "[]" + qualify(expr[2:], pkg, aliases)
    m = re.match(r"map\[([^\]]+)\](.*)", expr)
    if m:
        return f"map[{qualify(m.group(1), pkg, aliases)}]{qualify(m.group(2), pkg, aliases)}"
    if expr in BUILTIN:
        return {"byte": "uint8", "any": "interface{}"}.get(expr, expr)
    if "." in expr:
        alias, name = expr.split(".", 1)
        return f"{aliases[alias]}.{name}"
    return f"{pkg}.{expr}"


def parse(pkg, text, types):
    aliases = imports(text)
    # Comments out (struct tags hold no "//").
    text = re.sub(r"/\*.*?\*/", "", re.sub(r"//.*", "", text), flags=re.S)
    for m in re.finditer(r"^type (\w+) struct \{(.*?)^\}", text, re.S | re.M):
        fields = []
        for line in m.group(2).splitlines():
            line = line.strip()
            if not line:
                continue
            f = re.match(r"^(\w+)\s+(\S+)\s+`([^`]*)`$", line)
            if f:
                name, ty, tag = f.groups()
            else:
                f = re.match(r"^(\*?[\w.]+)\s+`([^`]*)`$", line)
                if not f:
                    f = re.match(r"^(\w+)\s+(\S+)$", line)
                    if f:
                        # An untagged field: encoding/json names it as in Go.
                        fields.append([f.group(1), qualify(f.group(2), pkg, aliases), ""])
                        continue
                    raise SystemExit(f"{pkg}.{m.group(1)}: cannot read field line {line!r}")
                ty, tag = f.groups()
                name = None
            j = re.search(r'json:"([^"]*)"', tag)
            opts = (j.group(1) if j else "").split(",")
            jname, flags = opts[0], ""
            if jname == "-":
                continue
            if "omitempty" in opts[1:]:
                flags += "e"
            if "omitzero" in opts[1:]:
                flags += "z"
            if "inline" in opts[1:] or (name is None and not jname):
                flags += "i"
            fields.append([jname or name or "", qualify(ty, pkg, aliases), flags])
        types[f"{pkg}.{m.group(1)}"] = {"struct": fields}
    for m in re.finditer(r"^type (\w+) struct ?\{\}$", text, re.M):
        types[f"{pkg}.{m.group(1)}"] = {"struct": []}
    for m in re.finditer(r"^type (\w+) (?:= )?([^\s{(][^\n{]*)$", text, re.M):
        name, under = m.group(1), m.group(2).strip()
        if under.startswith("func") or under.startswith("interface"):
            continue
        types.setdefault(f"{pkg}.{name}", {"alias": qualify(under, pkg, aliases)})


def names_in(expr):
    return re.findall(r"[a-z]+\.\w+", expr)


def main():
    types = {}
    for pkg, mirror, tag, directory, files in SOURCES:
        for f in files:
            parse(pkg, source(mirror, tag, f"{directory}/{f}"), types)
    out, todo = {}, list(ROOTS)
    while todo:
        t = todo.pop()
        if t in out or t in SPECIAL:
            continue
        if t not in types:
            raise SystemExit(f"type {t} is not read from the sources")
        out[t] = types[t]
        exprs = [f[1] for f in types[t].get("struct", [])] + [types[t].get("alias", "")]
        for e in exprs:
            todo.extend(n for n in names_in(e) if n not in out)
    header = {
        "source": {
            f"{m}:{d}": tag for _, m, tag, d, _ in SOURCES
        },
        "special": sorted(SPECIAL),
    }
    json.dump({"about": header, "types": dict(sorted(out.items()))}, sys.stdout, indent=0, sort_keys=False)
    sys.stdout.write("\n")


main()
