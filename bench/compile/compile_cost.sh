#!/usr/bin/env bash
# What including nvscope costs a translation unit: wall seconds and peak memory of g++ -O2 -c
# (GNU time), the median of ROUNDS fresh compiles each, the three files interleaved a round:
#   analysis_tu        includes <nvscope/analysis.hpp> and <nvscope/export.hpp>, calls analyze
#                      and to_text (what every file of a program that reads a trace pays)
#   implementation_tu  the same with NVSCOPE_IMPLEMENTATION: the program's one file that
#                      compiles the definitions (docs/analysis.md, "Building")
#   annotate_tu        includes <nvscope/annotate.hpp> and opens one range
# Writes bench/results/compile.json. Run from the repository root on a quiet machine:
#   bash bench/compile/compile_cost.sh [ROUNDS]
set -euo pipefail
rounds=${1:-3}
for tool in g++ python3 /usr/bin/time; do
  command -v "$tool" > /dev/null || { echo "compile_cost.sh: $tool not found (Debian: apt-get install g++ python3 time)" >&2; exit 1; }
done
cuda_include=${CUDA_INCLUDE:-/usr/local/cuda/include}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/analysis_tu.cpp" << 'CPP'
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>
#include <cstdio>
void report(const nvscope::trace& t) { std::fputs(nvscope::to_text(nvscope::analyze(t), t).c_str(), stdout); }
CPP
{ echo '#define NVSCOPE_IMPLEMENTATION'; cat "$work/analysis_tu.cpp"; } > "$work/implementation_tu.cpp"
cat > "$work/annotate_tu.cpp" << 'CPP'
#include <nvscope/annotate.hpp>
void step() { NVSCOPE_RANGE("step"); }
CPP
files=(analysis_tu implementation_tu annotate_tu)
: > "$work/samples"
for ((r = 0; r < rounds; ++r)); do
  for f in "${files[@]}"; do
    /usr/bin/time -f "$f %e %M" -a -o "$work/samples" g++ -std=c++17 -O2 -Iinclude -I"$cuda_include" -c "$work/$f.cpp" -o "$work/$f.o"
  done
done
python3 - "$work/samples" "$rounds" "$(git rev-parse --short HEAD)" "$(g++ -dumpfullversion)" "$(nproc)" << 'PY'
import json, statistics, sys, datetime
samples, rounds, commit, gxx, cores = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
by = {}
for line in open(samples):
    name, s, kb = line.split()
    by.setdefault(name, []).append((float(s), int(kb)))
metrics = {}
for name, v in by.items():
    secs = [x[0] for x in v]; mb = [x[1] / 1024 for x in v]
    metrics[name + "_s"] = round(statistics.median(secs), 2)
    metrics[name + "_mb"] = round(statistics.median(mb), 1)
    metrics[name + "_s_spread"] = round(max(secs) - min(secs), 2)
out = {"topic": "compile", "device": f"CPU, {cores} cores (no GPU)", "date": datetime.date.today().isoformat(), "commit": commit,
       "command": f"bash bench/compile/compile_cost.sh {rounds}",
       "metrics": metrics, "context": {"compiler": f"g++ {gxx} -std=c++17 -O2 -c", "rounds": rounds,
                                        "figures": "median wall seconds and peak resident MB (GNU time) of fresh compiles, files interleaved a round"}}
json.dump(out, open("bench/results/compile.json", "w"), indent=2)
open("bench/results/compile.json", "a").write("\n")
for k, v in metrics.items(): print(f"{k:28s} {v}")
PY
