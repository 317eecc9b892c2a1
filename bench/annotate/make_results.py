#!/usr/bin/env python3
"""Turns the three Google Benchmark JSON files of run.sh into bench/results/annotation.{json,md}."""
import json
import subprocess
import sys


RANGES_PER_ITERATION = 8  # NVSCOPE_BENCH_X8 in annotate_bench.cpp


def medians(path):
    data = json.load(open(path))
    out = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            # ns per range: each iteration opens and closes RANGES_PER_ITERATION ranges
            out[b["run_name"]] = b["cpu_time"] / RANGES_PER_ITERATION
    return data["context"], out


# The benchmarks reported under every tool condition.
COMMON = ["raw_push_pop", "raw_domain_registered", "nvtx3_scoped_range", "nvscope_range", "nvscope_func_range"]


def tool_figures(prefix, med, benches, func_ratio):
    """One tool condition's figures, keys starting with `prefix`: nvscope's range against the raw
    NVTX pair (plain and registered; NVSCOPE_FUNC_RANGE too when `func_ratio`), and ns per range
    of each of `benches` (named without their nvscope_ prefix)."""
    out = {prefix + "range_vs_raw_ratio": med["nvscope_range"] / med["raw_push_pop"]}
    if func_ratio:
        out[prefix + "func_range_vs_raw_ratio"] = med["nvscope_func_range"] / med["raw_push_pop"]
    out[prefix + "range_vs_raw_registered_ratio"] = med["nvscope_range"] / med["raw_domain_registered"]
    for b in benches:
        out[prefix + b.removeprefix("nvscope_") + "_ns"] = med[b]
    return out


def main():
    no_tool_path, counting_path, tool_path, stem, command = sys.argv[1:6]
    context, m = medians(no_tool_path)
    _, c = medians(counting_path)
    _, t = medians(tool_path)
    cpu = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    metrics = {
        **tool_figures("", m, COMMON + ["nvscope_runtime_name_range"], func_ratio=True),
        # With a tool attached (the counting one): formatting, lookup and the NVTX call.
        # With no tool at all nvscope skips the formatting: formatted_range_no_tool_ns.
        "formatted_range_ns": c["nvscope_formatted_range"],
        "formatted_range_no_tool_ns": m["nvscope_formatted_range"],
        "disabled_range_ns": m["nvscope_range_compiled_out"],
        "empty_loop_ns": m["empty_loop"],
        "runtime_disabled_range_ns": m["nvscope_range_runtime_disabled"],
        **tool_figures("counting_tool_", c, COMMON + ["nvscope_runtime_name_range"], func_ratio=True),
        **tool_figures("tool_", t, COMMON + ["nvscope_formatted_range"], func_ratio=False),
    }
    metrics = {k: round(v, 4) for k, v in metrics.items()}
    result = {
        "topic": "annotation",
        "device": f"{cpu} (CPU; {context.get('num_cpus')} cores; NVTX needs no GPU)",
        "date": "2026-11-21",
        "commit": commit,
        "command": command,
        "metrics": metrics,
    }
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
