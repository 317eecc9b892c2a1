#!/usr/bin/env bash
# GPU machine: PyTorch's backward kernels, launched by autograd's thread, under nvscope run's two
# attribution rules (issue 48). bench/run/train.py opens step/forward/backward/optimizer on the
# main thread. Under --attribute=thread (nsys's rule) the summary counts the backward kernels
# outside every range; under --attribute=process the `backward` range of nvtx_kern_sum holds
# them. Needs a gpu-preset build (bench/gpu_session.sh PART=build). Exit 0 when both hold.
#   OUT=/tmp/out bash bench/run/attribute_check.sh
set -o pipefail
OUT=${OUT:-/tmp/nvscope-attribute}; mkdir -p "$OUT"
R=$PWD
NV=$(ls $R/build/gpu/tools/nvscope $R/build/gpu/bin/nvscope 2>/dev/null | head -1)
for rule in thread process; do
  timeout 300 "$NV" run --attribute=$rule --outputs=json,csv --output-dir="$OUT/$rule" --name=train -- \
    python3 "$R/bench/run/train.py" --steps 6 --warmup 2 > "$OUT/$rule.txt" 2>&1
  echo "$rule: rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
def load(rule):
    return json.load(open(os.path.join(out, rule, "train.json")))
def backward_kernels(s):
    rows = s["reports"]["nvtx_kern_sum"]
    return sum(int(r["Kern Inst"]) for r in rows if str(r["NVTX Range"]).endswith(":backward"))
thread, process = load("thread"), load("process")
ok = True
u_t, u_p = thread["losses"]["unranged"] if "unranged" in thread["losses"] else thread["unranged"], process.get("unranged") or process["losses"]["unranged"]
print("thread:  unranged kernels", u_t["kernels"], "gpu_ns", u_t["gpu_ns"], "threads", [(t["tid"], t["name"], t["kernels"]) for t in u_t["threads"]])
print("process: unranged kernels", u_p["kernels"], "gpu_ns", u_p["gpu_ns"])
b_t, b_p = backward_kernels(thread), backward_kernels(process)
print("backward kernels in nvtx_kern_sum: thread", b_t, "process", b_p)
ok &= u_t["kernels"] > 0 and b_p > b_t and u_p["kernels"] < u_t["kernels"]
print("attribute check:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
