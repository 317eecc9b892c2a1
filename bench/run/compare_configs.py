"""Compares the kernels' launch configurations in nvscope's Chrome trace with nsys's own record of
them (CUPTI's kernel table in the report's SQLite export, `nsys export --type sqlite`): grid,
block, registers per thread and shared memory per block (static + dynamic), as multisets keyed by
kernel name, and how many kernels each says a CUDA graph launched. Prints one JSON object.

python3 compare_configs.py NVSCOPE_TRACE.json NSYS.sqlite

The two tools run the program in two processes: where the program chooses a configuration at run
time, a kernel's registers and shared memory may differ between two runs, nsys's own included
(seen 2026-11-26 under torch.compile: one Triton reduction took 40 registers and 4,096 shared
bytes in the first run after the compile cache was filled, 48 and 2,048 in the next, whichever
tool ran first; with nsys first, every kernel was equal).
"""
import collections
import json
import re
import sqlite3
import sys

norm = lambda s: re.sub(r"\s+", "", s)


def nvscope_configs(path):
    configs, graph = collections.Counter(), 0
    for e in json.load(open(path))["traceEvents"]:
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            a = e["args"]
            configs[(norm(e["name"]), tuple(a["grid"]), tuple(a["block"]), a["registers"], a["shared_bytes"])] += 1
            graph += "graph" in a
    return configs, graph


def nsys_configs(path):
    query = """select s.value, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread,
               k.staticSharedMemory + k.dynamicSharedMemory, coalesce(k.graphNodeId, 0)
               from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.demangledName"""
    configs, graph = collections.Counter(), 0
    for row in sqlite3.connect(path).execute(query):
        configs[(norm(row[0]), tuple(row[1:4]), tuple(row[4:7]), row[7], row[8])] += 1
        graph += row[9] != 0
    return configs, graph


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare_configs.py NVSCOPE_TRACE.json NSYS.sqlite")
    ours, ours_graph = nvscope_configs(sys.argv[1])
    theirs, theirs_graph = nsys_configs(sys.argv[2])
    only_ours, only_theirs = ours - theirs, theirs - ours
    show = lambda c: [[k[0], list(k[1]), list(k[2]), k[3], k[4], n] for k, n in list(c.items())[:5]]
    print(json.dumps({
        "kernels_nvscope": sum(ours.values()), "kernels_nsys": sum(theirs.values()),
        "distinct_configs_nvscope": len(ours), "distinct_configs_nsys": len(theirs),
        "configs_equal": not only_ours and not only_theirs,
        "kernels_differing": sum(only_ours.values()),
        "graph_kernels_nvscope": ours_graph, "graph_kernels_nsys": theirs_graph,
        "only_nvscope": show(only_ours), "only_nsys": show(only_theirs)}))


if __name__ == "__main__":
    main()
