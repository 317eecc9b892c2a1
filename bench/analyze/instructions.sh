#!/usr/bin/env bash
# Instructions per pass of analyze, counted by valgrind's callgrind on the synthetic trace and
# on PyTorch's shape (bench/analyze/instructions_bench.cpp says why counts and what they miss).
# Run from the repository root; needs g++ and valgrind (Debian: valgrind). Writes the JSON
# object to the file named by the first argument (default bench/results/instructions.json);
# a line a pass to stderr. Two commits compare by running it at each (same compiler, flags).
#   bash bench/analyze/instructions.sh [out.json] [synthetic kernels] [pytorch kernels]
set -euo pipefail
out=${1:-bench/results/instructions.json}
synthetic_kernels=${2:-2000000}
pytorch_kernels=${3:-1000000}
for tool in g++ valgrind callgrind_annotate python3; do
  command -v "$tool" > /dev/null || { echo "instructions.sh: $tool not found (Debian: apt-get install valgrind g++ python3)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The cpu preset's optimisation (RelWithDebInfo: -O2 -g), without its warnings' -Werror.
g++ -O2 -g -std=c++17 -Iinclude -Itests/analyze bench/analyze/instructions_bench.cpp -o "$work/bench"
counts() { # shape kernels: the trace's records (the bench's output) and callgrind's inclusive counts, into $work
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" "$work/bench" "$1" "$2" > "$work/records.$1" 2> "$work/vg.$1" ||
    { cat "$work/vg.$1" >&2; exit 1; }
  callgrind_annotate --inclusive=yes --threshold=100 "$work/cg.$1" > "$work/annotate.$1"
}
counts synthetic "$synthetic_kernels"
counts pytorch "$pytorch_kernels"
python3 - "$work" "$out" "$synthetic_kernels" "$pytorch_kernels" "$(git rev-parse --short HEAD)" "$(g++ -dumpfullversion)" << 'EOF'
import datetime, json, re, sys
work, out, sk, pk, commit, gxx = sys.argv[1:]
passes = ["index_trace", "summaries", "projection", "range_kernel_summary", "overall_activity",
          "range_activity", "steps_and_losses", "diagnose"]
def read(shape):
    records = int(open(f"{work}/records.{shape}").read())
    found = {}
    for line in open(f"{work}/annotate.{shape}"):
        m = re.match(r"\s*([\d,]+) .*:(?:\(anonymous namespace\)::)?(pass_\w+|whole_analyze)\(", line)
        if m:
            name = m.group(2).removeprefix("pass_")
            found.setdefault(name, int(m.group(1).replace(",", ""))) # the first line of a function is its total
    missing = [p for p in passes + ["whole_analyze"] if p not in found]
    if missing:
        sys.exit(f"instructions.sh: no count for {', '.join(missing)} in callgrind's {shape} output")
    entry = {"records": records, "analyze_instructions": found["whole_analyze"],
             "analyze_instructions_per_record": round(found["whole_analyze"] / records, 1),
             "pass_instructions": {p: found[p] for p in passes}}
    for p in passes:
        print(f"{shape} {p}: {found[p]:,} ({found[p] / records:.0f} a record)", file=sys.stderr)
    print(f"{shape} analyze: {found['whole_analyze']:,} ({found['whole_analyze'] / records:.0f} a record)", file=sys.stderr)
    return entry
result = {
    "topic": "instructions",
    "device": "any x86-64 machine: valgrind's callgrind counts the instructions of one binary exactly (this file's from the project's 2-core VM)",
    "date": datetime.date.today().isoformat(),
    "commit": commit,
    "command": f"bash bench/analyze/instructions.sh (g++ {gxx} -O2 -g; synthetic::make_trace({sk}), synthetic::per_operator({pk}))",
    "synthetic": read("synthetic"),
    "pytorch_shape": read("pytorch"),
}
with open(out, "w") as f:
    json.dump(result, f, indent=2)
    f.write("\n")
EOF
echo "instructions.sh: wrote $out" >&2
