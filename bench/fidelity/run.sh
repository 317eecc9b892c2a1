#!/usr/bin/env bash
# Fidelity with nsys on the GPU machine, from the repository root:
#   COMMIT=$(git rev-parse --short HEAD) bench/fidelity/run.sh [build-dir]
# Builds the workload, runs bench/fidelity/compare.py and writes bench/results/fidelity.json.
# nsys reports need .gpu/lib on the GPU machine (see the shared GPU notes).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build/fidelity}
[ -d "$root/.gpu/lib" ] && export LD_LIBRARY_PATH="$root/.gpu/lib:${LD_LIBRARY_PATH:-}"
log=$(mktemp)
if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNVSCOPE_BUILD_TESTS=OFF -DNVSCOPE_BUILD_EXAMPLES=OFF -DNVSCOPE_BUILD_TOOLS=OFF -DNVSCOPE_COMPONENTS=fidelity &&
       cmake --build "$build" --target fidelity_workload; } >"$log" 2>&1; then
  tail -30 "$log"; echo "run.sh: the build failed (log above)" >&2; exit 1
fi
python3 "$root/bench/fidelity/compare.py" --workload "$build/bench/fidelity/fidelity_workload" \
  --out "${OUT:-/tmp}/fidelity" --results "$root/bench/results/fidelity.json" --commit "${COMMIT:-unknown}"
