#!/usr/bin/env bash
# Every nsys report nvscope computes beyond the six tables, against nsys's own CSV, on the GPU
# machine, from the repository root:
#   COMMIT=$(git rev-parse --short HEAD) bench/fidelity/reports_vs_nsys.sh [build-dir] [--save-data]
# Builds the fidelity workload, runs it under the collector (`--reports`, CUDA API calls
# recorded) and under `nsys profile`, exports each report with `nsys stats --report NAME
# --format csv`, joins the rows on nsys's keys (bench/fidelity/compare_reports.py) and adds
# reports_compared and reports_equal to bench/results/fidelity.json. --save-data also copies
# both sides' CSVs to tests/data/nsys_reports/ for tests/analyze/nsys_reports_test.py (commit them).
# The reports: compare_reports.py's REPORTS (every report nvscope computes beyond the six, with
# the :nvtx-name variant of the seven with kernel names and one :nvtx-name:base); another list:
# REPORTS=cuda_gpu_trace:base,... ; the runtime API only: FIDELITY_API=runtime.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=build/fidelity
save=()
for a in "$@"; do
  case "$a" in
    --save-data) save=(--save-data "$root/tests/data/nsys_reports") ;;
    *) build=$a ;;
  esac
done
[ -d "$root/.gpu/lib" ] && export LD_LIBRARY_PATH="$root/.gpu/lib:${LD_LIBRARY_PATH:-}"
log=$(mktemp)
if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNVSCOPE_BUILD_TESTS=OFF -DNVSCOPE_BUILD_EXAMPLES=OFF -DNVSCOPE_BUILD_TOOLS=OFF -DNVSCOPE_COMPONENTS=fidelity &&
       cmake --build "$build" --target fidelity_workload; } >"$log" 2>&1; then
  tail -30 "$log"; echo "reports_vs_nsys.sh: the build failed (log above)" >&2; exit 1
fi
reports=(${REPORTS:+--reports "$REPORTS"})  # none given: compare_reports.py's REPORTS
python3 "$root/bench/fidelity/compare_reports.py" --workload "$build/bench/fidelity/fidelity_workload" \
  --out "${OUT:-/tmp}/fidelity_reports" ${reports[@]+"${reports[@]}"} --results "$root/bench/results/fidelity.json" ${save[@]+"${save[@]}"}
