#!/usr/bin/env bash
# Times the Chrome trace writer before and after issue 8 in fresh processes of one binary,
# interleaved (the order rotates each round), and writes bench/results/export.json and .md.
# Each process makes 3 calls and keeps their median; the figure is the median over rounds,
# the spread (max - min) / median of the per-process figures.
# Usage: bench/export/run.sh [build-dir] [rounds]   (build chrome_trace_bench first)
set -euo pipefail
build=${1:-build/cpu}
rounds=${2:-7}
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=$build/bench/export/chrome_trace_bench
[ -x "$bench" ] || { echo "run.sh: $bench not found: build the chrome_trace_bench target first" >&2; exit 1; }
"$bench" check
out=$(mktemp)
load_before=$(cut -d' ' -f1 /proc/loadavg)
impls=(before after after_small_pages)
for ((r = 0; r < rounds; ++r)); do
  for ((k = 0; k < ${#impls[@]}; ++k)); do
    "$bench" "${impls[$(((r + k) % ${#impls[@]}))]}" 3 >> "$out"
  done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)
python3 - "$out" "$root/bench/results/export" "bench/export/run.sh $build $rounds" "$load_before" "$load_after" <<'PY'
import json, os, platform, statistics, subprocess, sys, datetime
runs, stem, command, load0, load1 = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
per = {}
records = nbytes = 0
for line in open(runs):
    r = json.loads(line)
    records, nbytes = r["records"], r["bytes"]
    per.setdefault(r["impl"], []).append(records / statistics.median(r["seconds"]))
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
root = os.path.dirname(os.path.dirname(os.path.dirname(stem)))
commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
m = {}
for impl, v in per.items():
    med = statistics.median(v)
    m[f"chrome_trace_events_per_s_{impl}"] = round(med)
    m[f"chrome_trace_events_per_s_{impl}_spread"] = round((max(v) - min(v)) / med, 3)
m["after_over_before"] = round(m["chrome_trace_events_per_s_after"] / m["chrome_trace_events_per_s_before"], 3)
m["after_small_pages_over_before"] = round(m["chrome_trace_events_per_s_after_small_pages"] / m["chrome_trace_events_per_s_before"], 3)
m["records"], m["bytes"], m["rounds"] = records, nbytes, len(per["before"])
doc = {"topic": "export",
       "device": f"CPU: {model} ({os.cpu_count()} cores, shared; load average {load0} at start, {load1} at end)",
       "date": datetime.date.today().isoformat(), "commit": commit, "command": command, "metrics": m}
json.dump(doc, open(stem + ".json", "w"), indent=2)
open(stem + ".json", "a").write("\n")
with open(stem + ".md", "w") as f:
    f.write("# Chrome trace writer: before and after issue 8\n\n")
    f.write(f"`{command}` at {commit}, {doc['date']}, {doc['device']}.\n\n")
    f.write("Records (kernels, copies, memsets, ranges, launches, syncs; the count analysis.json's\n"
            "`chrome_trace_records_per_s` used) written per second, on analyze_bench's synthetic trace\n"
            f"({records} records, {nbytes / 1e6:.0f} MB of JSON). Fresh process per figure, implementations\n"
            "interleaved; median over rounds, spread = (max - min) / median.\n\n")
    f.write("| writer | records/s | spread |\n| --- | ---: | ---: |\n")
    for impl, words in (("before", "before: one function pasting strings"), ("after", "after: structured writer"),
                        ("after_small_pages", "after, transparent huge pages off")):
        f.write(f"| {words} | {m[f'chrome_trace_events_per_s_{impl}'] / 1e6:.2f} M | {m[f'chrome_trace_events_per_s_{impl}_spread']:.2f} |\n")
    f.write(f"\nafter / before: {m['after_over_before']}; with small pages: {m['after_small_pages_over_before']}.\n")
print(json.dumps(m, indent=2))
PY
rm -f "$out"
