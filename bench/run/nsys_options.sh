#!/usr/bin/env bash
# GPU machine: nsys's option names on `nvscope run` (issue 48) against tests/run/gpu_program.cu
# (6 steps step_0..step_5 of two kernels each, cudaProfilerStart before step 2, Stop after step 3).
# Builds with bench/run/gpu_run.sh's build stage, then checks: -o/-t/--stats (reports on stdout),
# -f (an existing stem refused with exit 2 before the program starts; -f writes over it),
# --capture-range-end on the profiler pair and on NVTX ranges (kernel counts), -t osrt and
# --cuda-graph-trace=graph refused. Exit 0 when every check holds; one line a check.
#   OUT=/tmp/out bash bench/run/nsys_options.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/nsys-options-out}
B=${B:-$ROOT/build/run-gpu}
mkdir -p "$OUT"
[ -x "$B/bin/nvscope" ] && [ -x "$B/gpu_program" ] || SKIP_EXAMPLES=1 OUT="$OUT" B="$B" bash "$ROOT/bench/run/gpu_run.sh" build || exit 1
NV="$B/bin/nvscope"; PROG="$B/gpu_program"; P="$OUT/files"; rm -rf "$P"; mkdir -p "$P"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
kernels() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(sum(int(r["Instances"]) for r in s["reports"]["cuda_gpu_kern_sum"]))' "$1" 2>/dev/null || echo -1; }

timeout 120 "$NV" run -o "$P/prof" -t cuda,nvtx --stats=true -- "$PROG" 6 >"$OUT/stats.out" 2>"$OUT/stats.err"; rc=$?
check "-o -t --stats: rc 0" '[ $rc -eq 0 ]'
check "-o: files under the stem" '[ -f "$P/prof.json" ] && [ -f "$P/prof.reports.txt" ]'
check "--stats: the reports on stdout" 'grep -q cuda_gpu_kern_sum "$OUT/stats.out"'
check "-t cuda: 12 kernels" '[ "$(kernels "$P/prof.json")" = 12 ]'
timeout 120 "$NV" run -o "$P/prof" -- "$PROG" 6 >"$OUT/refused.out" 2>"$OUT/refused.err"; rc=$?
check "existing stem: rc 2, one line, program not started" '[ $rc -eq 2 ] && [ "$(wc -l <"$OUT/refused.err")" = 1 ] && ! grep -q "steps done" "$OUT/refused.out"'
timeout 120 "$NV" run -o "$P/prof" -f -- "$PROG" 6 >"$OUT/forced.out" 2>&1; rc=$?
check "-f: written over" '[ $rc -eq 0 ] && grep -q "steps done" "$OUT/forced.out"'
run_k() { local name=$1; shift; timeout 120 "$NV" run -o "$P/$name" "$@" -- "$PROG" 6 >"$OUT/$name.out" 2>&1; kernels "$P/$name.json"; }
check "cudaProfilerApi, default stop-shutdown: 4 kernels" '[ "$(run_k api --capture-range=cudaProfilerApi)" = 4 ]'
check "cudaProfilerApi, repeat: 4 kernels" '[ "$(run_k api_repeat --capture-range=cudaProfilerApi --capture-range-end=repeat)" = 4 ]'
check "--nvtx-capture=step_1: 2 kernels" '[ "$(run_k nvtx1 --nvtx-capture=step_1)" = 2 ]'
check "--nvtx-capture=step_4 none: 4 kernels (steps 4, 5)" '[ "$(run_k nvtx_none --nvtx-capture=step_4 --capture-range-end=none)" = 4 ]'
check "--nvtx-capture=step_1@*: 2 kernels" '[ "$(run_k nvtx_any "--nvtx-capture=step_1@*")" = 2 ]'
check "-d/-y: a window, rc 0" '[ "$(run_k timed -y 0 -d 1000)" = 12 ]'
timeout 60 "$NV" run -t osrt -- "$PROG" 1 >"$OUT/osrt.out" 2>&1; rc=$?
check "-t osrt: rc 2" '[ $rc -eq 2 ]'
timeout 60 "$NV" run --cuda-graph-trace=graph -- "$PROG" 1 >"$OUT/graph.out" 2>&1; rc=$?
check "--cuda-graph-trace=graph: rc 2" '[ $rc -eq 2 ]'
echo "nsys options: $fails failed"
exit $((fails != 0))
