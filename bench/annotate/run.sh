#!/usr/bin/env bash
# Runs annotate_bench three times (no NVTX tool; the recorder counting only; the recorder
# logging every call) and writes
# bench/results/annotation.json. Usage: bench/annotate/run.sh [build-dir]
set -euo pipefail
build=${1:-build/cpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=$build/bench/annotate/annotate_bench
tool=$build/tests/nvtx_recorder/libnvscope_nvtx_recorder.so
for f in "$bench" "$tool"; do
  [ -e "$f" ] || { echo "run.sh: $f not found: build annotate_bench and nvscope_nvtx_recorder first" >&2; exit 1; }
done
out=$(mktemp -d)
args=(--benchmark_repetitions=9 --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true
      --benchmark_format=json)
env -u NVTX_INJECTION64_PATH "$bench" "${args[@]}" --benchmark_out="$out/no_tool.json" > /dev/null
NVTX_INJECTION64_PATH="$tool" NVSCOPE_RECORDER_COUNT_ONLY=1 \
  "$bench" "${args[@]}" --benchmark_out="$out/counting_tool.json" > /dev/null
NVTX_INJECTION64_PATH="$tool" NVSCOPE_RECORDER_MAX_EVENTS=100000 \
  "$bench" "${args[@]}" --benchmark_out="$out/tool.json" > /dev/null
python3 "$root/bench/annotate/make_results.py" "$out/no_tool.json" "$out/counting_tool.json" "$out/tool.json" \
  "$root/bench/results/annotation" "bench/annotate/run.sh $build"
rm -rf "$out"
