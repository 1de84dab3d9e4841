#!/usr/bin/env python3
"""Validates a YAML stream of Kubernetes objects against OLM's CRD schemas.

Usage: validate_olm.py CRD_DIR_OR_FILE... FILE. Each object whose kind and version a CRD defines is
checked against that version's openAPIV3Schema; an OLM or olmctl.dev object without a CRD is an
error; other kinds (Namespace) are skipped. Prints one line
per object and exits 1 on the first invalid one. Needs PyYAML and jsonschema.
"""
import glob
import os
import sys

import yaml
from jsonschema import Draft4Validator

crds, path = sys.argv[1:-1], sys.argv[-1]
files = []
for c in crds:
    files += sorted(glob.glob(os.path.join(c, "*.yaml"))) if os.path.isdir(c) else [c]
schemas = {}
for f in files:
    with open(f) as fh:
        crd = yaml.safe_load(fh)
    group = crd["spec"]["group"]
    kind = crd["spec"]["names"]["kind"]
    for v in crd["spec"]["versions"]:
        schemas[(f"{group}/{v['name']}", kind)] = v["schema"]["openAPIV3Schema"]

status = 0
checked = 0
with open(path) as fh:
    for doc in yaml.safe_load_all(fh):
        if not doc:
            continue
        key = (doc.get("apiVersion"), doc.get("kind"))
        schema = schemas.get(key)
        if schema is None:
            if str(key[0]).split("/")[0] in ("operators.coreos.com", "olmctl.dev"):
                print(f"no schema for {key}")
                sys.exit(1)
            print(f"skip {key[1]} {doc['metadata']['name']}")
            continue
        errors = sorted(Draft4Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
        for e in errors:
            print(f"INVALID {key[1]} {doc['metadata']['name']}: {'/'.join(map(str, e.path))}: {e.message}")
            status = 1
        if not errors:
            checked += 1
            print(f"valid {key[1]} {doc['metadata']['name']}")
print(f"{checked} objects valid")
sys.exit(status)
