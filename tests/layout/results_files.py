#!/usr/bin/env python3
"""Every file of a results folder (bench/results) states today's figures and nothing else
(issue 44): a JSON object with topic, device, date, commit, command and metrics, and at most a
context object or string beside them; no other file (narratives and curves belong in docs/ or
in the metrics). Prints one line per problem and the count; exits 1 when there is any.
  python3 tests/layout/results_files.py bench/results"""
import json
import os
import sys

REQUIRED = ("topic", "device", "date", "commit", "command", "metrics")
ALLOWED = set(REQUIRED) | {"context"}


def problems_of(folder):
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not name.endswith(".json"):
            yield f"{name}: not a JSON results file (narratives go in docs/, curves in metrics)"
            continue
        try:
            with open(path) as f:
                doc = json.load(f)
        except ValueError as e:
            yield f"{name}: does not parse as JSON ({e})"
            continue
        if not isinstance(doc, dict):
            yield f"{name}: not a JSON object"
            continue
        for key in REQUIRED:
            if key not in doc:
                yield f"{name}: no '{key}'"
        for key in sorted(set(doc) - ALLOWED):
            yield f"{name}: '{key}' beside the six keys and context"
        if "metrics" in doc and not isinstance(doc["metrics"], dict):
            yield f"{name}: 'metrics' is not an object"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
    problems = list(problems_of(folder))
    for p in problems:
        print(p)
    count = len(os.listdir(folder))
    print(f"{count} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
