#!/usr/bin/env python3
"""Validates nvscope's JSON outputs against schemas/ (issue 46): each FILE is checked against
the schema its name picks (*.trace.json: chrome_trace, diff*.json: diff, merge*.json: merge,
diagnosis*.json: diagnosis, else summary), with
provenance.schema.json put in place of its relative $ref, so that the check does not depend on
the jsonschema version's reference resolver. Also checks that a broken output fails (a check
that passes everything fails too). Exit 77 (skipped) when jsonschema is not installed (Debian:
python3-jsonschema); CI installs it.

usage: check_schemas.py SCHEMA_DIR FILE...
       check_schemas.py SCHEMA_DIR --generate PROGRAM[,ARG...] ... [--expect N]
  (in an ARG, "|" stands for a comma: doctest's -tc=a|b)
  --generate runs PROGRAM with NVSCOPE_SCHEMA_SAMPLES set to a fresh folder (the tests write
  the outputs they make there) and checks every file it holds, at least N of them.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("check_schemas: python3-jsonschema is not installed: skipped")
    sys.exit(77)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def inline_refs(node, schemas):
    """Replaces {"$ref": "NAME.schema.json"} with the schema of that name (one level of files)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.endswith(".schema.json"):
            inner = copy.deepcopy(schemas[ref])
            inner.pop("$id", None)
            inner.pop("$schema", None)
            return inner
        return {k: inline_refs(v, schemas) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_refs(v, schemas) for v in node]
    return node


def schema_for(path):
    name = os.path.basename(path)
    if name.endswith(".trace.json"):
        return "chrome_trace.schema.json"
    if name.startswith("diff"):
        return "diff.schema.json"
    if name.startswith("merge"):
        return "merge.schema.json"
    if name.startswith("diagnosis"):
        return "diagnosis.schema.json"
    return "summary.schema.json"


def generated(args):
    """Runs each --generate program into one folder; the files it holds, or None on failure."""
    out = tempfile.mkdtemp(prefix="nvscope_schema_")
    expect = 1
    programs = []
    i = 0
    while i < len(args):
        if args[i] == "--generate":
            programs.append([a.replace("|", ",") for a in args[i + 1].split(",")])
            i += 2
        elif args[i] == "--expect":
            expect = int(args[i + 1])
            i += 2
        else:
            print(f"check_schemas: unknown argument {args[i]!r}")
            return None
    for cmd in programs:
        r = subprocess.run(cmd, env=dict(os.environ, NVSCOPE_SCHEMA_SAMPLES=out), capture_output=True, text=True)
        if r.returncode != 0:
            print(f"check_schemas: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
            return None
    files = sorted(os.path.join(out, n) for n in os.listdir(out))
    if len(files) < expect:
        print(f"check_schemas: {len(files)} outputs written, want at least {expect}: {files}")
        return None
    return files


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    folder, files = sys.argv[1], sys.argv[2:]
    if files and files[0] == "--generate":
        files = generated(files)
        if files is None:
            return 1
    schemas = {n: load(os.path.join(folder, n)) for n in os.listdir(folder) if n.endswith(".schema.json")}
    failed = 0
    for path in files:
        schema = inline_refs(schemas[schema_for(path)], schemas)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
        doc = load(path)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:5]:
            print(f"{path}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
        failed += bool(errors)
        # The same output with its format taken away must fail: the schema checks something.
        broken = copy.deepcopy(doc)
        (broken["otherData"] if "otherData" in broken else broken).pop("format", None)
        if validator.is_valid(broken):
            print(f"{path}: still valid without its \"format\": the schema checks too little")
            failed += 1
        print(f"{path}: {'fails' if errors else 'valid'} against {schema_for(path)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
