#!/usr/bin/env bash
# The issue-specific GPU checks, after bench/gpu_session.sh PART=build left build/gpu (GPU machine,
# repository root, .gpu/lib carried). What comes back is at most 8 files: the logs are packed.
#   PART=fidelity: the six tables against nsys (gpu_session checks), the corners
#     (bench/fidelity/corners.py), the attribution rules on PyTorch (bench/run/attribute_check.sh),
#     the other nsys reports against nsys (bench/fidelity/reports_vs_nsys.sh --save-data).
#   PART=long: the long run (bench/run/long_run.sh, STEPS steps) and the Python package's attach
#     (bench/run/python_attach.sh).
#   PART=scale: scale_bench of this tree against the baseline tree in .scale_base (carried; made by
#     `git archive BASE include tests bench/analyze | tar -x -C .scale_base`), alternated
#     (bench/analyze/scale_vs.sh): the CPU figure on a quiet host.
#   PART=merge: two ranks of bench/run/ddp_train.py under `nvscope run`, merged (bench/run/ddp_merge.sh;
#     NPROC, BACKEND and HOSTS_PER_RANK: on one GPU, NPROC=2 HOSTS_PER_RANK=1 for NCCL, or BACKEND=gloo).
#   PART=recipes: the recipes against `nsys recipe` on the fidelity workload (bench/fidelity/recipes_vs_nsys.sh).
#   PART=nsys: PART=recipes and the reports against nsys, refreshing the CPU tests' nsys data
#     (tests/data/nsys_recipes, tests/data/nsys_reports; back in nsys_data.tgz) and fidelity.json.
#   OUT=/tmp/out PART=fidelity bash bench/gpu_extras.sh
set -o pipefail
OUT=${OUT:-/tmp/nvscope-extras}; mkdir -p "$OUT/logs"
R=$PWD
NS=${NSYS_DIR:-$(dirname "$(ls -d /opt/nvidia/nsight-*/*/host/target-linux-x64/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | tail -1)")}
export LD_LIBRARY_PATH=$R/.gpu/lib:$LD_LIBRARY_PATH PATH=$NS:$PATH PYTHONUNBUFFERED=1
COMMIT=${COMMIT:-unknown}
case "${PART:-fidelity}" in
fidelity)
  OUT=$OUT/logs PART=checks COMMIT=$COMMIT bash bench/gpu_session.sh > $OUT/logs/session.txt 2>&1; echo "session checks rc=$? (${SECONDS}s)"
  grep -E "rows nvscope|target|MISSED|exit [0-9]|torch rc" $OUT/logs/session.txt | head -30
  python3 bench/fidelity/corners.py --program build/gpu/bench/fidelity/fidelity_corners --out $OUT/logs/corners > $OUT/logs/corners.txt 2>&1
  echo "corners rc=$? (${SECONDS}s)"; grep -E "^==|same|DIFFERENT" $OUT/logs/corners.txt | head -40
  OUT=$OUT/logs/attribute bash bench/run/attribute_check.sh > $OUT/logs/attribute.txt 2>&1; echo "attribute rc=$? (${SECONDS}s)"; tail -5 $OUT/logs/attribute.txt
  OUT=$OUT/logs COMMIT=$COMMIT bash bench/fidelity/reports_vs_nsys.sh build/fidelity --save-data > $OUT/logs/reports.txt 2>&1
  echo "reports rc=$? (${SECONDS}s)"; tail -40 $OUT/logs/reports.txt
  cp bench/results/fidelity.json $OUT/fidelity.json 2>/dev/null
  tar czf $OUT/nsys_reports.tgz tests/data/nsys_reports 2>/dev/null
  ;;
long)
  OUT=$OUT/logs/long B=$R/build/gpu STEPS=${STEPS:-20000} ROUNDS=${ROUNDS:-3} bash bench/run/long_run.sh > $OUT/logs/long_run.txt 2>&1
  echo "long run rc=$? (${SECONDS}s)"; tail -30 $OUT/logs/long_run.txt
  cp bench/results/long_run.json $OUT/long_run.json 2>/dev/null
  OUT=$OUT/logs/attach bash bench/run/python_attach.sh > $OUT/logs/attach.txt 2>&1; echo "attach rc=$? (${SECONDS}s)"; tail -15 $OUT/logs/attach.txt
  ;;
merge)
  OUT=$OUT/logs/merge NVSCOPE=$R/build/gpu/bin/nvscope bash bench/run/ddp_merge.sh > $OUT/logs/merge.txt 2>&1
  echo "merge rc=$? (${SECONDS}s)"; tail -30 $OUT/logs/merge.txt; cp $OUT/logs/merge/merge_gpu.json $OUT/logs/merge/nsys_nccl.tgz $OUT/ 2>/dev/null
  ;;
recipes)
  OUT=$OUT/logs/recipes COMMIT=$COMMIT bash bench/fidelity/recipes_vs_nsys.sh > $OUT/logs/recipes.txt 2>&1
  echo "recipes rc=$? (${SECONDS}s)"; tail -40 $OUT/logs/recipes.txt
  ;;
nsys)
  # The recipes and the other reports against nsys, with the data both CPU tests read refreshed
  # from this run: tests/data/nsys_recipes (bench/fidelity/recipes_data.py) and tests/data/nsys_reports.
  OUT=$OUT/logs/recipes COMMIT=$COMMIT bash bench/fidelity/recipes_vs_nsys.sh > $OUT/logs/recipes.txt 2>&1
  echo "recipes rc=$? (${SECONDS}s)"; tail -14 $OUT/logs/recipes.txt
  python3 bench/fidelity/recipes_data.py $OUT/logs/recipes/fidelity_recipes tests/data/nsys_recipes
  OUT=$OUT/logs COMMIT=$COMMIT bash bench/fidelity/reports_vs_nsys.sh build/fidelity --save-data > $OUT/logs/reports.txt 2>&1
  echo "reports rc=$? (${SECONDS}s)"; tail -20 $OUT/logs/reports.txt
  cp bench/results/fidelity.json $OUT/fidelity.json
  tar czf $OUT/nsys_data.tgz tests/data/nsys_recipes tests/data/nsys_reports
  rm -rf $OUT/logs/recipes/fidelity_recipes/nsys_pqtdir $OUT/logs/recipes/fidelity_recipes/*.nsys-rep
  ;;
scale)
  OUT=$OUT/logs/scale BASE_DIR=$R/.scale_base ROUNDS=${ROUNDS:-5} bash bench/analyze/scale_vs.sh > $OUT/logs/scale.txt 2>&1
  echo "scale rc=$? (${SECONDS}s)"; tail -20 $OUT/logs/scale.txt; cp $OUT/logs/scale/summary.json $OUT/scale_summary.json 2>/dev/null
  # Every run's metrics in one file (what comes back is at most 8 files).
  tar czf $OUT/scale_runs.tgz -C $OUT/logs/scale --exclude=scale_this --exclude=scale_base --exclude=base . 2>/dev/null
  rm -f $OUT/logs/scale/scale_this $OUT/logs/scale/scale_base; rm -rf $OUT/logs/scale/base
  ;;
esac
tar czf $OUT/logs.tgz -C $OUT logs 2>/dev/null; rm -rf $OUT/logs
ls -la $OUT
