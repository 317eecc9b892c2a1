#!/usr/bin/env python3
"""Fidelity with Nsight Systems for the recipes nvscope computes in-process (issue 48).
Runs the fidelity workload once under nvscope's collector (`fidelity_workload --recipes PREFIX
LIST`, runtime API calls recorded) and once under `nsys profile --trace=cuda,nvtx`, then per
recipe runs `nsys recipe NAME --input REP.nsys-rep [options]` and reads its analysis.parquet
(pandas); where that cannot be read, `nsys analyze --rule NAME[:k=v] --format csv` (the same
rule script the recipe runs) gives the rows. Per recipe it compares:
  header           the column names, units and ':' tags cut, nsys's Rank and hidden columns left out
  only_nvscope/nsys rows one side lacks, joined on the recipe's keys (below) and the row's
                   rank among rows of equal key in start order
  time_mismatches  joined rows whose time columns differ beyond the tolerance: the two runs
                   are separate processes, so durations are compared loosely and absolute
                   starts not at all
A pace recipe's files (pace_start ... pace_delta_stats, stats) are compared file by file, a row
an iteration (compare_pace). A recipe is equal when its headers are and no row or time differs.
  compare_recipes.py --workload build/fidelity/bench/fidelity/fidelity_workload --out /tmp/rec \\
      [--nsys PATH] [--recipes a,b:k=v] [--results bench/results/fidelity.json] [--check]
Exit: 0 (or 1 with --check when a recipe differs), 77 no GPU or nsys, 2 usage.
"""
import argparse
import csv
import glob
import json
import os
import re
import subprocess
import sys

from compare import find_nsys, run  # the six tables' harness: nsys lookup, logged commands

# gpu_gaps' 500 ms default finds nothing in a workload of a few seconds: gap=0 reports every gap.
RECIPES = ("gpu_gaps:gap=0,gpu_time_util,cuda_api_sync,cuda_memcpy_async,cuda_memcpy_sync,cuda_memset_sync,cuda_gpu_kern_hist,"
           "cuda_gpu_kern_pace:name=scale_kernel,nvtx_pace:name=forward,nvtx_gpu_proj_pace:name=forward,cuda_gpu_time_util_map")
# Per recipe: key columns, time columns compared within the tolerance, and the percent columns.
KEYS = {
    "gpu_gaps": (["Device ID"], ["Duration"], []),
    "gpu_time_util": (["Device ID"], [], ["In-Use"]),
    "cuda_api_sync": (["API Name"], ["Duration"], []),
    "cuda_memcpy_async": (["API Name", "Src Kind", "Dst Kind", "Bytes"], ["Duration"], []),
    "cuda_memcpy_sync": (["API Name", "Src Kind", "Dst Kind", "Bytes"], ["Duration"], []),
    "cuda_memset_sync": (["API Name", "Memory Kind", "Bytes"], ["Duration"], []),
    "cuda_gpu_kern_hist": (["Name"], ["Duration"], []),  # no Start: the rank follows each side's row order
    # The heatmaps: a row a bin, joined on the device and the bin's number (the rank in file order);
    # the bins' starts differ with each run's session length, so Duration is not compared.
    # nccl_gpu_time_util_map needs NCCL kernels, as nccl_gpu_overlap_trace does (RECIPES on a multi-GPU workload).
    "cuda_gpu_time_util_map": (["Device ID"], [], ["Kernel"]),
    "nccl_gpu_time_util_map": (["Device ID"], [], ["All", "NCCL", "Compute", "Overlap"]),
}
# Recipes of several files, compared as the pace recipes are (compare_pace): file names and the
# columns compared loosely. nccl_gpu_overlap_trace needs NCCL kernels: pass it in RECIPES on a
# multi-GPU workload (the fidelity workload has none: no rows on either side).
MULTI_FILES = {"nccl_gpu_overlap_trace": (["rank_trace", "grouped_trace"],
                                          {"rank_trace": ["Communication Overlap", "Compute Overlap"],
                                           "grouped_trace": ["Count"]})}
# The pace recipes' files (nsys's pace_FILE.parquet and stats.parquet; nvscope's PREFIX_NAME.FILE.csv),
# compared row by row (a row an iteration); times from each run's own session start, so starts,
# ends and the first delta are not compared, the other columns within the tolerance.
PACE_FILES = ["pace_start", "pace_end", "pace_duration", "pace_duration_accum", "pace_delta", "pace_delta_accum", "pace_delta_stats", "stats"]
PACE_LOOSE = {"pace_duration": ["0"], "pace_duration_accum": ["0"], "pace_delta": ["0"],
              "stats": ["Mean", "Min", "Q1", "Median", "Q3", "Max", "Sum"]}
RELATIVE, ABSOLUTE_NS, PERCENT_POINTS = 0.5, 20000, 15.0


def column(name):
    """A column name without its ':tag' and ' (unit)', as the recipe writes its parquet."""
    return re.sub(r"\s*\([^)]*\)$", "", name.split(":")[0]).strip()


def read_csv(path):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.count(",") >= 2), 0)
    reader = csv.reader(lines[start:])
    header = [column(h) for h in next(reader, [])]
    return header, [dict(zip(header, r)) for r in reader]


def read_parquet(folder):
    import pandas  # nsys's recipes need it too
    hits = glob.glob(os.path.join(folder, "**", "analysis.parquet"), recursive=True)
    if not hits:
        return None
    df = pandas.read_parquet(hits[0])
    header = [column(c) for c in df.columns]
    rows = [{column(c): ("" if v is None or v != v else str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
             for c, v in zip(df.columns, r)} for r in df.itertuples(index=False)]
    return header, rows


def cell(v):
    return "" if v is None or v != v else str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def files_of(name):
    """The files of a recipe of several, and its loosely compared columns."""
    return MULTI_FILES.get(name, (PACE_FILES, PACE_LOOSE))


def read_pace(folder, names=PACE_FILES):
    """A recipe's files, {FILE: (header, rows)}: pace_FILE.parquet (a row an iteration, a column
    a rank), stats.parquet, rank_trace.parquet, grouped_trace.parquet (an index, Text or Name, as
    the first column)."""
    import pandas
    files = {}
    for name in names:
        hits = glob.glob(os.path.join(folder, "**", name + ".parquet"), recursive=True)
        if hits:
            df = pandas.read_parquet(hits[0])
            if name in ("stats", "rank_trace", "grouped_trace"):
                df = df.reset_index()
            header = [str(c) for c in df.columns]
            files[name] = (header, [{h: cell(v) for h, v in zip(header, r)} for r in df.itertuples(index=False)])
    return files or None


def read_our_pace(prefix, name):
    """nvscope's files of a recipe of several, PREFIX_NAME.FILE.csv, as read_pace gives nsys's."""
    files = {}
    for f in files_of(name)[0]:
        path = "%s_%s.%s.csv" % (prefix, name, f)
        if os.path.exists(path):
            with open(path, newline="") as fh:
                reader = csv.reader(fh)
                header = next(reader, [])
                files[f] = (header, [dict(zip(header, r)) for r in reader])
    return files


def compare_pace(name, ours, theirs):
    """Per file: the same columns (stats' units cut as column() cuts them), the same number of
    rows, and the loose columns within the tolerance (the runs are separate processes)."""
    d = {"header_equal": True, "rows_nvscope": 0, "rows_nsys": 0, "only_nvscope": [], "only_nsys": [], "time_mismatches": []}
    names, loose = files_of(name)
    for f in names:
        if f not in theirs or f not in ours:  # nsys writes nothing where it finds no instance
            if (f in theirs and theirs[f][1]) or (f in ours and ours[f][1]):
                d["only_nsys" if f in theirs else "only_nvscope"].append([f])
            continue
        (ha, ra), (hb, rb) = ours[f], theirs[f]
        if [column(h) for h in ha] != [column(h) for h in hb]:
            d["header_equal"] = False
            d.setdefault("headers", {})[f] = [ha, hb]
        d["rows_nvscope"], d["rows_nsys"] = max(d["rows_nvscope"], len(ra)), max(d["rows_nsys"], len(rb))
        if len(ra) != len(rb):
            d["only_nvscope" if len(ra) > len(rb) else "only_nsys"].append([f, abs(len(ra) - len(rb))])
        for i, (a, b) in enumerate(zip(ra, rb)):
            for c in loose.get(f, []):
                if f == "pace_delta" and i == 0:
                    continue  # from each run's own session start
                x = next((a[h] for h in a if column(h) == c), None)
                y = next((b[h] for h in b if column(h) == c), None)
                if not close(x, y, "Overlap" in c):
                    d["time_mismatches"].append([f, i, c, x, y])
    return d


def visible(header):
    return [h for h in header if h not in ("Rank", "Row#") and not h.startswith("_")]


def keyed(rows, keys):
    """Rows by (key columns, rank among equal keys by start)."""
    out, seen = {}, {}
    for r in sorted(rows, key=lambda r: float(r.get("Start") or 0)):  # stable: without Start, the file's order
        k = tuple(r.get(c, "") for c in keys)
        seen[k] = seen.get(k, -1) + 1
        out[k + (str(seen[k]),)] = r
    return out


def close(a, b, percent):
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    if percent:
        return abs(x - y) <= PERCENT_POINTS
    return abs(x - y) <= max(ABSOLUTE_NS, RELATIVE * max(abs(x), abs(y)))


def compare_recipe(name, ours, theirs):
    keys, times, percents = KEYS[name]
    (ha, ra), (hb, rb) = ours, theirs
    a, b = keyed(ra, keys), keyed(rb, keys)
    mismatches = [[list(k), c, a[k].get(c), b[k].get(c)] for k in sorted(set(a) & set(b)) for c in times + percents
                  if not close(a[k].get(c), b[k].get(c), c in percents)]
    return {"header_equal": visible(ha) == visible(hb), "header_nvscope": ha, "header_nsys": hb,
            "rows_nvscope": len(a), "rows_nsys": len(b),
            "only_nvscope": [list(k) for k in sorted(set(a) - set(b))], "only_nsys": [list(k) for k in sorted(set(b) - set(a))],
            "time_mismatches": mismatches}


def nsys_rows(nsys, rep, item, out, log):
    """nsys's rows of one recipe item NAME[:k=v...]: the recipe's parquet, else the rule's CSV."""
    name, *params = item.split(":")
    folder = os.path.join(out, "nsys_recipe_" + name)
    options = sum([["--" + p.split("=")[0], p.split("=", 1)[1]] for p in params], [])
    if run([nsys, "recipe", name, "--input", rep + ".nsys-rep", "--output", folder, "--force-overwrite"] + options, log) == 0:
        try:
            several = name.endswith("_pace") or name in MULTI_FILES
            got = read_pace(folder, files_of(name)[0]) if several else read_parquet(folder)
            if got is not None:
                return got, "nsys recipe"
            if several:  # no rule behind these recipes: nothing found
                return {}, "nsys recipe (no output)"
        except Exception as e:  # no pandas or pyarrow here: the rule's CSV holds the same rows
            with open(log, "a") as f:
                f.write("parquet not read: %s\n" % e)
    prefix = os.path.join(out, "nsys_rule")
    if run([nsys, "analyze", "--force-export=true", "--rule", item, "--format", "csv", "--output", prefix, rep + ".nsys-rep"], log) != 0:
        return None, "nsys analyze failed"
    hits = sorted(glob.glob("%s_%s*.csv" % (prefix, name)))
    return (read_csv(hits[0]), "nsys analyze") if hits else (([], []), "nsys analyze (no rows)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nsys")
    ap.add_argument("--recipes", default=RECIPES)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--results", help="a fidelity.json to add recipes_compared, recipes_equal and the per-recipe detail to")
    args = ap.parse_args()
    items = [r for r in args.recipes.split(",") if r]
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "log.txt")
    open(log, "w").close()
    ours = os.path.join(args.out, "nvscope")
    rc = run([args.workload, "--recipes", ours, ",".join(items)], log)
    if rc == 77:
        print("SKIP: no CUDA device (fidelity needs a GPU)")
        return 77
    if rc != 0:
        print("compare_recipes: the collector run failed; see " + log)
        return 1
    nsys = find_nsys(args.nsys)
    if not nsys:
        print("SKIP: nsys not found (put it on PATH or set NSYS)")
        return 77
    rep = os.path.join(args.out, "nsys")
    if run([nsys, "profile", "--trace=cuda,nvtx", "--cuda-graph-trace=node", "--force-overwrite=true", "-o", rep, args.workload, "--plain"], log) != 0:
        print("compare_recipes: nsys profile failed; see " + log)
        return 1
    detail, equal, compared = {}, 0, 0
    for item in items:
        name = item.split(":")[0]
        theirs, source = nsys_rows(nsys, rep, item, args.out, log)
        pace = name.endswith("_pace") or name in MULTI_FILES
        mine = "%s_%s%s.csv" % (ours, name, "." + files_of(name)[0][-1] if pace else "")
        if theirs is None or not os.path.exists(mine):
            detail[name] = {"error": source if theirs is None else "nvscope wrote no " + mine}
            continue
        if pace:
            d = compare_pace(name, read_our_pace(ours, name), theirs if isinstance(theirs, dict) else {})
        else:
            d = compare_recipe(name, read_csv(mine), theirs)
        d["nsys_source"] = source
        if d["rows_nvscope"] == 0 and d["rows_nsys"] == 0:  # the workload made nothing it selects
            d["compared"] = False
            detail[name] = d
            print("%-18s not compared: no rows on either side (%s)" % (name, source))
            continue
        compared += 1
        d["equal"] = d["header_equal"] and not d["only_nvscope"] and not d["only_nsys"] and not d["time_mismatches"]
        equal += d["equal"]
        detail[name] = d
        print("%-18s %s  rows nvscope %d, nsys %d (%s)" % (name, "equal" if d["equal"] else "DIFFERS", d["rows_nvscope"], d["rows_nsys"], source))
    print(json.dumps({"recipes_compared": compared, "recipes_equal": equal}))
    if args.results:
        result = {}
        if os.path.exists(args.results):
            with open(args.results) as f:
                result = json.load(f)
        result.setdefault("metrics", {})
        result["metrics"]["recipes_compared"] = compared
        result["metrics"]["recipes_equal"] = equal
        result.setdefault("context", {})  # bench/results files: figures in metrics, the rest in context
        result["context"]["recipes_detail"] = detail
        result["context"]["recipes_command"] = "bench/fidelity/recipes_vs_nsys.sh"
        with open(args.results, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 1 if (args.check and equal != compared) else 0


if __name__ == "__main__":
    sys.exit(main())
