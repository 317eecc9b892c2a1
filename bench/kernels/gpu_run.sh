#!/usr/bin/env bash
# On the GPU machine, from the repository root: build, check, run the example, benchmark.
# Usage: bench/kernels/gpu_run.sh OUTDIR COMMIT   (logs and kernels.json land in OUTDIR)
set -o pipefail
out=${1:?output folder}; commit=${2:-unknown}
export CUDA_MODULE_LOAD=EAGER
B=build/kernels-gpu
if ! { cmake --preset gpu -B $B -DNVSCOPE_COMPONENTS="annotate;kernels" > $out/cfg.log 2>&1 &&
       cmake --build $B -j16 --target kernels_correctness 04_transformer_block kernels_bench > $out/build.log 2>&1; }; then
  tail -40 $out/cfg.log $out/build.log; exit 1
fi
echo "HGMMA instructions in kernels_bench: $(cuobjdump --dump-sass $B/bench/kernels/kernels_bench 2>/dev/null | grep -c HGMMA)"
$B/tests/kernels/kernels_correctness > $out/test.log 2>&1; echo "correctness rc=$?"; tail -3 $out/test.log
$B/examples/04_transformer_block/04_transformer_block > $out/example.log 2>&1; echo "example rc=$?"; cat $out/example.log
$B/examples/04_transformer_block/04_transformer_block --tokens 4096 --dim 768 --width 512 > $out/example_bert.log 2>&1; echo "example (bert-base shape) rc=$?"; cat $out/example_bert.log
$B/bench/kernels/kernels_bench --kernels_out=$out/kernels.json --kernels_commit=$commit --kernels_date=2026-11-21 \
  ${BENCH_ARGS:-} > $out/bench.log 2>&1; echo "bench rc=$?"
grep -E "GB/s|TFLOP/s|ERROR" $out/bench.log | sed -E 's/ +/ /g' | cut -c1-150
sed -n '/^metric /,$p' $out/bench.log
if [ -n "${SANITIZE:-}" ]; then
  for tool in memcheck racecheck; do
    NVSCOPE_KERNELS_SMALL=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/kernels/kernels_correctness > $out/sanitizer_$tool.log 2>&1
    echo "compute-sanitizer $tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Status|test cases" $out/sanitizer_$tool.log
  done
fi
