#!/usr/bin/env python3
"""Fidelity with Nsight Systems (issue 9): the six tables, row by row, on nsys's own keys.

Runs the fidelity workload twice under nvscope's collector (its run-to-run spread) and once
under `nsys profile --trace=cuda,nvtx --cuda-graph-trace=node`, exports nsys's six reports with `nsys stats --format
csv`, joins each table with nvscope's on the key nsys prints and reports:
  kernel_names_equal_fraction  kernel names spelled to the letter as nsys does / all names
  rows_only_in_one_side        rows, over all six tables, that one side lacks
  instance_count_mismatches    joined rows whose instance/count columns differ
  kernel_median_err_max        worst |median - nsys median| / nsys median, kernels over 10 us
  kernel_median_spread_nvscope the same figure between the two collector runs
Exit: 0 targets met (or no --check), 1 a target missed, 77 no GPU or no nsys (skip), 2 usage.

  compare.py --workload build/gpu/bench/fidelity/fidelity_workload --out /tmp/fid \
             [--nsys PATH] [--check] [--results bench/results/fidelity.json --commit abc1234]
"""
import argparse
import csv
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys

REPORTS = ["cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
           "nvtx_sum", "nvtx_kern_sum", "nvtx_gpu_proj_sum"]
# Key columns (as nsys names them) and the count columns that must agree, per report.
KEYS = {
    "cuda_gpu_kern_sum": (["Name"], ["Instances"]),
    "cuda_gpu_mem_time_sum": (["Operation"], ["Count"]),
    "cuda_gpu_mem_size_sum": (["Operation"], ["Count"]),
    "nvtx_sum": (["Range", "Style"], ["Instances"]),
    "nvtx_kern_sum": (["NVTX Range", "Style", "TID", "Kernel Name"], ["NVTX Inst", "Kern Inst"]),
    "nvtx_gpu_proj_sum": (["Range", "Style", "TID"], ["Range Instances", "Total GPU Ops"]),
}
TARGETS = {"kernel_names_equal_fraction": (">=", 1.0), "rows_only_in_one_side": ("<=", 0),
           "instance_count_mismatches": ("<=", 0), "kernel_median_err_max": ("<=", 0.02)}


def find_nsys(given):
    if given:
        return given
    found = shutil.which("nsys") or os.environ.get("NSYS")
    if found:
        return found
    for pattern in ("/opt/nvidia/nsight-systems/*/bin/nsys", "/opt/nvidia/nsight-*/*/host/target-linux-x64/nsys",
                    "/usr/local/cuda/bin/nsys"):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def run(cmd, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode


def read_table(path):
    """Rows of one CSV as dicts; nsys may print notes before the header: skip to it."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.count(",") >= 1 and ("Name" in l or "Range" in l or "Operation" in l)), 0)
    return list(csv.DictReader(lines[start:]))


def keyed(rows, key_cols):
    """Rows by key; TID replaced by its rank among the table's threads (ids differ between runs)."""
    cols = [c for c in key_cols if rows and c in rows[0]]
    tids = sorted({int(r["TID"]) for r in rows if "TID" in r and r["TID"].strip().isdigit()}) if "TID" in cols else []
    rank = {t: i for i, t in enumerate(tids)}
    out = {}
    for r in rows:
        key = tuple(("tid#%d" % rank.get(int(r[c]), -1)) if c == "TID" and r[c].strip().isdigit() else r[c] for c in cols)
        out[key] = r
    return cols, out


def num(row, col):
    try:
        return float(row[col])
    except (KeyError, TypeError, ValueError):
        return None


def compare_table(name, ours, theirs):
    key_cols, count_cols = KEYS[name]
    cols_a, a = keyed(ours, key_cols)
    cols_b, b = keyed(theirs, key_cols)
    if cols_a != cols_b:  # one side lacks a key column (TID): join on the common ones
        common = [c for c in key_cols if c in cols_a and c in cols_b]
        cols_a, a = keyed(ours, common)
        cols_b, b = keyed(theirs, common)
    only = sorted(set(a) ^ set(b))
    mismatches = []
    for k in sorted(set(a) & set(b)):
        for c in count_cols:
            x, y = num(a[k], c), num(b[k], c)
            if x is not None and y is not None and x != y:
                mismatches.append((k, c, x, y))
    return {"key": cols_a, "rows_nvscope": len(a), "rows_nsys": len(b),
            "only_nvscope": [list(k) for k in only if k in a], "only_nsys": [list(k) for k in only if k in b],
            "count_mismatches": [[list(k), c, x, y] for k, c, x, y in mismatches]}


def median_errors(ours, theirs, floor_ns=10000.0):
    a = {r["Name"]: r for r in ours}
    b = {r["Name"]: r for r in theirs}
    errs = {}
    for name in set(a) & set(b):
        ref = num(b[name], "Med (ns)")
        val = num(a[name], "Med (ns)")
        if ref and val is not None and ref > floor_ns:
            errs[name] = abs(val - ref) / ref
    return errs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nsys")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--results")
    ap.add_argument("--commit", default=os.environ.get("COMMIT", "unknown"))
    ap.add_argument("--graph-trace", choices=["node", "graph"], default="node",
                    help="nsys --cuda-graph-trace: node (default; nvscope records each graph node as nsys does "
                         "with node) or graph (nsys's own default: a graph launch is one range, its kernels unseen)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "log.txt")
    open(log, "w").close()

    rc = run([args.workload, "--collect", os.path.join(args.out, "nvscope_a")], log)
    if rc == 77:
        print("SKIP: no CUDA device (fidelity needs a GPU)")
        return 77
    if rc != 0 or run([args.workload, "--collect", os.path.join(args.out, "nvscope_b")], log) != 0:
        print("fidelity: the collector runs failed; see " + log)
        return 1
    nsys = find_nsys(args.nsys)
    if not nsys:
        print("SKIP: nsys not found (put it on PATH or set NSYS)")
        return 77
    rep = os.path.join(args.out, "nsys")
    nsys_flags = ["--trace=cuda,nvtx", "--cuda-graph-trace=" + args.graph_trace]
    if run([nsys, "profile"] + nsys_flags + ["--force-overwrite=true", "-o", rep, args.workload, "--plain"], log) != 0:
        print("fidelity: nsys profile failed; see " + log)
        return 1
    if run([nsys, "stats", "--force-export=true", "--format", "csv", "--output", rep, "--report", ",".join(REPORTS),
            rep + ".nsys-rep"], log) != 0:
        print("fidelity: nsys stats failed; see " + log)
        return 1
    version = subprocess.run([nsys, "--version"], capture_output=True, text=True).stdout.strip()

    tables, only, mism = {}, 0, 0
    for r in REPORTS:
        ours = read_table(os.path.join(args.out, "nvscope_a_%s.csv" % r))
        theirs = read_table("%s_%s.csv" % (rep, r))
        tables[r] = compare_table(r, ours, theirs)
        only += len(tables[r]["only_nvscope"]) + len(tables[r]["only_nsys"])
        mism += len(tables[r]["count_mismatches"])
    ka = read_table(os.path.join(args.out, "nvscope_a_cuda_gpu_kern_sum.csv"))
    kb = read_table(os.path.join(args.out, "nvscope_b_cuda_gpu_kern_sum.csv"))
    kn = read_table(rep + "_cuda_gpu_kern_sum.csv")
    names_a, names_n = {r["Name"] for r in ka}, {r["Name"] for r in kn}
    errs = median_errors(ka, kn)
    spread = median_errors(ka, kb)
    metrics = {
        "kernel_names_equal_fraction": len(names_a & names_n) / max(1, len(names_a | names_n)),
        "rows_only_in_one_side": only,
        "instance_count_mismatches": mism,
        "kernel_median_err_max": max(errs.values()) if errs else 0.0,
        "kernel_median_spread_nvscope": max(spread.values()) if spread else 0.0,
        "kernels_compared_over_10us": len(errs),
        "kernel_names": len(names_a | names_n),
    }
    device = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                            text=True).stdout.strip().splitlines()
    result = {"topic": "fidelity", "device": device[0] if device else "unknown",
              "date": datetime.date.today().isoformat(), "commit": args.commit, "nsys_version": version,
              "nsys_flags": " ".join(nsys_flags),
              "command": "bench/fidelity/run.sh", "metrics": metrics, "tables": tables,
              "median_err_by_kernel": errs}
    with open(os.path.join(args.out, "fidelity.json"), "w") as f:
        json.dump(result, f, indent=1)
    if args.results:
        with open(args.results, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    for r in REPORTS:
        t = tables[r]
        print("%-22s rows nvscope %3d nsys %3d  only nvscope %d  only nsys %d  count mismatches %d" % (
            r, t["rows_nvscope"], t["rows_nsys"], len(t["only_nvscope"]), len(t["only_nsys"]), len(t["count_mismatches"])))
        for k in t["only_nvscope"][:8]:
            print("    only nvscope: %s" % " | ".join(k))
        for k in t["only_nsys"][:8]:
            print("    only nsys:    %s" % " | ".join(k))
        for k, c, x, y in t["count_mismatches"][:8]:
            print("    %s: %s nvscope %g nsys %g" % (" | ".join(k), c, x, y))
    missed = []
    for name, (op, target) in TARGETS.items():
        v = metrics[name]
        ok = v >= target if op == ">=" else v <= target
        print("%-30s %10.4f  target %s %g  %s" % (name, v, op, target, "ok" if ok else "MISSED"))
        if not ok:
            missed.append(name)
    print("%-30s %10.4f  (the collector against itself)" % ("kernel_median_spread_nvscope", metrics["kernel_median_spread_nvscope"]))
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
