#!/usr/bin/env python3
"""Fails when a function under the given folder spans more than LIMIT lines.

Spans come from Universal Ctags' end lines:
    ctags --output-format=json --fields=+ne -R <folder>
A lambda is part of the function that holds it, so its lines count toward that function.
Exit status: 0 when every function fits, 1 when one does not (each is listed), 77 (skip) when
Universal Ctags with JSON output is not installed.
"""
import json
import shutil
import subprocess
import sys

LIMIT = 60
SKIP = 77


def ctags_tags(folder):
    exe = shutil.which("ctags") or shutil.which("universal-ctags")
    if exe is None:
        print("skipped: Universal Ctags not installed (Debian: apt-get install universal-ctags)")
        sys.exit(SKIP)
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    features = subprocess.run([exe, "--list-features"], capture_output=True, text=True).stdout
    if "Universal Ctags" not in version or not any(
            line.split()[:1] == ["json"] for line in features.splitlines()):
        print("skipped: ctags here is not Universal Ctags with JSON output")
        sys.exit(SKIP)
    out = subprocess.run([exe, "--output-format=json", "--fields=+ne", "-R", folder],
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def too_long(tags, limit):
    rows = []
    for t in tags:
        if t.get("_type") != "tag" or t.get("kind") != "function" or "end" not in t:
            continue
        lines = t["end"] - t["line"] + 1
        if lines > limit:
            scope = t.get("scope", "")
            if t["name"].startswith("__anon"):
                name = "a lambda in " + (scope or "namespace scope")
            else:
                name = scope + "::" + t["name"] if scope else t["name"]
            rows.append((t["path"], t["line"], name, lines))
    return sorted(rows)


def main(argv):
    if len(argv) < 2:
        print("usage: function_length.py <folder> [limit]")
        return 2
    limit = int(argv[2]) if len(argv) > 2 else LIMIT
    tags = ctags_tags(argv[1])
    functions = sum(1 for t in tags if t.get("kind") == "function")
    if functions == 0:
        print(f"nvscope: no function found under {argv[1]}: nothing was measured")
        return 1
    rows = too_long(tags, limit)
    for path, line, name, lines in rows:
        print(f"{path}:{line}: {name} is {lines} lines (limit {limit})")
    print(f"{functions} functions measured, {len(rows)} over {limit} lines")
    return 1 if rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
