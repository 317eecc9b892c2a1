#!/usr/bin/env bash
# The nsys recipes nvscope computes in-process, against `nsys recipe` on the GPU machine, from
# the repository root:
#   COMMIT=$(git rev-parse --short HEAD) bench/fidelity/recipes_vs_nsys.sh [build-dir]
# Builds the fidelity workload, runs it under the collector (`--recipes`, runtime API calls
# recorded) and under `nsys profile --trace=cuda,nvtx`, runs `nsys recipe NAME` on the report
# for each recipe (falling back to `nsys analyze --rule NAME` where the recipe's parquet cannot
# be read), joins the rows on the recipe's keys (bench/fidelity/compare_recipes.py), prints
# {"recipes_compared": N, "recipes_equal": M} and adds them to bench/results/fidelity.json.
# Other recipes or options: RECIPES=gpu_gaps:gap=1,cuda_api_sync ...
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build/fidelity}
[ -d "$root/.gpu/lib" ] && export LD_LIBRARY_PATH="$root/.gpu/lib:${LD_LIBRARY_PATH:-}"
nsys_default=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys # where the GPU machine has it (shared GPU notes)
[ -z "${NSYS:-}" ] && [ -x "$nsys_default" ] && export NSYS="$nsys_default"
log=$(mktemp)
if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNVSCOPE_BUILD_TESTS=OFF -DNVSCOPE_BUILD_EXAMPLES=OFF -DNVSCOPE_BUILD_TOOLS=OFF -DNVSCOPE_COMPONENTS=fidelity &&
       cmake --build "$build" --target fidelity_workload; } >"$log" 2>&1; then
  tail -30 "$log"; echo "recipes_vs_nsys.sh: the build failed (log above)" >&2; exit 1
fi
recipes=${RECIPES:-gpu_gaps:gap=0,gpu_time_util,cuda_api_sync,cuda_memcpy_async,cuda_memcpy_sync,cuda_memset_sync,cuda_gpu_kern_hist,cuda_gpu_kern_pace:name=scale_kernel,nvtx_pace:name=forward,nvtx_gpu_proj_pace:name=forward,cuda_gpu_time_util_map}
python3 "$root/bench/fidelity/compare_recipes.py" --workload "$build/bench/fidelity/fidelity_workload" \
  --out "${OUT:-/tmp}/fidelity_recipes" --recipes "$recipes" --results "$root/bench/results/fidelity.json"
