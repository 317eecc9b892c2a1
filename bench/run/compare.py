"""Compares nvscope's CSV reports with nsys's: kernel instances per name, total kernel time,
NVTX (range, instances) rows. Prints one JSON object.

python3 compare.py NVSCOPE_KERN.csv NVSCOPE_NVTX.csv NSYS_KERN.csv NSYS_NVTX.csv [NVSCOPE_NVTX_KERN.csv NSYS_NVTX_KERN.csv]

Kernel names are compared twice: exactly as each tool spells them, and by base name (template
arguments, parameter list and spaces dropped; "(anonymous namespace)" read as "<unnamed>"),
because the two demanglers spell template arguments differently (nsys: `(int)4`, `(bool)1`,
`[lambda()(instance3)]`, `(T2, T5 *)`; abi::__cxa_demangle: `4`, `true`, `{lambda()#3}`,
`(float*, float*)`).
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


def normal(name):
    """The base name (no template arguments, no parameter list, no spaces), with the anonymous
    namespace spelt one way: the two demanglers agree on it where they differ in the rest."""
    out, depth, i = [], 0, 0
    s = name.replace("(anonymous namespace)", "<unnamed>")
    s = s.replace("<unnamed>", "\x00")
    while i < len(s):
        c = s[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0:
            out.append(c)
        i += 1
    s = "".join(out).replace("\x00", "<unnamed>").replace(" ", "")
    if s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                return s[:i]
    return s


def per_normal_name(k):
    out = {}
    for name, (inst, _) in k.items():
        out[normal(name)] = out.get(normal(name), 0) + inst
    return out


def kernels_under(path, range_name):
    if not path:
        return None
    return sum(int(r["Kern Inst"]) for r in rows(path) if r["NVTX Range"] == range_name)


nk, nr, sk, sr = kernels(sys.argv[1]), ranges(sys.argv[2]), kernels(sys.argv[3]), ranges(sys.argv[4])
nkr, skr = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else (None, None)
inst_n = {k: v[0] for k, v in nk.items()}
inst_s = {k: v[0] for k, v in sk.items()}
diff = sorted(set(inst_n) ^ set(inst_s)) + sorted(k for k in set(inst_n) & set(inst_s) if inst_n[k] != inst_s[k])
time_n, time_s = sum(v[1] for v in nk.values()), sum(v[1] for v in sk.values())
print(json.dumps({
    "kernel_names_nvscope": len(inst_n), "kernel_names_nsys": len(inst_s),
    "kernel_instances_nvscope": sum(inst_n.values()), "kernel_instances_nsys": sum(inst_s.values()),
    "kernel_instances_equal_exact_names": int(not diff), "kernel_names_differing": diff[:10],
    "kernel_names_differing_count": len(diff),
    "kernel_instances_equal": int(per_normal_name(nk) == per_normal_name(sk)),
    "kernels_in_step_nvscope": kernels_under(nkr, ":step"), "kernels_in_step_nsys": kernels_under(skr, ":step"),
    "kernel_time_nvscope_ns": time_n, "kernel_time_nsys_ns": time_s,
    "kernel_time_err": abs(time_n - time_s) / time_s if time_s else None,
    "nvtx_rows_nvscope": sorted(nr.items()), "nvtx_rows_nsys": sorted(sr.items()),
    "nvtx_rows_equal": int(nr == sr),
}))
