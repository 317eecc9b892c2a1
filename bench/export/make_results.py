#!/usr/bin/env python3
"""Writes bench/results/export.json from chrome_trace_bench's JSON lines.

Usage: make_results.py RUNS.jsonl STEM COMMAND LOAD_AT_START LOAD_AT_END

Per process (one implementation, one fresh process, 3 calls): the first call (what a program
that writes one trace pays) and the median of the 3. Per implementation: the median of those
over rounds, and the spread (max - min) / median.
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

runs, stem, command, load0, load1 = sys.argv[1:6]
steady, first, cpu = {}, {}, {}
records = nbytes = 0
for line in open(runs):
    r = json.loads(line)
    records, nbytes = r["records"], max(nbytes, r["bytes"])  # streamed runs print 0 bytes
    steady.setdefault(r["impl"], []).append(records / statistics.median(r["seconds"]))
    first.setdefault(r["impl"], []).append(records / r["seconds"][0])
    if "cpu_seconds" in r:
        cpu.setdefault(r["impl"], []).append(records / statistics.median(r["cpu_seconds"]))

m = {}
for name, per in (("", steady), ("_first_call", first), ("_cpu", cpu)):
    for impl, v in per.items():
        med = statistics.median(v)
        m[f"chrome_trace_events_per_s_{impl}{name}"] = round(med)
        m[f"chrome_trace_events_per_s_{impl}{name}_spread"] = round((max(v) - min(v)) / med, 3)
for name in ("", "_first_call", "_cpu") if cpu else ("", "_first_call"):
    before = m[f"chrome_trace_events_per_s_before{name}"]
    m[f"after_over_before{name}"] = round(m[f"chrome_trace_events_per_s_after{name}"] / before, 3)
    m[f"after_small_pages_over_before{name}"] = round(m[f"chrome_trace_events_per_s_after_small_pages{name}"] / before, 3)
    if f"chrome_trace_events_per_s_streamed{name}" in m:
        m[f"streamed_over_after{name}"] = round(m[f"chrome_trace_events_per_s_streamed{name}"] /
                                                m[f"chrome_trace_events_per_s_after{name}"], 3)
m["chrome_trace_events_per_s"] = m["chrome_trace_events_per_s_after"]
m["records"], m["bytes"], m["rounds"] = records, nbytes, len(steady["before"])

model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(stem))))
commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
doc = {"topic": "export",
       "device": f"CPU: {model} ({os.cpu_count()} cores, shared with other jobs; load average {load0} at start, {load1} at end)",
       "date": datetime.date.today().isoformat(), "commit": commit, "command": command, "metrics": m}
with open(stem + ".json", "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

print(json.dumps(m, indent=2))
