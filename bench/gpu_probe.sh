#!/usr/bin/env bash
# A first GPU call of a session: configure the gpu preset, build the few targets the probes
# need, run the corners against nsys (bench/fidelity/corners.py) and the attribution check
# (bench/run/attribute_check.sh), and bring back nsys's report scripts and its report list.
#   OUT=/tmp/out bash bench/gpu_probe.sh   (GPU machine, repository root, .gpu/lib carried)
set -o pipefail
OUT=${OUT:-/tmp/nvscope-probe}; mkdir -p "$OUT"
NS=${NSYS_DIR:-$(dirname "$(ls -d /opt/nvidia/nsight-*/*/host/target-linux-x64/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | tail -1)")}
R=$PWD
export LD_LIBRARY_PATH=$R/.gpu/lib:$LD_LIBRARY_PATH PATH=$NS:$PATH
cmake --preset gpu > $OUT/build.log 2>&1 && cmake --build --preset gpu -j16 --target fidelity_corners nvscope_cli nvscope_inject >> $OUT/build.log 2>&1 ||
  { grep -a -B2 -A12 "error" $OUT/build.log | head -60; exit 1; }
echo "build ok (${SECONDS}s)"
python3 bench/fidelity/corners.py --program build/gpu/bench/fidelity/fidelity_corners --out $OUT/corners 2>&1 | tail -80
echo "corners done (${SECONDS}s)"
OUT=$OUT/attribute bash bench/run/attribute_check.sh 2>&1 | tail -20
echo "attribute done (${SECONDS}s)"
mkdir -p $OUT/nsys_reports && cp $NS/reports/*.py $OUT/nsys_reports/ 2>/dev/null; ls $OUT/nsys_reports | wc -l
nsys stats --help-reports > $OUT/nsys_help_reports.txt 2>&1; nsys stats --help > $OUT/nsys_stats_help.txt 2>&1
nsys profile --help > $OUT/nsys_profile_help.txt 2>&1
ls $NS/../../ 2>/dev/null | head; ls $NS/python 2>/dev/null | head
