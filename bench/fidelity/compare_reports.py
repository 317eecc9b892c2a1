#!/usr/bin/env python3
"""Fidelity with Nsight Systems for the reports beyond the six tables (issue 48).

Runs the fidelity workload once under nvscope's collector with CUDA API calls recorded
(`fidelity_workload --reports PREFIX LIST`) and once under `nsys profile --trace=cuda,nvtx
--cuda-graph-trace=node`, exports each report from nsys with `nsys stats --format csv`, and per
report compares:
  header             nvscope's column names and order against nsys's
  rows_only_*        rows one side lacks, joined on nsys's keys (below)
  count_mismatches   joined rows whose count or shape columns differ
A trace report (one row per record) is joined on its name columns and the row's rank among
rows of that name (in the report's own order), so a row missing on one side shows as a row
only in one side. Timings are not compared here (compare.py does, for the kernels).

  compare_reports.py --workload build/fidelity/bench/fidelity/fidelity_workload --out /tmp/rep \
      [--nsys PATH] [--reports a,b] [--results bench/results/fidelity.json] [--save-data tests/data/nsys_reports]
Exit: 0 all reports equal (or no --check), 1 a report differs (with --check), 77 no GPU or nsys, 2 usage.
--save-data copies nsys's CSVs and nvscope's beside them (nvscope_NAME.csv) into a folder of the
repository, for tests/analyze/nsys_reports_test.py to check on machines without a GPU.
"""
import argparse
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

from compare import find_nsys, run  # the six tables' harness: nsys lookup, logged commands

REPORTS = ["cuda_api_sum", "cuda_api_trace", "cuda_gpu_trace", "cuda_gpu_sum", "cuda_kern_exec_trace",
           "cuda_kern_exec_sum", "nvtx_pushpop_sum", "nvtx_pushpop_trace", "nvtx_startend_sum", "cuda_api_gpu_sum",
           "cuda_gpu_kern_gb_sum", "nvtx_gpu_proj_trace", "cuda_gpu_kern_sum:nvtx-name",
           # nsys's [:nvtx-name][:base|:mangled] on the other six reports with kernel names
           "cuda_gpu_trace:nvtx-name", "cuda_gpu_sum:nvtx-name", "cuda_api_gpu_sum:nvtx-name", "cuda_gpu_kern_gb_sum:nvtx-name",
           "cuda_kern_exec_trace:nvtx-name", "cuda_kern_exec_sum:nvtx-name", "cuda_gpu_sum:nvtx-name:base"]
VARIANTS = ("nvtx-name", "base", "mangled")  # the words a report name may carry after ':' (a file name: after '_')


def report_of(name):
    """(report, variants) of a report's name or a file's stem: "cuda_gpu_sum:nvtx-name:base" and
    "cuda_gpu_sum_nvtx-name_base" are ("cuda_gpu_sum", ("nvtx-name", "base")); a variant is only
    taken off the end, so a report's own words ("kern_gb_sum") stay."""
    words, rest = [], name
    while True:
        for v in VARIANTS:
            if rest.endswith(":" + v) or rest.endswith("_" + v):
                words.insert(0, v)
                rest = rest[:-len(v) - 1]
                break
        else:
            return rest, tuple(words)
# Per report: the key columns (as nsys names them), the columns that must agree on joined rows,
# and whether it is a trace (one row per record: the key gets the row's rank among equal keys).
KEYS = {
    # A report's :nvtx-name variant is joined on the same keys: its kernel names are "range/kernel".
    "cuda_gpu_kern_sum": (["Name"], ["Instances"], False),
    "cuda_api_sum": (["Name"], ["Num Calls"], False),
    "cuda_api_trace": (["Name"], [], True),
    # Bytes in the key: two memsets of one instant on two streams start in either order from run
    # to run (seen on the GPU machine), so their rank among equal names is not a property of the report.
    "cuda_gpu_trace": (["Name", "Bytes (MB)"], ["GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd", "SrcMemKd",
                                                "DstMemKd", "SMem"], True),
    "cuda_gpu_sum": (["Operation", "Category"], ["Instances"], False),
    "cuda_kern_exec_trace": (["Kernel Name", "API Function"], ["GridXYZ", "BlockXYZ"], True),
    "cuda_kern_exec_sum": (["TID", "DevId", "API Name", "Kernel Name"], ["Count"], False),
    "nvtx_pushpop_sum": (["Range"], ["Instances"], False),
    "nvtx_pushpop_trace": (["Name", "TID"], ["Lvl", "NumChild"], True),
    "nvtx_startend_sum": (["Range"], ["Instances"], False),
    "cuda_api_gpu_sum": (["Operation", "Category"], ["Instances"], False),
    "cuda_gpu_kern_gb_sum": (["Name", "GridXYZ", "BlockXYZ"], ["Instances"], False),
    "nvtx_gpu_proj_trace": (["Name", "Style", "TID"], ["NumGPUOps", "Lvl", "NumChild"], True),
}


def read_table(path):
    """(header, rows as dicts) of one CSV; nsys may print notes before the header: skip to it."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.count(",") >= 2), 0)
    reader = csv.reader(lines[start:])
    header = next(reader, [])
    return header, [dict(zip(header, r)) for r in reader]


def shaped(row):
    """Cells compared as values: numbers as floats, padding of GridXYZ/BlockXYZ dropped, and SMem
    = StcSMem + DymSMem (nvscope records their sum in StcSMem)."""
    out = dict(row)
    for c in ("GridXYZ", "BlockXYZ"):
        if c in out:
            out[c] = " ".join(out[c].split())
    if "StcSMem (MB)" in out:
        def mb(c):
            try:
                return float(out.get(c) or 0)
            except ValueError:
                return 0.0
        out["SMem"] = "%.3f" % (mb("StcSMem (MB)") + mb("DymSMem (MB)")) if out.get("StcSMem (MB)") else ""
    return out


def same(a, b):
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def keyed(rows, key_cols, trace):
    """Rows by key; TID by its rank among the table's threads (ids differ between runs); a trace's
    key gets the row's rank among rows of equal key."""
    tids = sorted({r["TID"] for r in rows if "TID" in key_cols and r.get("TID", "").isdigit()}, key=int)
    rank = {t: i for i, t in enumerate(tids)}
    seen, out = {}, {}
    for r in rows:
        key = tuple(("tid#%d" % rank[r[c]]) if c == "TID" and r.get(c) in rank else r.get(c, "") for c in key_cols)
        if trace:
            seen[key] = seen.get(key, -1) + 1
            key = key + (str(seen[key]),)
        out[key] = shaped(r)
    return out


def compare_report(name, ours_path, theirs_path):
    key_cols, count_cols, trace = KEYS[name]
    header_a, ours = read_table(ours_path)
    header_b, theirs = read_table(theirs_path)
    a, b = keyed(ours, key_cols, trace), keyed(theirs, key_cols, trace)
    mismatches = []
    for k in sorted(set(a) & set(b)):
        for c in count_cols:
            if not same(a[k].get(c), b[k].get(c)):
                mismatches.append([list(k), c, a[k].get(c), b[k].get(c)])
    return {"header_equal": header_a == header_b, "header_nvscope": header_a, "header_nsys": header_b,
            "rows_nvscope": len(a), "rows_nsys": len(b),
            "only_nvscope": [list(k) for k in sorted(set(a) - set(b))], "only_nsys": [list(k) for k in sorted(set(b) - set(a))],
            "count_mismatches": mismatches}


def nsys_csv(prefix, name):
    """The CSV nsys wrote for report `name` (nsys stats names it PREFIX_NAME.csv; a variant's ':' may be kept or not).
    Another spelling is taken only when it names the same report with the same variants, so that
    `cuda_gpu_trace:nvtx-name` is never compared with the plain `cuda_gpu_trace`'s file."""
    for candidate in ["%s_%s.csv" % (prefix, name), "%s_%s.csv" % (prefix, name.replace(":", "_"))]:
        if os.path.exists(candidate):
            return candidate
    base, variants = report_of(name)
    for hit in sorted(glob.glob("%s_%s*.csv" % (prefix, base))):
        if report_of(os.path.basename(hit)[len(os.path.basename(prefix)) + 1:-len(".csv")]) == (base, variants):
            return hit
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nsys")
    ap.add_argument("--reports", default=",".join(REPORTS))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--results", help="a fidelity.json to add reports_compared, reports_equal and the per-report detail to")
    ap.add_argument("--save-data", help="copy both sides' CSVs to this folder (tests/data/nsys_reports)")
    args = ap.parse_args()
    reports = [r for r in args.reports.split(",") if r]
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "log.txt")
    open(log, "w").close()
    ours = os.path.join(args.out, "nvscope")
    rc = run([args.workload, "--reports", ours, ",".join(reports)], log)
    if rc == 77:
        print("SKIP: no CUDA device (fidelity needs a GPU)")
        return 77
    if rc != 0:
        print("compare_reports: the collector run failed; see " + log)
        return 1
    nsys = find_nsys(args.nsys)
    if not nsys:
        print("SKIP: nsys not found (put it on PATH or set NSYS)")
        return 77
    rep = os.path.join(args.out, "nsys")
    if run([nsys, "profile", "--trace=cuda,nvtx", "--cuda-graph-trace=node", "--force-overwrite=true", "-o", rep, args.workload,
            "--plain"], log) != 0:
        print("compare_reports: nsys profile failed; see " + log)
        return 1
    if run([nsys, "stats", "--force-export=true", "--format", "csv", "--output", rep, "--report", ",".join(reports),
            rep + ".nsys-rep"], log) != 0:
        print("compare_reports: nsys stats failed; see " + log)
        return 1
    version = subprocess.run([nsys, "--version"], capture_output=True, text=True).stdout.strip()

    detail, equal = {}, 0
    for r in reports:
        base = report_of(r)[0]
        theirs = nsys_csv(rep, r)
        if base not in KEYS or theirs is None or not os.path.exists("%s_%s.csv" % (ours, r)):
            detail[r] = {"error": "no CSV from %s" % ("nsys" if theirs is None else "nvscope")}
            continue
        detail[r] = compare_report(base, "%s_%s.csv" % (ours, r), theirs)
        d = detail[r]
        ok = d["header_equal"] and not d["only_nvscope"] and not d["only_nsys"] and not d["count_mismatches"]
        d["equal"] = ok
        equal += ok
        if args.save_data:
            os.makedirs(args.save_data, exist_ok=True)
            shutil.copy(theirs, os.path.join(args.save_data, "nsys_%s.csv" % r.replace(":", "_")))
            shutil.copy("%s_%s.csv" % (ours, r), os.path.join(args.save_data, "nvscope_%s.csv" % r.replace(":", "_")))
    for r, d in detail.items():
        if "error" in d:
            print("%-36s %s" % (r, d["error"]))
            continue
        print("%-36s header %s  rows nvscope %4d nsys %4d  only nvscope %d  only nsys %d  mismatches %d  %s" % (
            r, "same" if d["header_equal"] else "DIFFERS", d["rows_nvscope"], d["rows_nsys"], len(d["only_nvscope"]),
            len(d["only_nsys"]), len(d["count_mismatches"]), "equal" if d["equal"] else "DIFFERS"))
        if not d["header_equal"]:
            print("    nvscope: %s\n    nsys:    %s" % (" | ".join(d["header_nvscope"]), " | ".join(d["header_nsys"])))
        for k in d["only_nvscope"][:6]:
            print("    only nvscope: %s" % " | ".join(k))
        for k in d["only_nsys"][:6]:
            print("    only nsys:    %s" % " | ".join(k))
        for k, c, x, y in d["count_mismatches"][:6]:
            print("    %s: %s nvscope %s nsys %s" % (" | ".join(k), c, x, y))
    print("reports_compared %d  reports_equal %d  (nsys %s)" % (len(reports), equal, version))
    if args.results:
        result = {}
        if os.path.exists(args.results):
            with open(args.results) as f:
                result = json.load(f)
        result.setdefault("metrics", {})
        result["metrics"]["reports_compared"] = len(reports)
        result["metrics"]["reports_equal"] = equal
        result.setdefault("context", {})  # bench/results files: figures in metrics, the rest in context
        result["context"]["reports_detail"] = detail
        result["context"]["reports_command"] = "bench/fidelity/reports_vs_nsys.sh"
        with open(args.results, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 1 if (args.check and equal != len(reports)) else 0


if __name__ == "__main__":
    sys.exit(main())
