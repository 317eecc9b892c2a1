#!/usr/bin/env python3
"""Fails when a header under <root>/nvscope includes against nvscope's layering.

Layers, in the order data flows: annotate -> capture -> collect -> trace -> analyze -> export.
- A header may include its own layer, the layers its layer is allowed to read (ALLOWED), the
  shared internals nvscope/detail/ and nvscope/version.hpp.
- No header includes another layer's detail/ folder.
- The thin top-level headers belong to their layer (annotate.hpp to annotate, ...);
  nvscope.hpp, the umbrella, may include any header that is not under a detail/ folder.
- Inside analyze, floors (issue 44): analyze/detail/ (the engine's primitives) < analyze/*.hpp
  (types and passes) < analyze/diagnose/ (the diagnosis' passes) < analyze/analyze.hpp (the
  pipeline); a header includes its own floor and those below, never one above. The reference
  definitions (analyze/reference/) include each other, trace.hpp and the headers that define
  what they transcribe (DEFINITIONS), never the engine; the engine never includes them (they
  are for the tests and the reader, not a dependency of the fast passes).
Exit status 0 when every include keeps the rules, 1 otherwise (each offending line listed).
"""
import os
import re
import sys

# What each layer may include besides itself. trace.hpp is the shared record format: collect
# writes it, analyze and export read it; it reads no layer.
ALLOWED = {
    "annotate": set(),
    "capture": {"annotate"},
    "collect": {"annotate", "capture", "trace"},
    "trace": set(),
    "analyze": {"trace"},
    "export": {"trace", "analyze"},
}
THIN = {"annotate.hpp": "annotate", "capture.hpp": "capture", "collector.hpp": "collect",
        "trace.hpp": "trace", "analysis.hpp": "analyze", "export.hpp": "export"}
SHARED = {"version.hpp"}
UMBRELLA = "nvscope.hpp"
DEFINITIONS = {"analyze/report.hpp", "analyze/diagnosis.hpp", "analyze/diagnose/options.hpp", "analyze/step_names.hpp",
               "analyze/report_rows.hpp", "analyze/recipe_rows.hpp",
               "analyze/merge_types.hpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def classify(rel):
    """(layer, is_detail) of a path relative to the nvscope/ folder; layer None when shared."""
    parts = rel.split("/")
    if parts[0] == "detail" or rel in SHARED:
        return None, True
    if len(parts) == 1:
        return (THIN.get(rel, "umbrella" if rel == UMBRELLA else "unknown"), False)
    return parts[0], "detail" in parts[1:-1]


def analyze_floor(rel):
    """The floor of a header of the analyze layer (see the module comment); None for reference/."""
    parts = rel.split("/")
    if parts[1] == "reference":
        return None
    if rel == "analyze/analyze.hpp":
        return 3
    if parts[1] == "diagnose":
        return 2
    return 0 if parts[1] == "detail" else 1


def floor_offence(src, dst):
    if src.split("/")[1] == "reference":
        if dst.split("/")[1] == "reference" or dst in DEFINITIONS:
            return None
        return f"a reference definition includes the engine (nvscope/{dst}): only reference/ and {', '.join(sorted(DEFINITIONS))}"
    if dst.split("/")[1] == "reference":
        return f"the engine includes a reference definition (nvscope/{dst}): reference/ is for the tests and the reader"
    s, d = analyze_floor(src), analyze_floor(dst)
    if d is not None and d > s:
        return f"includes nvscope/{dst}, a floor above its own inside analyze"
    return None


def offence(src, dst):
    if src.startswith("analyze/") and dst.startswith("analyze/"):
        why = floor_offence(src, dst)
        if why:
            return why
    src_layer, _ = classify(src)
    dst_layer, dst_detail = classify(dst)
    if dst_layer is None:
        return None
    if dst_layer == "unknown":
        return f"includes nvscope/{dst}, which belongs to no layer"
    if src_layer == "umbrella":
        return f"includes another layer's internals nvscope/{dst}" if dst_detail else None
    if src_layer == "unknown":
        return f"nvscope/{src} belongs to no layer (put it in a layer folder or nvscope/detail/)"
    if dst_detail and dst_layer != src_layer:
        return f"includes another layer's internals nvscope/{dst}"
    if dst_layer != src_layer and dst_layer not in ALLOWED[src_layer]:
        return f"{src_layer} must not include {dst_layer} (nvscope/{dst}): against the data flow"
    return None


def check(root):
    base = os.path.join(root, "nvscope")
    problems, headers, includes = [], 0, 0
    for folder, folders, files in os.walk(base):
        folders.sort()  # every run lists the same offences in the same order
        for name in sorted(files):
            if not name.endswith((".hpp", ".h", ".cuh")):
                continue
            path = os.path.join(folder, name)
            src = os.path.relpath(path, base).replace(os.sep, "/")
            headers += 1
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target.startswith("nvscope/"):
                        dst = target[len("nvscope/"):]
                    elif '"' in line:  # a quoted include, relative to the including file
                        dst = os.path.normpath(os.path.join(os.path.dirname(src), target))
                        dst = dst.replace(os.sep, "/")
                        if not os.path.exists(os.path.join(base, dst)):
                            continue
                    else:
                        continue
                    includes += 1
                    why = offence(src, dst)
                    if why:
                        problems.append(f"{os.path.relpath(path)}:{number}: {why}")
    return problems, headers, includes


def main(argv):
    if len(argv) != 2:
        print("usage: include_rules.py <include folder>")
        return 2
    problems, headers, includes = check(argv[1])
    if headers == 0:
        print(f"nvscope: no header under {argv[1]}/nvscope: nothing was checked")
        return 1
    for p in problems:
        print(p)
    print(f"{headers} headers, {includes} nvscope includes checked, {len(problems)} against the rules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
