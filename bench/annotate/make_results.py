#!/usr/bin/env python3
"""Turns the two Google Benchmark JSON files of run.sh into bench/results/annotation.{json,md}."""
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
        "range_vs_raw_ratio": m["nvscope_range"] / m["raw_push_pop"],
        "func_range_vs_raw_ratio": m["nvscope_func_range"] / m["raw_push_pop"],
        "range_vs_raw_registered_ratio": m["nvscope_range"] / m["raw_domain_registered"],
        # With a tool attached (the counting one): formatting, lookup and the NVTX call.
        # With no tool at all nvscope skips the formatting: formatted_range_no_tool_ns.
        "formatted_range_ns": c["nvscope_formatted_range"],
        "formatted_range_no_tool_ns": m["nvscope_formatted_range"],
        "disabled_range_ns": m["nvscope_range_compiled_out"],
        "empty_loop_ns": m["empty_loop"],
        "runtime_disabled_range_ns": m["nvscope_range_runtime_disabled"],
        "runtime_name_range_ns": m["nvscope_runtime_name_range"],
        "raw_push_pop_ns": m["raw_push_pop"],
        "raw_domain_registered_ns": m["raw_domain_registered"],
        "nvtx3_scoped_range_ns": m["nvtx3_scoped_range"],
        "range_ns": m["nvscope_range"],
        "func_range_ns": m["nvscope_func_range"],
        "counting_tool_range_vs_raw_ratio": c["nvscope_range"] / c["raw_push_pop"],
        "counting_tool_func_range_vs_raw_ratio": c["nvscope_func_range"] / c["raw_push_pop"],
        "counting_tool_range_vs_raw_registered_ratio": c["nvscope_range"] / c["raw_domain_registered"],
        "counting_tool_raw_push_pop_ns": c["raw_push_pop"],
        "counting_tool_raw_domain_registered_ns": c["raw_domain_registered"],
        "counting_tool_nvtx3_scoped_range_ns": c["nvtx3_scoped_range"],
        "counting_tool_range_ns": c["nvscope_range"],
        "counting_tool_func_range_ns": c["nvscope_func_range"],
        "counting_tool_runtime_name_range_ns": c["nvscope_runtime_name_range"],
        "tool_raw_push_pop_ns": t["raw_push_pop"],
        "tool_raw_domain_registered_ns": t["raw_domain_registered"],
        "tool_nvtx3_scoped_range_ns": t["nvtx3_scoped_range"],
        "tool_range_ns": t["nvscope_range"],
        "tool_func_range_ns": t["nvscope_func_range"],
        "tool_formatted_range_ns": t["nvscope_formatted_range"],
        "tool_range_vs_raw_ratio": t["nvscope_range"] / t["raw_push_pop"],
        "tool_range_vs_raw_registered_ratio": t["nvscope_range"] / t["raw_domain_registered"],
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
    names = ["raw_push_pop", "raw_domain_registered", "nvtx3_scoped_range", "nvscope_range",
             "nvscope_func_range", "nvscope_formatted_range", "nvscope_runtime_name_range",
             "nvscope_range_runtime_disabled", "nvscope_range_compiled_out", "empty_loop"]
    with open(stem + ".md", "w") as f:
        f.write("# Annotation overhead\n\n")
        f.write(f"{result['device']}, commit {commit}, `{command}`. Median CPU time of 9 repetitions, "
                "ns per range (open + close; 8 ranges from 8 call sites per loop iteration).\n\n")
        f.write("| benchmark | no tool (ns) | counting tool (ns) | recording tool (ns) |\n| --- | ---: | ---: | ---: |\n")
        for n in names:
            f.write(f"| {n} | {m[n]:.2f} | {c[n]:.2f} | {t[n]:.2f} |\n")
        f.write("\n| metric | value | target |\n| --- | ---: | --- |\n")
        f.write(f"| range_vs_raw_ratio | {metrics['range_vs_raw_ratio']:.3f} | <= 1.05 |\n")
        f.write(f"| func_range_vs_raw_ratio | {metrics['func_range_vs_raw_ratio']:.3f} | <= 1.05 |\n")
        f.write(f"| range_vs_raw_registered_ratio | {metrics['range_vs_raw_registered_ratio']:.3f} | |\n")
        f.write(f"| counting_tool_range_vs_raw_ratio | {metrics['counting_tool_range_vs_raw_ratio']:.3f} | |\n")
        f.write(f"| counting_tool_func_range_vs_raw_ratio | {metrics['counting_tool_func_range_vs_raw_ratio']:.3f} | |\n")
        f.write(f"| counting_tool_range_vs_raw_registered_ratio | {metrics['counting_tool_range_vs_raw_registered_ratio']:.3f} | |\n")
        f.write(f"| formatted_range_ns | {metrics['formatted_range_ns']:.2f} | |\n")
        f.write(f"| disabled_range_ns | {metrics['disabled_range_ns']:.3f} | = empty loop ({metrics['empty_loop_ns']:.3f}) |\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
