#!/usr/bin/env bash
# GPU check of `nvscope merge` (issue 49), for a machine with 2 GPUs, PyTorch and NCCL: torchrun
# --nproc_per_node=2 of bench/run/ddp_train.py over NCCL under `nvscope run`, rank 1 sleeping
# 20 ms in each step before its backward pass; the two traces merged. Checks: NCCL kernels on
# both ranks, overlap per rank, rank 1 named the straggler by both rules, both ranks' running
# totals merged, the lossy steps left out (none expected); where nsys is present,
# the same script under nsys and its nccl_gpu_overlap_trace recipe for the overlap to compare.
# Writes $OUT/merge_gpu.json (the figures) and $OUT/merged.trace.json (the merged Chrome trace)
# beside the logs. Not run by CI.
#   OUT=/tmp/out NVSCOPE=build/gpu/bin/nvscope bash bench/run/ddp_merge.sh
set -uo pipefail
OUT=${OUT:-/tmp/nvscope-merge}; mkdir -p "$OUT"
NV=${NVSCOPE:-build/gpu/bin/nvscope}
P=$OUT/ranks; rm -rf "$P"; mkdir -p "$P"
nvidia-smi -L | tee "$OUT/devices.txt"
# BACKEND=gloo NPROC=2 on a machine of one GPU (NCCL refuses two ranks on one device).
SCRIPT="bench/run/ddp_train.py --steps 30 --backend ${BACKEND:-nccl} --delay-rank 1 --delay-ms 20"
"$NV" run --output-dir="$P" --name='train_r%r' --outputs=json,trace -- \
  torchrun --nproc_per_node=${NPROC:-2} $SCRIPT > "$OUT/run.log" 2>&1; echo "run rc=$?"
ls -la "$P"
"$NV" merge "$P" -o "$OUT/merged.json" > "$OUT/merge.txt" 2> "$OUT/merge.err"; echo "merge rc=$?"
cat "$OUT/merge.txt" "$OUT/merge.err"
# nsys's figure on the same script, where nsys is installed.
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | tail -1)
if [ -n "$NSYS" ]; then
  "$NSYS" profile -t cuda,nvtx -o "$OUT/nsys_r%q{RANK}" --force-overwrite=true -- \
    torchrun --nproc_per_node=${NPROC:-2} $SCRIPT > "$OUT/nsys.log" 2>&1
  "$NSYS" recipe nccl_gpu_overlap_trace --input "$OUT"/nsys_r*.nsys-rep --output "$OUT/nsys_overlap" >> "$OUT/nsys.log" 2>&1
  ls "$OUT/nsys_overlap" 2>/dev/null
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
json.dump(figures, open(os.path.join(out, "merge_gpu.json"), "w"), indent=1)
print(json.dumps(figures, indent=1))
PY
