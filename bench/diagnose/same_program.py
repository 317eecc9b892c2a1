#!/usr/bin/env python3
"""How far apart runs of one unchanged program are, per sample group (issue 11's gate).

Reads two or more summaries nvscope wrote for the same program (JSON with "samples" or
"diagnosis"."samples") and prints, per group kind (kernel, range-gpu, step-gpu, range-host,
step-host), the largest spread of a group's median across the runs (max/min - 1) and the
median of those spreads, over groups with at least 5 samples in every run. JSON on stdout.

  same_program.py a/transformer_fused.summary.json b/transformer_fused.summary.json ...
"""
import json
import statistics
import sys

KINDS = {"kernels": "kernel", "ranges_gpu": "range-gpu", "steps_gpu": "step-gpu",
         "ranges": "range-host", "steps": "step-host"}


def samples(path):
    with open(path) as f:
        j = json.load(f)
    s = j.get("samples") or j.get("diagnosis", {}).get("samples")
    if not isinstance(s, dict):
        sys.exit("same_program.py: %s holds no samples" % path)
    return s


def main(paths):
    if len(paths) < 2:
        sys.exit(__doc__)
    runs = [samples(p) for p in paths]
    out = {}
    for key, kind in KINDS.items():
        spreads = []
        for group in runs[0].get(key, []):
            sets = [next((g for g in r.get(key, []) if g["name"] == group["name"]), None) for r in runs]
            if any(s is None or len(s["ns"]) < 5 for s in sets):
                continue
            medians = [statistics.median(s["ns"]) for s in sets]
            if min(medians) > 0:
                spreads.append(max(medians) / min(medians) - 1)
        if spreads:
            out[kind] = {"groups": len(spreads), "max_spread": round(max(spreads), 4),
                         "median_spread": round(statistics.median(spreads), 4)}
    json.dump({"runs": len(paths), "by_group": out}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
