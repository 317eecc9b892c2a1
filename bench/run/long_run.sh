#!/usr/bin/env bash
# A whole job under nvscope run in bounded memory (issue 47), on the GPU machine: a PyTorch loop
# of STEPS steps (default 20000; bench/run/train.py, its `step` ranges) under
#   nvscope run                                              the default: 1 GiB of raw records kept, the rest folded
#   nvscope run --memory-limit=512M                          the flight recorder (the bounded collection)
#   nvscope run --skip=10000 --active=10 --memory-limit=512M  a window of 10 steps, the rest folded (skip: half of a shorter run)
# with the program's VmRSS sampled every 5 s, then ROUNDS interleaved fresh processes of plain,
# default (nvscope run, not bounded) and bounded runs of SHORT steps for the median step time:
# the default run's ratio to plain is CUPTI's own cost, the bounded run's to the default what
# folding adds. Writes OUT/long_run_gpu.json and
# merges its metrics into bench/results/long_run.json (steps_profiled, rss_growth_mb_gpu: VmRSS
# growth from 60 s after start to the end, the larger of the two bounded runs; rss_max_mb_gpu_default:
# the default run's largest VmRSS, at most the program's own + 1 GiB + buffers; step_overhead_long_run:
# the median over rounds of bounded / plain median step time; step_overhead_default_long_run:
# default / plain; step_overhead_bounded_over_default: bounded / default).
#   bench/run/long_run.sh           (after bench/run/gpu_run.sh build, or it builds)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/long-run-out}
B=${B:-$ROOT/build/run-gpu}
STEPS=${STEPS:-20000}
SHORT=${SHORT:-300}
ROUNDS=${ROUNDS:-3}
NV="$B/bin/nvscope"
T="$ROOT/bench/run/train.py"
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"

if [ ! -x "$NV" ] || [ ! -f "$B/lib/libnvscope_inject.so" ]; then
  cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DNVSCOPE_COMPONENTS="run;collect" -DNVSCOPE_BUILD_BENCH=OFF -DNVSCOPE_BUILD_EXAMPLES=OFF >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  ninja -C "$B" nvscope_cli nvscope_inject >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi

# VmRSS (kB) of the program under nvscope run `$1`, every 5 s, as "seconds_since_start kB".
sample() {
  local tool=$1 t0; t0=$(date +%s)
  while kill -0 "$tool" 2>/dev/null; do
    for c in $(pgrep -P "$tool"); do
      awk -v t=$(( $(date +%s) - t0 )) '/^VmRSS:/ {print t, $2}' "/proc/$c/status" 2>/dev/null
    done
    sleep 5
  done
}

# One long run: $1 a label, the rest nvscope run's options.
long() {
  local label=$1; shift
  local D="$OUT/$label"; rm -rf "$D"; mkdir -p "$D"
  echo "== $label: $STEPS steps, nvscope run $*"
  "$NV" run --output-dir="$D" --summary=none "$@" -- python3 "$T" --steps "$STEPS" --warmup 5 --layers 2 >"$D/stdout.txt" 2>"$D/stderr.txt" &
  local tool=$!
  sample "$tool" >"$D/rss.txt" &
  local sampler=$!
  wait "$tool"; echo "rc=$?"
  wait "$sampler"
  tail -3 "$D/stderr.txt"; ls "$D"
}

# The window's skip: 10000 steps, or half the run where the run is shorter (the window must fall inside it).
SKIP=$(( STEPS / 2 < 10000 ? STEPS / 2 : 10000 ))
for mode in ${LONG_MODES:-default bounded window}; do # LONG_MODES: a subset, for a short GPU session
  case $mode in
    default) long default ;;
    bounded) long bounded --memory-limit=512M ;;
    window) long window --skip=$SKIP --active=10 --memory-limit=512M ;;
  esac
done

: >"$OUT/overhead.txt"
for round in $(seq 1 "$ROUNDS"); do
  for mode in plain default bounded; do
    case $mode in
      plain) python3 "$T" --steps "$SHORT" --layers 2 ;;
      default) "$NV" run --outputs=none -- python3 "$T" --steps "$SHORT" --layers 2 ;;
      bounded) "$NV" run --outputs=none --memory-limit=512M -- python3 "$T" --steps "$SHORT" --layers 2 ;;
    esac 2>/dev/null | awk -v m=$mode -v r=$round '/median_step_ms/ {print r, m, $2}' >>"$OUT/overhead.txt"
  done
done
cat "$OUT/overhead.txt"

# Where a bounded run's time goes, per thread (the program's, CUPTI's buffer thread), where perf
# is installed (PERF=0 skips it): OUT/bounded_perf.txt.
if [ "${PERF:-1}" = 1 ] && command -v perf >/dev/null 2>&1; then
  perf record -F 499 -g -o "$OUT/bounded.perf.data" -- "$NV" run --outputs=none --memory-limit=512M -- \
    python3 "$T" --steps "$SHORT" --layers 2 >/dev/null 2>&1
  perf report -i "$OUT/bounded.perf.data" --no-children --sort comm,dso,sym --percent-limit 0.5 --stdio >"$OUT/bounded_perf.txt" 2>&1
  rm -f "$OUT/bounded.perf.data"
  grep -E '^ +[0-9]' "$OUT/bounded_perf.txt" | head -40
fi

python3 - "$OUT" "$ROOT" "$STEPS" <<'PY'
import datetime, glob, json, os, statistics, subprocess, sys
out, root, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
def growth(label):
    path = os.path.join(out, label, "rss.txt")
    if not os.path.exists(path):  # a mode LONG_MODES left out
        return None
    rows = [tuple(map(int, l.split())) for l in open(path) if l.strip()]
    # From 60 s on: PyTorch's and CUDA's own start-up grows the process by tens of MB in its
    # first 20 s (seen in a 30 s run), which is not the collection's growth; a shorter run has none.
    after = [kb for t, kb in rows if t >= 60]
    return (max(after) - after[0]) / 1024.0 if len(after) > 1 else None
def steps_in(label):
    if not os.path.isdir(os.path.join(out, label)):
        return None
    files = glob.glob(os.path.join(out, label, "*.steps.jsonl"))
    return max((sum(1 for _ in open(f)) for f in files), default=0)
rows = {}
for line in open(os.path.join(out, "overhead.txt")):
    r, m, v = line.split(); rows.setdefault(m, {})[int(r)] = float(v)
def ratio(a, b):
    return [rows[a][r] / rows[b][r] for r in rows.get(a, {}) if r in rows.get(b, {})]
ratios = ratio("bounded", "plain")
def med(v):
    return round(statistics.median(v), 4) if v else None
g = [x for x in (growth("bounded"), growth("window")) if x is not None]
def peak(label):
    path = os.path.join(out, label, "rss.txt")
    if not os.path.exists(path):
        return None
    rows = [int(l.split()[1]) for l in open(path) if l.strip()]
    return round(max(rows) / 1024.0, 1) if rows else None
m = {"steps_profiled": min((n for n in (steps_in("bounded"), steps_in("window")) if n is not None), default=None),
     "rss_growth_mb_gpu": round(max(g), 2) if g else None,
     "step_overhead_long_run": med(ratios),
     "step_overhead_default_long_run": med(ratio("default", "plain")),
     "step_overhead_bounded_over_default": med(ratio("bounded", "default")),
     "rss_max_mb_gpu_default": peak("default")}
dev = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
json.dump({"device": dev, "date": datetime.date.today().isoformat(), "commit": commit, "metrics": m,
           "command": "bench/run/long_run.sh (STEPS=%d)" % steps}, open(os.path.join(out, "long_run_gpu.json"), "w"), indent=2)
p = os.path.join(root, "bench", "results", "long_run.json")
d = json.load(open(p))
d["metrics"].update({k: v for k, v in m.items() if v is not None})  # a LONG_MODES subset leaves the others
d["context"] = d.get("context", "").split(" GPU metrics:")[0] + " GPU metrics: %s, %s, commit %s, bench/run/long_run.sh with STEPS=%d (VmRSS every 5 s from 60 s on; overhead over interleaved fresh processes)." % (dev, datetime.date.today().isoformat(), commit, steps)
json.dump(d, open(p, "w"), indent=2); open(p, "a").write("\n")
print(json.dumps(m))
PY
