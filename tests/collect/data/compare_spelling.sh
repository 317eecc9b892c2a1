#!/usr/bin/env bash
# On the GPU machine: nvscope's spelling without libcufilt against NVIDIA's demangler
# (cu++filt) over many mangled names: those of the corpora here, and every mangled symbol of
# the CUDA libraries PyTorch ships (libtorch_cuda.so and the like; host and device names alike:
# the grammar is one). Writes $OUT/spelling_counts.txt (names read, names the rules spell,
# of those equal to cu++filt) and $OUT/spelling_mismatches.tsv (mangled, ours, cu++filt).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${TMPDIR:-/tmp}/compare_spelling
cufilt=${CUFILT:-/usr/local/cuda/bin/cu++filt}
mkdir -p "$work"
g++ -std=c++17 -O2 -I"$root/include" -o "$work/spell_names" "$here/spell_names.cpp" || exit 1
{
  tail -q -n +2 "$here/nsys_kernel_names.csv" "$here/nsys_issue_kernel_names.csv" | cut -d, -f1
  grep -ohE '"_Z[^"]+"' "$here/../name_spelling_test.cpp" | tr -d '"'
  torch=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null)
  for lib in "$torch"/lib/libtorch_cuda.so "$torch"/lib/libc10_cuda.so ${EXTRA_LIBS:-}; do
    [ -f "$lib" ] || continue
    nm -D --defined-only "$lib" | awk '{print $NF}'
    strings -n 8 "$lib" | grep -E '^_Z[0-9A-Za-z_]+$'
  done
} | grep -E '^_Z' | tr -d '\r' | sort -u | head -n "${MAX_NAMES:-300000}" > "$work/mangled.txt"
"$work/spell_names" < "$work/mangled.txt" > "$work/ours.txt"
"$cufilt" < "$work/mangled.txt" > "$work/cufilt.txt"
paste -d '\t' "$work/mangled.txt" "$work/ours.txt" "$work/cufilt.txt" > "$work/all.tsv"
awk -F '\t' '{ n++; if ($2 != "") { s++; if ($2 == $3) e++; else print > "'"$OUT"'/spelling_mismatches.tsv" } }
  END { printf "names %d\nspelled %d\nequal %d\n", n, s, e }' "$work/all.tsv" | tee "$OUT/spelling_counts.txt"
touch "$OUT/spelling_mismatches.tsv"
head -c 2000000 "$OUT/spelling_mismatches.tsv" > "$work/m" && mv "$work/m" "$OUT/spelling_mismatches.tsv"
