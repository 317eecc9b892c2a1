#!/usr/bin/env bash
# On the GPU machine: nvscope's spelling without libcufilt against NVIDIA's demangler
# (cu++filt) over many mangled names: those of the corpora here and of name_spelling_test.cpp,
# and every mangled symbol of the CUDA libraries PyTorch ships (libtorch_cuda.so and
# libc10_cuda.so, dynamic symbols and the names in their string tables; host and device names
# alike: the grammar is one). Writes $OUT/spelling_counts.txt (names, names cu++filt reads,
# names the rules spell, names both read, of those equal) and $OUT/spelling_mismatches.tsv
# (mangled, ours, cu++filt) for the names both read and spell differently.
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
# cu++filt writes back a name it cannot read; those are left out of the comparison.
awk -F '\t' -v out="$OUT/spelling_mismatches.tsv" '
  { n++; r = $3 != $1; s = $2 != ""; read += r; ours += s
    if (r && s) { both++; if ($2 == $3) equal++; else print > out } }
  END { printf "names %d\ncufilt_read %d\nours_spelled %d\nboth_read %d\nequal %d\n", n, read, ours, both, equal }' \
  "$work/all.tsv" | tee "$OUT/spelling_counts.txt"
touch "$OUT/spelling_mismatches.tsv"
