#!/usr/bin/env bash
# On the GPU machine: how nsys and cu++filt spell the kernels of issue_kernels.cu. Writes
# $OUT/issue_kern_sum{,_base,_mangled}.csv (nsys stats) and $OUT/issue_cufilt.txt (cu++filt of
# every mangled name, one per line). Needs nsys's two missing libraries in .gpu/lib (see the
# GPU machine's README).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=${TMPDIR:-/tmp}/issue_kernels
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
cufilt=${CUFILT:-/usr/local/cuda/bin/cu++filt}
mkdir -p "$work"
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -o "$work/issue_kernels" "$here/issue_kernels.cu" || exit 1
"$nsys" profile --trace=cuda -o "$work/issue" --force-overwrite true "$work/issue_kernels" > "$work/profile.log" 2>&1 || { cat "$work/profile.log"; exit 1; }
for form in "" :base :mangled; do
  suffix=${form#:}; suffix=${suffix:+_$suffix}
  "$nsys" stats --report "cuda_gpu_kern_sum$form" --format csv --output "$work/k" --force-export true "$work/issue.nsys-rep" > /dev/null 2>&1
  cp "$work"/k_cuda_gpu_kern_sum*.csv "$OUT/issue_kern_sum$suffix.csv" 2>/dev/null
  rm -f "$work"/k_cuda_gpu_kern_sum*.csv
done
# The mangled names as nsys printed them (last CSV column), through cu++filt.
tail -n +2 "$OUT/issue_kern_sum_mangled.csv" | sed -E 's/.*,"?([^",]+)"?$/\1/' | tr -d '\r' > "$work/mangled.txt"
"$cufilt" < "$work/mangled.txt" > "$work/demangled.txt"
paste -d '\t' "$work/mangled.txt" "$work/demangled.txt" > "$OUT/issue_cufilt.txt"
wc -l "$OUT"/issue_*
