#!/usr/bin/env python3
"""YAML files to JSON the way operator-registry reads them, with PyYAML: the oracle of
tests/yaml_corpus.rs, independent of olmctl's loader.

operator-registry reads manifests and catalogs with k8s.io/apimachinery's NewYAMLOrJSONDecoder,
which hands each document to sigs.k8s.io/yaml (v1.6.0), which decodes it with go.yaml.in/yaml/v2
(v2.4.4) into interface{} and converts the result to JSON. go-yaml v2's scanner and parser are a
port of libyaml, so the files are read with PyYAML's CSafeLoader (libyaml's scanner and parser,
PyYAML's YAML 1.1 resolver); where PyYAML's resolution differs from go-yaml v2's, go-yaml is
followed:

- timestamps (`2025-07-15T09:40:30`) stay strings: go-yaml v2 resolves them, but decoding into
  interface{} keeps the text "for backward compatibility" (decode.go, `(*decoder).scalar`);
- `=` is a string: PyYAML resolves it to YAML 1.1's `!!value` (and has no constructor for it);
  go-yaml's resolve table has no such entry (resolve.go);
- `y`, `Y`, `n`, `N` are booleans: go-yaml v2's resolve table has them, PyYAML's does not.

Other known differences, absent from the fixtures (the test then reports a disagreement):
sexagesimal numbers (`1:30` is 90 in PyYAML, a string in go-yaml), `08` (a string in PyYAML,
8.0 in go-yaml, which falls back to its float pattern), `1e3` and `0o17` (strings in PyYAML,
numbers in go-yaml), `!!binary` (bytes in PyYAML, the decoded text in go-yaml).

Map keys become JSON keys as sigs.k8s.io/yaml's `convertToJSONableObject` makes them: strings
as they are, integers in decimal, booleans as `true`/`false`; other keys are an error here.
Documents that are empty (null) are left out, as olmctl leaves them out.

Input: file paths on stdin, one a line. Output: one line per path, in input order:
`docs [...]` (the documents as compact JSON with sorted keys, mostly the text Go's encoding/json
writes, so that most files compare as text) or `error MESSAGE`. Files are read by as many
processes as there are cores.
"""

import json
import multiprocessing
import os
import re
import sys

import yaml

TIMESTAMP = "tag:yaml.org,2002:timestamp"
VALUE = "tag:yaml.org,2002:value"
BOOL = "tag:yaml.org,2002:bool"


class GoYamlV2Loader(yaml.CSafeLoader):
    """CSafeLoader with go-yaml v2's resolution where the two differ (see the module doc)."""

    def construct_mapping(self, node, deep=False):
        # Keys become JSON keys as they are built: in a Python dict `1` and `true` would be
        # one key, in go-yaml's map[interface{}]interface{} they are two.
        self.flatten_mapping(node)
        return {
            key(self.construct_object(k, deep=deep)): self.construct_object(v, deep=deep)
            for k, v in node.value
        }


GoYamlV2Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (TIMESTAMP, VALUE)]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}
GoYamlV2Loader.add_implicit_resolver(
    BOOL, re.compile(r"^(?:y|Y|n|N)$"), list("yYnN")
)
GoYamlV2Loader.bool_values = dict(yaml.CSafeLoader.bool_values, y=True, n=False)


def key(k):
    """A map key as sigs.k8s.io/yaml makes it a JSON key."""
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, int):
        return str(k)
    raise ValueError(f"unsupported map key {k!r}")


class Fallback(Exception):
    """A document with anchors, aliases, tags or merge keys: read with `yaml.load_all`."""


STR = "tag:yaml.org,2002:str"
ONE = GoYamlV2Loader("")


def scalar(e):
    """The value of a scalar event as PyYAML's SafeConstructor builds it."""
    if e.tag is not None and e.tag != "!":
        raise Fallback
    if not e.implicit[0]:
        return e.value
    tag = ONE.resolve(yaml.ScalarNode, e.value, (True, False))
    if tag == STR:
        return e.value
    if tag == "tag:yaml.org,2002:merge":
        raise Fallback
    return ONE.yaml_constructors[tag](ONE, yaml.ScalarNode(tag, e.value))


def documents(f):
    """The documents of `f` built from libyaml's events (as fast as the events come), the way
    PyYAML's composer and SafeConstructor build them from the same events; documents with
    anchors, aliases, explicit tags or merge keys raise `Fallback`."""
    docs = []
    stack = []  # [container, pending key or None]
    for e in yaml.parse(f, Loader=GoYamlV2Loader):
        t = type(e)
        if t is yaml.ScalarEvent:
            if e.anchor is not None:
                raise Fallback
            v = scalar(e)
        elif t is yaml.MappingStartEvent or t is yaml.SequenceStartEvent:
            if e.anchor is not None or (e.tag is not None and e.tag != "!"):
                raise Fallback
            stack.append([{} if t is yaml.MappingStartEvent else [], None, False])
            continue
        elif t is yaml.MappingEndEvent or t is yaml.SequenceEndEvent:
            v = stack.pop()[0]
        elif t is yaml.AliasEvent:
            raise Fallback
        else:
            continue
        if not stack:
            docs.append(v)
            continue
        top = stack[-1]
        c = top[0]
        if type(c) is list:
            c.append(v)
        elif not top[2]:
            if isinstance(v, (dict, list)):
                raise Fallback
            top[1], top[2] = key(v), True
        else:
            c[top[1]] = v
            top[1], top[2] = None, False
    return docs


def convert(path):
    try:
        with open(path, "rb") as f:
            try:
                docs = documents(f)
            except Fallback:
                f.seek(0)
                docs = list(yaml.load_all(f, Loader=GoYamlV2Loader))
        docs = [d for d in docs if d is not None]
        return "docs " + json.dumps(
            docs,
            ensure_ascii=False,
            allow_nan=False,
            sort_keys=True,
            separators=(",", ":"),
        )
    except (yaml.YAMLError, ValueError, UnicodeDecodeError) as e:
        return "error " + str(e).replace("\n", " ")


def main():
    paths = [p for p in sys.stdin.read().split("\n") if p]
    with multiprocessing.Pool(os.cpu_count() or 2) as pool:
        for line in pool.imap(convert, paths, chunksize=8):
            sys.stdout.write(line)
            sys.stdout.write("\n")


if __name__ == "__main__":
    main()
