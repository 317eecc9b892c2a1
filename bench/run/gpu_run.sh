#!/usr/bin/env bash
# `nvscope run` on the GPU machine: build, probe, compare with nsys, overhead; a table last.
#   bench/run/gpu_run.sh [stage...]   stages: build probe tests compare overhead (default: all)
# SRC: the source tree to build (default: this checkout). OUT: where logs and files go.
# nsys needs the libraries of ../shared/gpu/nsys-libs.sh in .gpu/lib (see /work/shared/gpu).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${SRC:-$ROOT}
OUT=${OUT:-$ROOT/build/run-out}
B=${B:-$ROOT/build/run-gpu}
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH="$ROOT/.gpu/lib:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$OUT"
NV="$B/bin/nvscope"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build probe tests compare overhead table)
log() { echo "== $*"; }

build() {
  log build
  cmake -S "$SRC" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DNVSCOPE_COMPONENTS="run;annotate;capture;collect;kernels" -DNVSCOPE_BUILD_BENCH=OFF >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; return 1; }
  ninja -C "$B" nvscope_cli nvscope_inject >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; return 1; }
  [ -n "${SKIP_EXAMPLES:-}" ] && return 0
  ninja -C "$B" run_test 01_annotate 02_capture_nsys 03_in_process 04_transformer_block >>"$OUT/build.log" 2>&1 \
    || { echo "some test or example targets failed to build (build.log)"; grep -m5 -B2 error "$OUT/build.log"; }
  nvcc -O2 -arch=sm_90 -I"$SRC/include" "$SRC/tests/run/gpu_program.cu" -o "$B/gpu_program" -ldl >>"$OUT/build.log" 2>&1 \
    || { tail -20 "$OUT/build.log"; return 1; }
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
}

probe() {
  log probe
  local P="$OUT/probe"; rm -rf "$P"; mkdir -p "$P"
  for how in gate; do
    log "gpu_program, start=$how"
    timeout 60 "$NV" run --output-dir="$P/$how" --outputs=all -- "$B/gpu_program" 6 3; echo "rc=$?"
    ls "$P/$how" 2>&1 | head; grep -h -A8 '"kernels"' "$P/$how"/*.json 2>/dev/null | head -3
    [ -f "$P/$how"/*.cuda_gpu_kern_sum.csv ] && cat "$P/$how"/*.cuda_gpu_kern_sum.csv "$P/$how"/*.nvtx_sum.csv
  done
  log "process tree: sh runs two programs (exit 5)"
  timeout 60 "$NV" run --output-dir="$P/tree" --name='tree_%p' -- sh -c "$B/gpu_program 3; $B/gpu_program 4 5"; echo "rc=$?"; ls "$P/tree"
  log "capture-range=cudaProfilerApi"
  timeout 60 "$NV" run --output-dir="$P/api" --capture-range=cudaProfilerApi --outputs=csv -- "$B/gpu_program" 6; echo "rc=$?"
  cat "$P/api"/*.nvtx_sum.csv
  log "steps: skip 1, active 2"
  timeout 60 "$NV" run --output-dir="$P/steps" --skip=1 --active=2 --outputs=csv -- "$B/gpu_program" 6; echo "rc=$?"
  cat "$P/steps"/*.nvtx_sum.csv
  log "nvtx capture step_4"
  timeout 60 "$NV" run --output-dir="$P/nvtx" --nvtx-capture=step_4 --outputs=csv -- "$B/gpu_program" 6; echo "rc=$?"
  cat "$P/nvtx"/*.cuda_gpu_kern_sum.csv
  log "no CUDA: python prints"
  echo piped | timeout 60 "$NV" run --output-dir="$P/none" -- python3 -c 'import sys; print("out", sys.stdin.read().strip()); sys.exit(4)'; echo "rc=$?"; ls "$P/none" 2>&1
  log "PyTorch 5 steps"
  timeout 180 "$NV" run --output-dir="$P/torch" --outputs=csv,json -- python3 "$ROOT/bench/run/train.py" --steps 5 --warmup 1; echo "rc=$?"
  cat "$P/torch"/*.nvtx_sum.csv 2>/dev/null | head; wc -l "$P/torch"/*.cuda_gpu_kern_sum.csv 2>/dev/null
  log "SIGTERM to the tool during a long run"
  "$NV" run --output-dir="$P/term" --outputs=json -- "$B/gpu_program" 200000 & local tp=$!
  sleep 4; kill -TERM $tp; wait $tp; echo "rc=$? (143 expected)"; ls "$P/term"
  log "_exit: python os._exit after CUDA"
  timeout 120 "$NV" run --output-dir="$P/exit" -- python3 -c 'import torch,os; torch.ones(1,device="cuda"); os._exit(3)'; echo "rc=$?"
  log "under nsys"
  timeout 120 "$NSYS" profile -o "$P/under_nsys" --trace=cuda,nvtx "$NV" run -- "$B/gpu_program" 3 >"$P/under_nsys.log" 2>&1; echo "rc=$?"; grep nvscope "$P/under_nsys.log"
}


tests() {
  log "ctest (run)"
  (cd "$B" && ctest -R '^run' --output-on-failure 2>&1 | tail -25)
  log "examples under nvscope run"
  for ex in 01_annotate/01_annotate 02_capture_nsys/02_capture_nsys 03_in_process/03_in_process 04_transformer_block/04_transformer_block; do
    local exe="$B/examples/$ex"; [ -x "$exe" ] || { echo "$ex: not built"; continue; }
    local name=$(basename "$ex"); local range=""
    [ "$name" = 02_capture_nsys ] && range="--capture-range=cudaProfilerApi"
    timeout 120 "$NV" run $range --output-dir="$OUT/examples" --name="$name" --outputs=json,csv --summary=file -- "$exe" >"$OUT/examples_$name.log" 2>&1
    echo "$name: rc=$? $(grep -c . "$OUT/examples/$name.cuda_gpu_kern_sum.csv" 2>/dev/null) kernel rows; $(grep '^nvscope' "$OUT/examples_$name.log" | head -3 | tr '\n' ' ')"
  done
}

# One comparison: nvscope run and nsys on the same command; compare.py's JSON in $OUT/cmp_$1.json.
compare_one() {
  local tag=$1; shift
  local D="$OUT/cmp_$tag"; rm -rf "$D"; mkdir -p "$D"
  timeout 300 "$NV" run --outputs=csv,trace --output-dir="$D" --name=nvs -- "$@" >"$D/nvscope.log" 2>&1; echo "$tag nvscope rc=$?"
  timeout 300 "$NSYS" profile --trace=cuda,nvtx $NSYS_EXTRA --force-overwrite=true -o "$D/nsys" "$@" >"$D/nsys.log" 2>&1; echo "$tag nsys rc=$?"
  "$NSYS" stats --report cuda_gpu_kern_sum,nvtx_sum,nvtx_kern_sum --format csv --force-export=true --output "$D/nsys" "$D/nsys.nsys-rep" >"$D/stats.log" 2>&1
  python3 "$ROOT/bench/run/compare.py" "$D/nvs.cuda_gpu_kern_sum.csv" "$D/nvs.nvtx_sum.csv" \
    "$D/nsys_cuda_gpu_kern_sum.csv" "$D/nsys_nvtx_sum.csv" "$D/nvs.nvtx_kern_sum.csv" "$D/nsys_nvtx_kern_sum.csv" >"$OUT/cmp_$tag.json" 2>"$D/compare.err" || cat "$D/compare.err"
  cat "$OUT/cmp_$tag.json"
  "$NSYS" export --type sqlite --force-overwrite=true -o "$D/nsys.sqlite" "$D/nsys.nsys-rep" >"$D/export.log" 2>&1
  python3 "$ROOT/bench/run/compare_configs.py" "$D/nvs.trace.json" "$D/nsys.sqlite" >"$OUT/cfg_$tag.json" 2>>"$D/compare.err" || cat "$D/compare.err"
  cat "$OUT/cfg_$tag.json"; rm -f "$D/nsys.sqlite"
}

compare() {
  log compare
  local T="$ROOT/bench/run/train.py"
  local which=" ${COMPARE:-eager graphs cupy} "
  [[ $which == *" eager "* ]] && NSYS_EXTRA="" compare_one eager python3 "$T" --steps 30
  if [[ $which == *" graphs "* ]]; then
    python3 "$T" --steps 3 --compile >/dev/null 2>&1 # fills the Inductor cache: both runs below load the same kernels
    NSYS_EXTRA="--cuda-graph-trace=node" compare_one graphs python3 "$T" --steps 30 --compile
  fi
  [[ $which == *" cupy "* ]] && NSYS_EXTRA="" compare_one cupy python3 "$ROOT/bench/run/cupy_program.py"
  return 0
}

overhead() {
  log "overhead: median step ms, fresh processes, modes interleaved"
  local T="$ROOT/bench/run/train.py" R="$OUT/overhead.txt"; : >"$R"
  for round in 1 2 3; do
    for mode in plain nvscope nsys; do
      case $mode in
        plain) python3 "$T" --steps 40 ;;
        nvscope) "$NV" run --outputs=none -- python3 "$T" --steps 40 ;;
        nsys) "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o "$OUT/ovh_nsys" python3 "$T" --steps 40 ;;
      esac 2>/dev/null | awk -v m=$mode -v r=$round '/median_step_ms/ {print r, m, $2}' >>"$R"
    done
  done
  cat "$R"
}

table() {
  log table
  python3 - "$OUT" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
def load(t, what="cmp"):  # cmp_<t>.json: compare.py's; cfg_<t>.json: compare_configs.py's
    p = os.path.join(out, f"{what}_{t}.json")
    return json.load(open(p)) if os.path.exists(p) else {}
e, g, c = load("eager"), load("graphs"), load("cupy")
cfg = lambda t: load(t, "cfg")
rows = {}
p = os.path.join(out, "overhead.txt")
if os.path.exists(p):
    for line in open(p):
        r, m, v = line.split(); rows.setdefault(m, {})[int(r)] = float(v)
ratio = lambda m: statistics.median(rows[m][r] / rows["plain"][r] for r in rows[m] if r in rows.get("plain", {})) if m in rows and "plain" in rows else None
m = {
  "pytorch_kernel_instances_equal_nsys": e.get("kernel_instances_equal"),
  "pytorch_kernel_time_err": e.get("kernel_time_err"),
  "pytorch_nvtx_rows_equal_nsys": e.get("nvtx_rows_equal"),
  "graphs_kernel_instances_equal_nsys": g.get("kernel_instances_equal"),
  "pytorch_kernel_instances_equal_nsys_exact_names": e.get("kernel_instances_equal_exact_names"),
  "graphs_kernel_instances_equal_nsys_exact_names": g.get("kernel_instances_equal_exact_names"),
  "graphs_kernel_time_err": g.get("kernel_time_err"),
  "graphs_nvtx_rows_equal_nsys": g.get("nvtx_rows_equal"),
  "graphs_kernels_in_step_nvscope": g.get("kernels_in_step_nvscope"), "graphs_kernels_in_step_nsys": g.get("kernels_in_step_nsys"),
  "pytorch_kernels_in_step_nvscope": e.get("kernels_in_step_nvscope"), "pytorch_kernels_in_step_nsys": e.get("kernels_in_step_nsys"),
  "cupy_kernel_time_err": c.get("kernel_time_err"), "cupy_nvtx_rows_equal_nsys": c.get("nvtx_rows_equal"),
  "cupy_kernel_instances_equal_nsys": c.get("kernel_instances_equal"),
  "pytorch_kernel_configs_equal_nsys": cfg("eager").get("configs_equal"),
  "graphs_kernel_configs_equal_nsys": cfg("graphs").get("configs_equal"), "graphs_kernels_configs_differing": cfg("graphs").get("kernels_differing"),
  "cupy_kernel_configs_equal_nsys": cfg("cupy").get("configs_equal"),
  "step_overhead_nvscope": ratio("nvscope"), "step_overhead_nsys": ratio("nsys"),
}
if m["step_overhead_nvscope"] and m["step_overhead_nsys"]:
    m["overhead_vs_nsys"] = m["step_overhead_nvscope"] / m["step_overhead_nsys"]
    if m["step_overhead_nsys"] > 1:
        m["excess_overhead_vs_nsys"] = (m["step_overhead_nvscope"] - 1) / (m["step_overhead_nsys"] - 1)
for k in ("plain", "nvscope", "nsys"):
    if k in rows: m[f"median_step_ms_{k}"] = statistics.median(rows[k].values())
json.dump(m, open(os.path.join(out, "metrics.json"), "w"), indent=1)
print(f"{'metric':40s} value")
for k, v in m.items(): print(f"{k:40s} {v}")
print("kernel instances (nvscope / nsys): eager", e.get("kernel_instances_nvscope"), "/", e.get("kernel_instances_nsys"),
      "; graphs", g.get("kernel_instances_nvscope"), "/", g.get("kernel_instances_nsys"),
      "; cupy", c.get("kernel_instances_nvscope"), "/", c.get("kernel_instances_nsys"))
PY
}

pack() { (cd "$OUT" && tar czf csv.tgz $(ls -d cmp_*/*.csv cmp_*/*.log examples/*.csv examples_*.log 2>/dev/null)); }

for s in "${stages[@]}"; do "$s" || { echo "stage $s failed"; exit 1; }; done
