#!/usr/bin/env python3
"""catalogd's catalog.jsonl of an FBC directory, computed apart from olmctl for its tests.

Reads the catalog as operator-registry's declcfg.WalkMetasFS does (files in fs.WalkDir's lexical
order, a file whose first non-blank character is '{' as a JSON stream, else YAML documents) and
writes each blob as declcfg.Meta.UnmarshalJSON re-encodes it (Go encoding/json of a
map[string]interface{}: keys sorted, HTML escaping off, U+2028/U+2029 escaped, one a line).

Numbers: Go decodes every number into a float64 and writes it with strconv's shortest form
('f' for 1e-6 <= |x| < 1e21). Python writes ints as digits and floats with repr, which agree
with Go for integers below 2**53 (whole floats are written as integers, as Go writes them) and
for other floats with 1e-4 <= |x| < 1e16; any other number makes this script fail, so an
agreement is never assumed where it does not hold. YAML is read as go-yaml v2 reads it into
interface{} (YAML 1.1, timestamps kept as strings).

The meta keys (schema, package, name) are found with str.casefold (Unicode full case folding,
as golang.org/x/text/cases.Fold).

Output: one JSON array a line, [blob line, schema, package, name].
"""
import json
import os
import sys

import yaml



class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML 1.1 as go-yaml v2 reads it into interface{}: timestamps stay strings."""


Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in Loader.yaml_implicit_resolvers.items()
}


def check_numbers(v, where):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return
    if isinstance(v, int):
        if abs(v) >= 2**53:
            sys.exit(f"{where}: integer {v} would be rounded by Go's float64")
        return
    if isinstance(v, float):
        if v != 0 and not (1e-4 <= abs(v) < 1e16):
            sys.exit(f"{where}: float {v!r}: Python and Go may format it differently")
        return
    if isinstance(v, list):
        for x in v:
            check_numbers(x, where)
        return
    if isinstance(v, dict):
        for k, x in v.items():
            if not isinstance(k, str):
                sys.exit(f"{where}: non-string key {k!r}")
            check_numbers(x, where)
        return
    sys.exit(f"{where}: a YAML value JSON has no form for: {type(v).__name__}")


def go_numbers(v):
    """A whole float becomes an int: Go writes a whole float64 below 1e21 as its digits."""
    if isinstance(v, float) and v == int(v) and abs(v) < 2**53:
        return int(v)
    if isinstance(v, list):
        return [go_numbers(x) for x in v]
    if isinstance(v, dict):
        return {k: go_numbers(x) for k, x in v.items()}
    return v


def files(root):
    out = []
    for d, dirs, names in os.walk(root):
        for n in names:
            if n == ".indexignore":
                sys.exit(f"{d}: .indexignore is not handled by this script")
            out.append(os.path.join(d, n))
    return sorted(out, key=lambda p: os.path.relpath(p, root).split(os.sep))


def blobs(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.lstrip(" \t\r\n\ufeff").startswith("{"):
        dec = json.JSONDecoder()
        i = 0
        while True:
            while i < len(text) and text[i] in " \t\r\n":
                i += 1
            if i >= len(text):
                return
            v, i = dec.raw_decode(text, i)
            yield v
    else:
        for v in yaml.load_all(text, Loader=Loader):
            if v is not None:
                yield v


def key(blob, want):
    for k, v in blob.items():
        if k.casefold() == want:
            return v
    return ""


def main():
    root = sys.argv[1]
    for p in files(root):
        for b in blobs(p):
            if not isinstance(b, dict):
                sys.exit(f"{p}: a blob that is not an object")
            b = go_numbers(b)
            check_numbers(b, p)
            line = json.dumps(b, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            line = line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
            print(json.dumps([line, key(b, "schema"), key(b, "package"), key(b, "name")]))


if __name__ == "__main__":
    main()
