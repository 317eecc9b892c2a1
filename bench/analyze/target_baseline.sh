#!/usr/bin/env bash
# Issue 13's target as a ratio in one run: analyze at 2 M synthetic kernels of the code the issue
# was filed on (b962f3a: its analyze had no diagnosis; the issue read 7.2 M records a second there
# and asked for 20 M, x2.78), beside this commit's. Warm (wall clock, a first call dropped): both
# analyzes and this commit's passes without the diagnosis; fresh (thread CPU time from the first
# call, as scale_bench times analyze_records_per_s): both analyzes. Processes alternated, `rounds`
# of them (default 7), each the median of 5 calls; prints every round, the medians and the paces
# against b962f3a's of the same kind (docs/analysis.md, Speed). Run from the
# repository root of a clone with history; needs g++ and git.
#   bash bench/analyze/target_baseline.sh [rounds]
set -euo pipefail
rounds=${1:-7}
baseline=b962f3a
case "$rounds" in '' | *[!0-9]* | 0) echo "target_baseline.sh: rounds must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
for tool in g++ git python3; do
  command -v "$tool" > /dev/null || { echo "target_baseline.sh: $tool not found (Debian: apt-get install g++ git python3)" >&2; exit 1; }
done
git cat-file -e "$baseline^{commit}" 2> /dev/null || { echo "target_baseline.sh: commit $baseline not in this clone's history (a shallow clone?)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$baseline" include tests/analyze | tar -x -C "$work"
# The cpu preset's optimisation (RelWithDebInfo: -O2 -g), as scale_bench is measured.
g++ -O2 -g -std=c++17 -DNVSCOPE_BASELINE_OLD_HEADERS -I"$work/include" -I"$work/tests/analyze" bench/analyze/target_baseline.cpp -o "$work/old"
g++ -O2 -g -std=c++17 -Iinclude -Itests/analyze bench/analyze/target_baseline.cpp -o "$work/head"
head_commit=$(git rev-parse --short HEAD)
for ((r = 1; r <= rounds; ++r)); do
  old=$("$work/old" analyze) && passes=$("$work/head" passes) && whole=$("$work/head" analyze) &&
    old_fresh=$("$work/old" fresh) && fresh=$("$work/head" fresh) ||
    { echo "target_baseline.sh: a timing run failed in round $r" >&2; exit 1; }
  records=${old#* } old=${old% *} passes=${passes% *} whole=${whole% *} old_fresh=${old_fresh% *} fresh=${fresh% *}
  echo "round $r: warm: $baseline $old ms, $head_commit without the diagnosis $passes ms, $head_commit analyze $whole ms;" \
    "fresh: $baseline $old_fresh ms, $head_commit $fresh ms"
  echo "$old $passes $whole $old_fresh $fresh" >> "$work/times"
done
python3 - "$work/times" "$records" "$baseline" "$head_commit" << 'EOF'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
records, base, head = int(sys.argv[2]), sys.argv[3], sys.argv[4]
names = [(f"warm: {base} analyze (no diagnosis)", 0), (f"warm: {head} without the diagnosis", 0), (f"warm: {head} analyze", 0),
         (f"fresh: {base} analyze (no diagnosis)", 3), (f"fresh: {head} analyze", 3)]
for i, (name, base_column) in enumerate(names):
    old = statistics.median(r[base_column] for r in rows)
    m = statistics.median(r[i] for r in rows)
    print(f"{name}: median {m:.1f} ms, {records / m / 1000:.1f} M records a second, x{old / m:.2f} {base}'s pace")
old = statistics.median(r[0] for r in rows)
print(f"the target read as a ratio: x{20 / 7.2:.2f} {base}'s pace, {20 / 7.2 * records / old / 1000:.1f} M records a second here (warm)")
EOF
