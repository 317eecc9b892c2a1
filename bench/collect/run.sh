#!/usr/bin/env bash
# The collector's GPU run, in one go (GPU machine, from the repository root):
#   build -> collector tests (ctest) -> probe: collector vs nsys on the same program (instance
#   counts, medians) -> probe under nsys / ncu / compute-sanitizer (refused in one line, the
#   program runs on, NVTX still reaches nsys) -> launch-overhead benchmark, and the same loop
#   under nsys -> example 03 -> bench results JSON -> a short table last.
# Usage: COMMIT=<short hash> OUT=<folder> bench/collect/run.sh
# NSYS may name the nsys binary; LD_LIBRARY_PATH must reach the libraries nsys's report
# conversion needs (see ../shared/gpu/README.md).
set -u
OUT=${OUT:-/tmp/nvscope-collector}
mkdir -p "$OUT"
ROOT=$PWD
B=${BUILD:-build/collector-gpu}
LOG=$OUT/all.log
: > "$LOG"
NSYS=${NSYS:-$(command -v nsys || echo /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys)}
WORK=$(mktemp -d)
say() { echo "== $*" | tee -a "$LOG"; }

say "build"
cmake --preset gpu -B "$B" -DNVSCOPE_COMPONENTS="collect;analyze;export" >> "$LOG" 2>&1 &&
cmake --build "$B" -j16 --target collector_host collector_no_cupti collector_gpu collector_probe collect_bench 03_in_process >> "$LOG" 2>&1
if [ $? -ne 0 ]; then tail -40 "$LOG"; exit 1; fi
PROBE=$ROOT/$B/tests/collect/collector_probe

say "ctest"
ctest --test-dir "$B" -R "collector" --output-on-failure >> "$LOG" 2>&1
CTEST_RC=$?
grep -E "tests passed|Passed|Failed|\*\*\*" "$LOG" | tail -12
# The GPU tests once more with each non-default launch source (collector_options::launches).
for src in both activity; do
  say "gpu tests, launch source $src"
  NVSCOPE_TEST_LAUNCH_SOURCE=$src "$B/tests/collect/collector_gpu" >> "$LOG" 2>&1
  echo "rc=$?" > "$WORK/gpu_tests_$src.rc"
done
"$B/tests/collect/collector_gpu" -tc='every launch source*' -s 2>&1 | grep -E "MESSAGE|source [0-9]:" >> "$LOG"

say "probe: collector"
(cd "$WORK" && "$PROBE" --csv "$WORK/probe_nvscope.csv") >> "$LOG" 2>&1
say "probe: nsys (not collected in-process)"
(cd "$WORK" && "$NSYS" profile --trace=cuda,nvtx -f true -o "$WORK/probe_plain" "$PROBE" --plain) >> "$LOG" 2>&1
"$NSYS" stats --report cuda_gpu_kern_sum --format csv "$WORK/probe_plain.nsys-rep" > "$WORK/probe_nsys_kern.csv" 2>> "$LOG"
say "probe: collector under nsys (expect a one-line refusal; nsys still gets the ranges)"
(cd "$WORK" && "$NSYS" profile --trace=cuda,nvtx -f true -o "$WORK/probe_both" "$PROBE") > "$WORK/under_nsys.log" 2>&1
cat "$WORK/under_nsys.log" >> "$LOG"
"$NSYS" stats --report nvtx_sum --format csv "$WORK/probe_both.nsys-rep" > "$WORK/probe_both_nvtx.csv" 2>> "$LOG"
say "probe: under ncu"
ncu --clock-control none -c 1 "$PROBE" > "$WORK/under_ncu.log" 2>&1; echo "rc=$?" >> "$WORK/under_ncu.log"
cat "$WORK/under_ncu.log" >> "$LOG"
say "probe: under compute-sanitizer"
compute-sanitizer --tool memcheck "$PROBE" > "$WORK/under_sanitizer.log" 2>&1; echo "rc=$?" >> "$WORK/under_sanitizer.log"
cat "$WORK/under_sanitizer.log" >> "$LOG"

# Each launch mode in a fresh process (CUPTI, once enabled, leaves a process slower), in
# interleaved rounds: ROUNDS x NVSCOPE_BENCH_REPS samples per mode.
MODES="plain cupti_min nvscope nvscope_kernels cupti_kinds cupti_cb_runtime cupti_cb_driver cupti_api_act nvscope_driver_cb nvscope_both_cb nvscope_api_activity cupti_k_memcpy cupti_k_memset cupti_k_sync nvscope_sync_activity"
say "bench: fresh process per mode, ${ROUNDS:-3} interleaved rounds"
for r in $(seq 1 "${ROUNDS:-3}"); do
  for m in $MODES; do
    CUDA_MODULE_LOAD=EAGER NVSCOPE_BENCH_REPS=${REPS:-2} "$B/bench/collect/collect_bench" --benchmark_filter="BM_launch/$m/" \
      --benchmark_out="$WORK/fresh_${r}_$m.json" --benchmark_out_format=json >> "$LOG" 2>&1
  done
done
python3 -c "import json,glob,sys; bs=[b for f in sorted(glob.glob(sys.argv[1]+'/fresh_*.json')) for b in json.load(open(f))['benchmarks']]; json.dump({'benchmarks':bs},open(sys.argv[2],'w'),indent=1)" "$WORK" "$OUT/bench_fresh.json"
say "bench: all modes in one process, in order (plain_again after CUPTI), and the adapter"
CUDA_MODULE_LOAD=EAGER NVSCOPE_BENCH_REPS=3 "$B/bench/collect/collect_bench" --benchmark_out="$OUT/bench.json" --benchmark_out_format=json >> "$LOG" 2>&1
say "bench: plain loop under nsys"
(cd "$WORK" && CUDA_MODULE_LOAD=EAGER "$NSYS" profile --trace=cuda,nvtx -f true -o "$WORK/bench_nsys" \
  "$ROOT/$B/bench/collect/collect_bench" --benchmark_filter='BM_launch/plain/' \
  --benchmark_out="$OUT/bench_nsys.json" --benchmark_out_format=json) >> "$LOG" 2>&1

say "example 03"
(cd "$WORK" && "$ROOT/$B/examples/03_in_process/03_in_process") > "$OUT/example_03.txt" 2>&1
head -c 3000 "$WORK/trace.json" > "$OUT/example_03_files.txt" 2>/dev/null
{ echo; echo "---- cuda_gpu_kern_sum.csv"; cat "$WORK/cuda_gpu_kern_sum.csv"; echo "---- stacks.folded"; cat "$WORK/stacks.folded"; } >> "$OUT/example_03_files.txt" 2>/dev/null

say "results"
COMMIT=${COMMIT:-unknown} CTEST_RC=$CTEST_RC WORK=$WORK OUT=$OUT python3 - <<'EOF' 2>&1 | tee -a "$LOG"
import csv, io, json, os, re, statistics, subprocess
W, O = os.environ["WORK"], os.environ["OUT"]

def table(path, first_col):
    try:
        text = open(path).read()
    except OSError:
        return []
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if l.strip('"').startswith(first_col):
            return list(csv.DictReader(io.StringIO("\n".join(lines[i:]))))
    return []

norm = lambda s: re.sub(r"\s+", "", s)
ours = {norm(r["name"]): r for r in table(f"{W}/probe_nvscope.csv", "name")}
theirs = {norm(r["Name"]): r for r in table(f"{W}/probe_nsys_kern.csv", "Time")}
errs, counts_equal = [], bool(ours) and set(ours) == set(theirs)
for k, r in ours.items():
    t = theirs.get(k)
    if t is None:
        counts_equal = False
        continue
    counts_equal &= int(r["instances"]) == int(t["Instances"])
    errs.append(abs(float(r["median_ns"]) - float(t["Med (ns)"])) / float(t["Med (ns)"]))
median_err = max(errs) if errs else None

def med(path, name, counter):
    try:
        bs = json.load(open(path))["benchmarks"]
    except Exception:
        return None
    v = [b[counter] for b in bs if b.get("run_type") == "iteration" and b["name"].startswith(name + "/") and counter in b and not b.get("error_occurred")]
    return statistics.median(v) if v else None

B, F, BN = f"{O}/bench.json", f"{O}/bench_fresh.json", f"{O}/bench_nsys.json"
m = {
    # fresh process per mode, interleaved rounds
    "launch_us_plain": med(F, "BM_launch/plain", "launch_us"),
    "launch_us_cupti_min": med(F, "BM_launch/cupti_min", "launch_us"),
    "launch_us_nvscope": med(F, "BM_launch/nvscope", "launch_us"),
    "launch_us_nvscope_kernels_only": med(F, "BM_launch/nvscope_kernels", "launch_us"),
    "launch_us_nvscope_driver_cb": med(F, "BM_launch/nvscope_driver_cb", "launch_us"),
    "launch_us_nvscope_both_cb": med(F, "BM_launch/nvscope_both_cb", "launch_us"),
    "launch_us_nvscope_api_activity": med(F, "BM_launch/nvscope_api_activity", "launch_us"),
    "launch_us_nvscope_sync_activity": med(F, "BM_launch/nvscope_sync_activity", "launch_us"),
    "launch_us_cupti_kinds": med(F, "BM_launch/cupti_kinds", "launch_us"),
    "launch_us_cupti_cb_runtime": med(F, "BM_launch/cupti_cb_runtime", "launch_us"),
    "launch_us_cupti_cb_driver": med(F, "BM_launch/cupti_cb_driver", "launch_us"),
    "launch_us_cupti_api_activity": med(F, "BM_launch/cupti_api_act", "launch_us"),
    "launch_us_cupti_memcpy_kind": med(F, "BM_launch/cupti_k_memcpy", "launch_us"),
    "launch_us_cupti_memset_kind": med(F, "BM_launch/cupti_k_memset", "launch_us"),
    "launch_us_cupti_sync_kind": med(F, "BM_launch/cupti_k_sync", "launch_us"),
    "driver_callbacks_per_runtime_launch": med(F, "BM_launch/cupti_cb_driver", "cb_driver_per_launch"),
    "nvscope_driver_calls_per_launch": med(F, "BM_launch/nvscope", "cb_driver_per_launch"),
    "nvscope_runtime_calls_per_launch": med(F, "BM_launch/nvscope", "cb_runtime_per_launch"),
    # one process, modes in order
    "launch_us_plain_one_process": med(B, "BM_launch/plain", "launch_us"),
    "launch_us_cupti_min_one_process": med(B, "BM_launch/cupti_min", "launch_us"),
    "launch_us_nvscope_one_process": med(B, "BM_launch/nvscope", "launch_us"),
    "launch_us_plain_after_cupti": med(B, "BM_launch/plain_again", "launch_us"),
    "launch_us_nsys": med(BN, "BM_launch/plain", "launch_us"),
    "bytes_per_kernel_record": med(B, "BM_launch/nvscope", "bytes_per_kernel_record"),
    "bytes_per_kernel_with_launch": med(B, "BM_launch/nvscope", "bytes_per_kernel_with_launch"),
    "analysis_records_per_s": med(B, "BM_launch/nvscope", "analysis_records_per_s"),
    "kernels_recorded_per_run": med(B, "BM_launch/nvscope", "kernels_recorded"),
    "dropped_per_run": med(B, "BM_launch/nvscope", "dropped"),
    "kernel_median_err_vs_nsys": median_err,
    "instance_counts_equal_nsys": 1 if counts_equal else 0,
}
def ratio(a, b):
    return m[a] / m[b] if m.get(a) and m.get(b) else None
m["overhead_vs_plain"] = ratio("launch_us_nvscope", "launch_us_plain")
m["cupti_min_vs_plain"] = ratio("launch_us_cupti_min", "launch_us_plain")
m["overhead_vs_cupti_min"] = ratio("launch_us_nvscope", "launch_us_cupti_min")
m["overhead_kernels_only_vs_cupti_min"] = ratio("launch_us_nvscope_kernels_only", "launch_us_cupti_min")
m["overhead_vs_nsys"] = ratio("launch_us_nvscope", "launch_us_nsys")
for v in ("driver_cb", "both_cb", "api_activity", "sync_activity"):
    m[f"overhead_{v}_vs_cupti_min"] = ratio(f"launch_us_nvscope_{v}", "launch_us_cupti_min")
m["overhead_one_process_vs_cupti_min"] = ratio("launch_us_nvscope_one_process", "launch_us_cupti_min_one_process")

def has(path, pat):
    try:
        return re.search(pat, open(path).read()) is not None
    except OSError:
        return False
nv = table(f"{W}/probe_both_nvtx.csv", "Time")
step_in_nsys = sum(int(r.get("Instances", 0)) for r in nv if "step" in r.get("Range", ""))
checks = {
    "ctest": os.environ["CTEST_RC"] == "0",
    "nsys: collector refused in one line": has(f"{W}/under_nsys.log", r"nvscope: collector: .*(another profiler|MULTIPLE)") or has(f"{W}/under_nsys.log", "probe: collector started"),
    "nsys: ranges still reach nsys (step x50)": step_in_nsys == 50,
    "ncu: refused in one line, exit 0": has(f"{W}/under_ncu.log", r"nvscope: collector: .*another profiler") and has(f"{W}/under_ncu.log", r"rc=0"),
    "compute-sanitizer: refused, exit 0": has(f"{W}/under_sanitizer.log", r"nvscope: collector: .*another profiler") and has(f"{W}/under_sanitizer.log", r"rc=0"),
    "nsys: instance counts equal": counts_equal,
    "gpu tests, launch source both": has(f"{W}/gpu_tests_both.rc", r"rc=0"),
    "gpu tests, launch source activity": has(f"{W}/gpu_tests_activity.rc", r"rc=0"),
}
dev = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().splitlines()
res = {"topic": "collector", "device": dev[0] if dev else "unknown", "date": __import__("datetime").date.today().isoformat(), "commit": os.environ["COMMIT"],
       "command": "COMMIT=<hash> OUT=<dir> bench/collect/run.sh", "metrics": {k: v for k, v in m.items() if v is not None},
       "checks": checks, "nsys_collector_line": open(f"{W}/under_nsys.log").read().count("nvscope: collector")}
json.dump(res, open(f"{O}/collector.json", "w"), indent=2)
print("\n%-44s %s" % ("metric", "value"))
for k, v in m.items():
    print("%-44s %s" % (k, "n/a" if v is None else (f"{v:.4g}" if isinstance(v, float) else v)))
for k, v in checks.items():
    print("%-44s %s" % (k, "ok" if v else "FAILED"))
EOF
cat "$WORK"/under_*.log > "$OUT/under_tools.log" 2>/dev/null
cat "$WORK/probe_nvscope.csv" "$WORK/probe_nsys_kern.csv" "$WORK/probe_both_nvtx.csv" > "$OUT/probe_tables.txt" 2>/dev/null
