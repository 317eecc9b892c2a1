#!/usr/bin/env bash
# The GPU check of the Python package's attach() (issue 46): bench/run/train.py profiled twice,
# once as `nvscope run -- python3 train.py` and once by `nvscope.attach()` at the top of the same
# script, with the same options; the two summaries must hold the same kernels (names and
# instances, read with nvscope.load). GPU machine, repository root; PyTorch installed.
#   OUT=/tmp/out bash bench/run/python_attach.sh         (writes $OUT/python_attach.txt)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/python-attach-out}
B=${B:-$ROOT/build/python-attach}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.gpu/lib:${LD_LIBRARY_PATH:-}" PATH="/usr/local/cuda/bin:$PATH"
cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DNVSCOPE_BUILD_EXAMPLES=OFF \
  -DNVSCOPE_BUILD_BENCH=OFF -DNVSCOPE_INSTALL=OFF > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
ninja -C "$B" nvscope_cli nvscope_inject > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
# The package into a venv that sees the system's PyTorch; no network.
rm -rf "$B/venv" "$B/src" && mkdir -p "$B/src" && cp -R "$ROOT/python" "$B/src/python"
python3 -m venv --system-site-packages "$B/venv"
PIP_NO_INDEX=1 NVSCOPE_PREBUILT="$B" NVSCOPE_SOURCE="$ROOT" "$B/venv/bin/pip" install --quiet "$B/src/python" || exit 1
PY="$B/venv/bin/python"
# A venv sees the system's site-packages but not the user's (~/.local), where pip puts PyTorch on
# some machines: where the venv cannot import torch, it is given the folder python3 finds it in.
if ! "$PY" -c "import torch" 2> /dev/null; then
  TORCH_SITE=$(python3 -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))") || { echo "python3 has no torch"; exit 1; }
  export PYTHONPATH="$TORCH_SITE${PYTHONPATH:+:$PYTHONPATH}"
  "$PY" -c "import torch" || { echo "the venv cannot import torch from $TORCH_SITE"; exit 1; }
fi
D="$OUT/runs"; rm -rf "$D"; mkdir -p "$D"
ARGS=(--steps 8 --warmup 2)
# 1. the command (the venv's `nvscope`, the packaged binary)
( cd "$D" && timeout 300 "$B/venv/bin/nvscope" run --output-dir="$D" --name=run --outputs=summary,json \
    -- "$PY" "$ROOT/bench/run/train.py" "${ARGS[@]}" ) > "$OUT/run.txt" 2>&1; echo "run rc=$?" >> "$OUT/run.txt"
# 2. attach() first thing in the script's process, then the same script
( cd "$D" && timeout 300 "$PY" - "${ARGS[@]}" <<PYEOF
import nvscope, runpy, sys
nvscope.attach(output_dir="$D", name="attach", outputs="summary,json")
sys.argv = ["train.py"] + sys.argv[1:]
runpy.run_path("$ROOT/bench/run/train.py", run_name="__main__")
PYEOF
) > "$OUT/attach.txt" 2>&1; echo "attach rc=$?" >> "$OUT/attach.txt"
"$PY" - "$D/run.json" "$D/attach.json" > "$OUT/python_attach.txt" 2>&1 <<'PYEOF'
import sys, nvscope
run, attach = (nvscope.load(p) for p in sys.argv[1:3])
def kernels(p):
    rows = p["cuda_gpu_kern_sum"]
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    return {r["Name"]: r["Instances"] for r in rows}
a, b = kernels(run), kernels(attach)
print("nvscope run: %d kernels, %d names; attach: %d kernels, %d names" % (sum(a.values()), len(a), sum(b.values()), len(b)))
print("verdicts:", run.verdict["line"], "|", attach.verdict["line"])
diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
print("same kernels" if not diff else "differ: %r" % sorted(diff.items())[:10])
sys.exit(0 if not diff else 1)
PYEOF
rc=$?
tail -5 "$OUT/run.txt" "$OUT/attach.txt"; cat "$OUT/python_attach.txt"
exit $rc
