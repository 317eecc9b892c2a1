#!/usr/bin/env python3
"""The six tables' corners against nsys itself (issue 48): runs bench/fidelity/corners.cu under
nsys and under nvscope's collector, and for each provoked corner sets the rows of both side by
side, column by column (times left out: they differ run to run), with whether they agree.
GPU machine with nsys; writes OUT/corners.json and prints one block per corner.
  python3 bench/fidelity/corners.py --program build/gpu/bench/fidelity/fidelity_corners --out /tmp/corners
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import REPORTS, find_nsys, read_table, run  # noqa: E402

# Per corner: what it provokes, and (report, range names) whose rows are set side by side.
CORNERS = {
    "1 one decimal on a half (1.25)": [("nvtx_gpu_proj_sum", ["c1_level", "c1_ops", "c1_parent"]),
                                       ("nvtx_kern_sum", ["c1_level", "c1_ops"])],
    "2 kernel outside every range": [("nvtx_kern_sum", [""])],
    "3 push/pop and start/end nested on one thread": [("nvtx_gpu_proj_sum", ["c3_se_outer", "c3_pp_inner", "c3_pp_outer", "c3_se_inner"]),
                                                      ("nvtx_sum", ["c3_se_outer", "c3_pp_inner"])],
    "4 one label, two ranges (:q and q in domain ':')": [("nvtx_sum", ["::q"]), ("nvtx_gpu_proj_sum", ["::q"]),
                                                          ("nvtx_kern_sum", ["::q"])],
    "6 two instances of one start/end range around a kernel": [("nvtx_kern_sum", ["c6_twice"]), ("nvtx_gpu_proj_sum", ["c6_twice"])],
}
NOT_PROVOKED = {
    "5 a launch on the instant one range ends and the next begins": "two NVTX events of one thread at one nanosecond",
    "7 two ranges with the same start and end on a thread": "two NVTX events of one thread at one nanosecond",
    "8 Time (%) of a table whose total is 0": "GPU work and ranges of zero duration",
}


def is_time(col):
    return "(ns)" in col or col in ("Time (%)",)


def range_of(row):
    for c in ("Range", "NVTX Range"):
        if c in row:
            return row[c]
    return None


def pick(rows, name):
    """Rows whose range label ends in `name` after its domain colon ('' picks rows with no range)."""
    out = []
    for r in rows:
        label = range_of(r)
        if label is None:
            continue
        if name == "" and label.strip() in ("", ":"):
            out.append(r)
        elif name.startswith(":") and label == name:
            out.append(r)
        elif name and (label == ":" + name or label.endswith(":" + name)):
            out.append(r)
    return out


def strip(row):
    return {k: v for k, v in row.items() if not is_time(k) and k not in ("PID", "TID")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nsys")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "log.txt")
    open(log, "w").close()
    rc = run([args.program, "--collect", os.path.join(args.out, "nvscope")], log)
    if rc == 77:
        print("SKIP: no CUDA device")
        return 77
    nsys = find_nsys(args.nsys)
    if rc != 0 or not nsys:
        print("corners: the collector run failed or nsys is missing; see " + log)
        return 1
    rep = os.path.join(args.out, "nsys")
    if run([nsys, "profile", "--trace=cuda,nvtx", "--force-overwrite=true", "-o", rep, args.program, "--plain"], log) != 0 or \
       run([nsys, "stats", "--force-export=true", "--format", "csv", "--output", rep, "--report", ",".join(REPORTS),
            rep + ".nsys-rep"], log) != 0:
        print("corners: nsys failed; see " + log)
        return 1
    result = {"nsys_version": subprocess.run([nsys, "--version"], capture_output=True, text=True).stdout.strip(),
              "corners": {}, "not_provoked": NOT_PROVOKED}
    for corner, checks in CORNERS.items():
        print("== corner " + corner)
        entry = []
        for report, names in checks:
            ours = read_table(os.path.join(args.out, "nvscope_%s.csv" % report))
            theirs = read_table("%s_%s.csv" % (rep, report))
            for name in names:
                a, b = pick(ours, name), pick(theirs, name)
                same = [strip(r) for r in a] == [strip(r) for r in b]
                entry.append({"report": report, "range": name, "nvscope": a, "nsys": b, "equal_without_times": same})
                print("  %-18s %-14s %s" % (report, name or "(no range)", "same" if same else "DIFFERENT"))
                for side, rows in (("nvscope", a), ("nsys", b)):
                    for r in rows:
                        print("    %-7s %s" % (side, " | ".join("%s=%s" % (k, v) for k, v in strip(r).items())))
                    if not rows:
                        print("    %-7s (no row)" % side)
        result["corners"][corner] = entry
    for corner, why in NOT_PROVOKED.items():
        print("== corner %s: not provoked (needs %s)" % (corner, why))
    with open(os.path.join(args.out, "corners.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
