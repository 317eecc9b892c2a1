#!/usr/bin/env bash
# The GPU checks of a session in one call (GPU machine, repository root, .gpu/lib carried):
# the gpu workflow, the fidelity run against nsys, example 04 twice and `nvscope diff` on its
# summaries, example 03 under `nvscope run` twice and diffed. Results under $OUT.
#   COMMIT=$(git rev-parse --short HEAD) OUT=/tmp/out bash bench/gpu_session.sh   (PART=build, then PART=checks: two calls;
#   PART=targets instead of build builds only what the checks run)
set -o pipefail
OUT=${OUT:-/tmp/nvscope-gpu}; mkdir -p "$OUT"
NS=${NSYS_DIR:-$(dirname "$(ls -d /opt/nvidia/nsight-*/*/host/target-linux-x64/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | tail -1)")}  # where nsys lives
R=$PWD
export LD_LIBRARY_PATH=$R/.gpu/lib:$LD_LIBRARY_PATH PATH=$NS:$PATH
nvidia-smi -L
COMMIT=${COMMIT:-unknown}
# PART=build: the build and the GPU test suite alone; PART=checks: the rest, on the build a
# previous call left (a warm machine keeps it); unset: both.
# PART=targets: only what the checks run (the CLI, the injection library, the fidelity programs,
# examples 03 and 04), no test suite: for a session whose ctest already ran on this commit.
if [ "${PART:-all}" = targets ]; then
  cmake --preset gpu > $OUT/build.log 2>&1 && cmake --build --preset gpu -j16 --target nvscope_cli nvscope_inject \
    fidelity_workload fidelity_corners 03_in_process 04_transformer_block >> $OUT/build.log 2>&1 ||
    { grep -a -B2 -A12 "error" $OUT/build.log | head -60; exit 1; }
  echo "targets built (${SECONDS}s)"; exit 0
fi
if [ "${PART:-all}" != checks ]; then
  cmake --preset gpu > $OUT/build.log 2>&1 && cmake --build --preset gpu -j16 >> $OUT/build.log 2>&1 || { grep -a -B2 -A12 "error" $OUT/build.log | head -60; exit 1; }
  echo "build ok (${SECONDS}s)"
  ctest --preset gpu -j4 -E "consumer|browser|scale|layout|fuzz" --timeout 120 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc=$? (${SECONDS}s)"
  grep -E "tests passed|\*\*\*Failed|Failed  |Not Run|Timeout|Skipped" $OUT/ctest.log | head -40
  [ "${PART:-all}" = build ] && exit 0
fi
python3 bench/fidelity/compare.py --workload build/gpu/bench/fidelity/fidelity_workload --out /tmp/fid --results $OUT/fidelity.json --commit $COMMIT 2>&1 | tail -30; echo "fidelity done (${SECONDS}s)"
D=/tmp/demo; mkdir -p $D/a $D/b; NV=$R/build/gpu/tools/nvscope
( cd $D/a && $R/build/gpu/examples/04_transformer_block/04_transformer_block ) > $OUT/demo.txt 2>&1
( cd $D/b && $R/build/gpu/examples/04_transformer_block/04_transformer_block ) > /dev/null 2>&1
{ ls $R/build/gpu/tools $R/build/gpu/bin 2>/dev/null | head; } >> $OUT/demo.txt
NVB=$(ls $R/build/gpu/tools/nvscope $R/build/gpu/bin/nvscope 2>/dev/null | head -1)
for pair in "a/transformer_fused b/transformer_fused" "a/transformer_unfused b/transformer_unfused" "a/transformer_unfused a/transformer_fused"; do
  set -- $pair; echo "== nvscope diff $1 $2" >> $OUT/demo.txt
  $NVB diff $D/$1.summary.json $D/$2.summary.json >> $OUT/demo.txt 2>&1; echo "exit $?" >> $OUT/demo.txt
done
for i in 1 2; do ( cd $D && $NVB run --outputs=json --name=run03_$i -- $R/build/gpu/examples/03_in_process/03_in_process > /dev/null 2>> $OUT/demo.txt ); done
ls $D >> $OUT/demo.txt
echo "== nvscope diff run03_1 run03_2" >> $OUT/demo.txt; $NVB diff $D/run03_1.json $D/run03_2.json >> $OUT/demo.txt 2>&1; echo "exit $?" >> $OUT/demo.txt
( cd $D && $R/build/gpu/examples/03_in_process/03_in_process ) > $OUT/example03.txt 2>&1
tail -60 $OUT/demo.txt
# The one-screen summary `nvscope run` prints at the end of a PyTorch training loop (README).
( cd $D && timeout 240 $NVB run --output-dir=$D/torch -- python3 $R/bench/run/train.py --steps 8 --warmup 2 ) > $OUT/torch_screen.txt 2>&1
echo "torch rc=$?" >> $OUT/torch_screen.txt; ls -la $D/torch >> $OUT/torch_screen.txt 2>&1
tail -50 $OUT/torch_screen.txt
