#!/usr/bin/env bash
# Times the Chrome trace writer before and after issue 8, and streamed to /dev/null as nvscope
# run writes it, in fresh processes of one binary, interleaved (the order rotates each round),
# and writes bench/results/export.json.
# Each process makes 3 calls; make_results.py keeps the first call and the median of the 3,
# and writes the median over rounds with its spread. Raw timings: <build-dir>/export.runs.jsonl.
# Usage: bench/export/run.sh [build-dir] [rounds]   (build chrome_trace_bench first)
set -euo pipefail
build=${1:-build/cpu}
rounds=${2:-7}
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=$build/bench/export/chrome_trace_bench
[ -x "$bench" ] || { echo "run.sh: $bench not found: build the chrome_trace_bench target first" >&2; exit 1; }
"$bench" check
out=$(mktemp)
load_before=$(cut -d' ' -f1 /proc/loadavg)
impls=(before after after_small_pages streamed)
for ((r = 0; r < rounds; ++r)); do
  for ((k = 0; k < ${#impls[@]}; ++k)); do
    "$bench" "${impls[$(((r + k) % ${#impls[@]}))]}" 3 >> "$out"
  done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)
cp "$out" "$build/export.runs.jsonl"
python3 "$root/bench/export/make_results.py" "$out" "$root/bench/results/export" "bench/export/run.sh $build $rounds" \
  "$load_before" "$load_after"
rm -f "$out"
