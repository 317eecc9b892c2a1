#!/usr/bin/env bash
# GPU check of `nvscope merge` (issue 49), for a machine with 2 GPUs, PyTorch and NCCL: torchrun
# --nproc_per_node=2 of bench/run/ddp_train.py over NCCL under `nvscope run`, rank 1 sleeping
# 20 ms in each step before its backward pass; the two traces merged. Checks: NCCL kernels on
# both ranks, overlap per rank, rank 1 named the straggler by both rules, both ranks' running
# totals merged, the lossy steps left out (none expected); where nsys is present,
# the same script under nsys and its nccl_gpu_overlap_trace recipe for the overlap to compare.
# Writes $OUT/merge_gpu.json (the figures) and $OUT/merged.trace.json (the merged Chrome trace)
# beside the logs, and $OUT/nsys_nccl.tgz (each rank's nsys report exported as sqlite and
# nsys's NCCL recipes nccl_gpu_overlap_trace and nccl_gpu_time_util_map, and cuda_gpu_time_util_map
# over both ranks, as CSV: the data of tests/data/nsys_nccl). Not run by CI.
#   OUT=/tmp/out NVSCOPE=build/gpu/bin/nvscope bash bench/run/ddp_merge.sh
# On a machine of one GPU: HOSTS_PER_RANK=1 (NCCL over its socket transport, each rank its own
# NCCL host: bench/run/ddp_train.py --hosts-per-rank), or BACKEND=gloo (no collective kernels).
set -uo pipefail
OUT=${OUT:-/tmp/nvscope-merge}; mkdir -p "$OUT"
NV=${NVSCOPE:-build/gpu/bin/nvscope}
P=$OUT/ranks; rm -rf "$P"; mkdir -p "$P"
nvidia-smi -L | tee "$OUT/devices.txt"
SCRIPT="bench/run/ddp_train.py --steps 30 --backend ${BACKEND:-nccl} --delay-rank 1 --delay-ms 20"
[ -n "${HOSTS_PER_RANK:-}" ] && SCRIPT="$SCRIPT --hosts-per-rank"
"$NV" run --output-dir="$P" --name='train_r%r' --outputs=json,trace -- \
  torchrun --nproc_per_node=${NPROC:-2} $SCRIPT > "$OUT/run.log" 2>&1; echo "run rc=$?"
ls -la "$P"
"$NV" merge "$P" -o "$OUT/merged.json" > "$OUT/merge.txt" 2> "$OUT/merge.err"; echo "merge rc=$?"
cat "$OUT/merge.txt" "$OUT/merge.err"
# nsys's figure on the same script, where nsys is installed: one nsys per rank under torchrun
# (--no-python), as nsys's docs have it for multi-process jobs, so that each report is one rank's.
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | tail -1)
if [ -n "$NSYS" ]; then
  N=$OUT/nsys; rm -rf "$N"; mkdir -p "$N"
  torchrun --nproc_per_node=${NPROC:-2} --no-python "$NSYS" profile -t cuda,nvtx -o "$N/r%q{RANK}" --force-overwrite=true \
    python3 $SCRIPT > "$OUT/nsys.log" 2>&1; echo "nsys rc=$?"
  for r in "$N"/r*.nsys-rep; do "$NSYS" export --type=sqlite --force-overwrite=true -o "${r%.nsys-rep}.sqlite" "$r" >> "$OUT/nsys.log" 2>&1; done
  # nccl_gpu_overlap_trace writes CSV itself (--csv); the heatmaps have no --csv: their
  # analysis.parquet is written as analysis.csv by pandas (index left out, as
  # bench/fidelity/recipes_data.py writes the parquet files of tests/data/nsys_recipes).
  "$NSYS" recipe nccl_gpu_overlap_trace --input "$N"/r*.nsys-rep --output "$N/nsys_recipe_nccl_gpu_overlap_trace" --csv >> "$OUT/nsys.log" 2>&1
  echo "recipe nccl_gpu_overlap_trace rc=$?"; ls "$N/nsys_recipe_nccl_gpu_overlap_trace" 2>/dev/null
  for recipe in nccl_gpu_time_util_map cuda_gpu_time_util_map; do
    "$NSYS" recipe $recipe --input "$N"/r*.nsys-rep --output "$N/nsys_recipe_$recipe" >> "$OUT/nsys.log" 2>&1
    echo "recipe $recipe rc=$?"
    python3 -c 'import sys, pandas; pandas.read_parquet(sys.argv[1]).to_csv(sys.argv[2], index=False)' \
      "$N/nsys_recipe_$recipe/analysis.parquet" "$N/nsys_recipe_$recipe/analysis.csv" >> "$OUT/nsys.log" 2>&1
    ls -la "$N/nsys_recipe_$recipe/analysis.csv" 2>/dev/null || echo "recipe $recipe: no analysis.csv (log: $OUT/nsys.log)"
  done
  tail -5 "$OUT/nsys.log"
  ( cd "$N" && tar czf "$OUT/nsys_nccl.tgz" r*.sqlite nsys_recipe_*/*.csv ) && ls -la "$OUT/nsys_nccl.tgz"
fi
python3 - "$OUT" <<'PY'
import json, os, subprocess, sys
out = sys.argv[1]
m = json.load(open(os.path.join(out, "merged.json")))
ranks = {r["rank"]: r for r in m["ranks"]}
figures = {
    "ranks": len(ranks),
    "nccl_kernels_on_every_rank": all(r["collectives"]["matched"] > 0 for r in ranks.values()),
    "straggler_found": bool(ranks.get(1, {}).get("collectives", {}).get("straggler_by_offsets"))
                       and not ranks.get(0, {}).get("collectives", {}).get("straggler_by_offsets"),
    "straggler_found_by_wait": bool(ranks.get(1, {}).get("collectives", {}).get("straggler_by_wait")),
    "overlap_fraction": {str(k): r["overlap"]["fraction"] for k, r in ranks.items()},
    "arrival_late_ns": {str(k): r["collectives"]["arrival_late_ns"] for k, r in ranks.items()},
    "host_offsets_ns": {h["host"]: h["offset_ns"] for h in m["hosts"]},
    # HTA's rule counts its 2 latest ranks a step: with 2 ranks both count every step
    "hta_late_steps": {str(k): r["collectives"]["hta_late_steps"] for k, r in ranks.items()},
    "differences": {k: m["differences"][k] if k.endswith("rank") else m["differences"][k][:3]
                    for k in ("fastest_rank", "slowest_rank", "kernels", "ranges")},
    # the ranks' running totals (each STEM.json's "totals") merged: both ranks expected
    "totals_ranks": m.get("totals", {}).get("ranks", 0),
    "totals_top_kernels": [{k: row[k] for k in ("name", "ranks", "count", "p50_ns", "p99_ns", "slowest_rank")}
                           for row in m.get("totals", {}).get("kernels", [])[:3]],
    "steps_left_out": m.get("steps_left_out", []),
    "collectives_counts_agree": {str(k): r["collectives"].get("counts_agree") for k, r in ranks.items()},
    "notes": m.get("notes", []),
    "merged_trace_processes": len({e["pid"] for e in json.load(open(os.path.join(out, "merged.trace.json")))["traceEvents"]}),
    "device": open(os.path.join(out, "devices.txt")).read().strip(),
    "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
}
# nsys's figure on the same script (a separate run): per rank, the compute time inside its
# communication kernels over their time, from nccl_gpu_overlap_trace's rank_trace (per NCCL
# kernel its "Compute Overlap", in per cent of its duration).
trace_csv = os.path.join(out, "nsys", "nsys_recipe_nccl_gpu_overlap_trace", "rank_trace.csv")
if os.path.exists(trace_csv):
    import csv
    rows = list(csv.DictReader(open(trace_csv)))
    nsys_fraction = {}
    for r in sorted({x["Rank"] for x in rows}):
        comm = [x for x in rows if x["Rank"] == r and x["Name"].startswith("nccl")]
        dur = sum(int(x["End"]) - int(x["Start"]) for x in comm)
        inside = sum(float(x["Compute Overlap"]) / 100.0 * (int(x["End"]) - int(x["Start"])) for x in comm)
        nsys_fraction[r] = {"nccl_kernels": len(comm), "fraction": inside / dur if dur else 0.0}
    figures["nsys_overlap"] = nsys_fraction
    figures["overlap_diff_points"] = max(abs(figures["overlap_fraction"][r] - v["fraction"]) * 100.0
                                         for r, v in nsys_fraction.items() if r in figures["overlap_fraction"])
json.dump(figures, open(os.path.join(out, "merge_gpu.json"), "w"), indent=1)
print(json.dumps(figures, indent=1))
PY
