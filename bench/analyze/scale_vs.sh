#!/usr/bin/env bash
# scale_bench of this tree against a baseline tree, alternated in fresh processes (ROUNDS rounds
# of: this tree's, then the baseline's), and the medians, spreads and their ratio as JSON.
#   BASE=78aacb9 bash bench/analyze/scale_vs.sh           (reads the baseline from git)
#   BASE_DIR=dir bash bench/analyze/scale_vs.sh           (a baseline's include/, tests/, bench/analyze/
#                                                          unpacked there: machines without the history)
# OUT (default /tmp/scale_vs) receives both programs, every run's metrics and summary.json.
set -eo pipefail
OUT=${OUT:-/tmp/scale_vs}
ROUNDS=${ROUNDS:-5}
mkdir -p "$OUT"
if [ -z "$BASE_DIR" ]; then
  BASE_DIR=$OUT/base
  rm -rf "$BASE_DIR" && mkdir -p "$BASE_DIR"
  git archive "${BASE:?set BASE (a commit) or BASE_DIR (its tree)}" include tests bench/analyze | tar -x -C "$BASE_DIR"
fi
build() { (cd "$1" && g++ -O2 -g -std=c++17 -Iinclude -Itests/analyze -Itests/support bench/analyze/scale_bench.cpp -o "$2"); }
build . "$OUT/scale_this" &
build "$BASE_DIR" "$OUT/scale_base" &
wait
for r in $(seq "$ROUNDS"); do
  for m in this base; do "$OUT/scale_$m" "$OUT/$m.$r.json" 2> "$OUT/$m.$r.log"; done
  echo "round $r done (${SECONDS}s)"
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
keys = ["analyze_records_per_s", "analyze_records_per_s_user", "chrome_trace_events_per_s", "folded_records_per_s"]
res = {"rounds": rounds}
for m in ("this", "base"):
    runs = [json.load(open(f"{out}/{m}.{r}.json")) for r in range(1, rounds + 1)]
    for k in keys:
        v = [x[k] for x in runs]
        res[f"{m}_{k}"] = statistics.median(v)
        res[f"{m}_{k}_runs"] = v
for k in keys:
    res[f"ratio_{k}"] = round(res[f"this_{k}"] / res[f"base_{k}"], 3)
json.dump(res, open(f"{out}/summary.json", "w"), indent=1)
print(json.dumps({k: res[k] for k in res if not k.endswith("_runs")}, indent=1))
PY
