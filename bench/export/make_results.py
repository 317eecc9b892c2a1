#!/usr/bin/env python3
"""Writes bench/results/export.json and .md from chrome_trace_bench's JSON lines.

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

rows = (("before", "before: one function pasting strings"), ("after", "after: structured writer, huge-page advice"),
        ("after_small_pages", "after, transparent huge pages off"),
        ("streamed", "after, streamed to /dev/null (write_chrome_trace)"))
rows = tuple(row for row in rows if f"chrome_trace_events_per_s_{row[0]}" in m)
with open(stem + ".md", "w") as f:
    f.write("# Chrome trace writer: before and after issue 8\n\n")
    f.write(f"`{command}` at {commit}, {doc['date']}; {doc['device']}.\n\n")
    f.write("Records (kernels, copies, memsets, ranges, launches, syncs) written per second, on\n"
            "analyze_bench's synthetic trace\n"
            f"({records} records, {nbytes / 1e6:.0f} MB of JSON). Fresh process per figure, the {len(rows)}\n"
            "writers interleaved (order rotated each round); median over rounds, spread = (max - min) / median.\n\n")
    f.write("| writer | records/s, median of 3 calls | spread | records/s, first call | spread |\n")
    f.write("| --- | ---: | ---: | ---: | ---: |\n")
    for impl, words in rows:
        a, b = f"chrome_trace_events_per_s_{impl}", f"chrome_trace_events_per_s_{impl}_first_call"
        f.write(f"| {words} | {m[a] / 1e6:.2f} M | {m[a + '_spread']:.2f} | {m[b] / 1e6:.2f} M | {m[b + '_spread']:.2f} |\n")
    if cpu:
        f.write("\nThe same per second of the process's CPU time (user + system, page faults included; median of 3\n"
                "calls), which other jobs on the machine move far less than wall time:\n\n")
        f.write("| writer | records per CPU second | spread |\n| --- | ---: | ---: |\n")
        for impl, words in rows:
            c = f"chrome_trace_events_per_s_{impl}_cpu"
            f.write(f"| {words} | {m[c] / 1e6:.2f} M | {m[c + '_spread']:.2f} |\n")
        f.write(f"\nafter / before in CPU time: {m['after_over_before_cpu']}; with huge pages off: "
                f"{m['after_small_pages_over_before_cpu']}.\n")
    f.write(f"\nafter / before: {m['after_over_before']} (first call {m['after_over_before_first_call']}); "
            f"with huge pages off: {m['after_small_pages_over_before']} (first call {m['after_small_pages_over_before_first_call']}).\n")
    if "streamed_over_after" in m:
        f.write(f"\nstreamed / after (the string): {m['streamed_over_after']} "
                f"(first call {m['streamed_over_after_first_call']}"
                + (f", CPU time {m['streamed_over_after_cpu']}" if cpu else "") + ").\n")
print(json.dumps(m, indent=2))
