"""Compares nvscope's CSV reports with nsys's: kernel instances per name, total kernel time,
NVTX (range, instances) rows. Prints one JSON object.

python3 compare.py NVSCOPE_KERN.csv NVSCOPE_NVTX.csv NSYS_KERN.csv NSYS_NVTX.csv
"""
import csv
import json
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def column(row, *names):
    for n in names:
        if n in row:
            return row[n]
    raise KeyError(f"none of {names} in {list(row)}")


def kernels(path):
    out = {}
    for r in rows(path):
        name = column(r, "Name")
        inst, total = int(column(r, "Instances")), int(float(column(r, "Total Time (ns)")))
        i, t = out.get(name, (0, 0))
        out[name] = (i + inst, t + total)
    return out


def ranges(path):
    out = {}
    for r in rows(path):
        out[column(r, "Range")] = out.get(column(r, "Range"), 0) + int(column(r, "Instances"))
    return out


nk, nr, sk, sr = kernels(sys.argv[1]), ranges(sys.argv[2]), kernels(sys.argv[3]), ranges(sys.argv[4])
inst_n = {k: v[0] for k, v in nk.items()}
inst_s = {k: v[0] for k, v in sk.items()}
diff = sorted(set(inst_n) ^ set(inst_s)) + sorted(k for k in set(inst_n) & set(inst_s) if inst_n[k] != inst_s[k])
time_n, time_s = sum(v[1] for v in nk.values()), sum(v[1] for v in sk.values())
print(json.dumps({
    "kernel_names_nvscope": len(inst_n), "kernel_names_nsys": len(inst_s),
    "kernel_instances_nvscope": sum(inst_n.values()), "kernel_instances_nsys": sum(inst_s.values()),
    "kernel_instances_equal": int(not diff), "kernel_names_differing": diff[:10],
    "kernel_time_nvscope_ns": time_n, "kernel_time_nsys_ns": time_s,
    "kernel_time_err": abs(time_n - time_s) / time_s if time_s else None,
    "nvtx_rows_nvscope": sorted(nr.items()), "nvtx_rows_nsys": sorted(sr.items()),
    "nvtx_rows_equal": int(nr == sr),
}))
