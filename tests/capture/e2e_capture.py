#!/usr/bin/env python3
"""End-to-end check of capture control against the real tools (GPU machine).

Runs examples/02_capture_nsys under
  A. nsys profile --capture-range=cudaProfilerApi --capture-range-end=repeat:2 (a schedule
     with repeat=2, so two reports, one per cycle),
  B. nsys profile --capture-range=nvtx --nvtx-capture=capture@nvscope (NVTX backend only),
  C. ncu --profile-from-start off,
  D. (control) nsys with no capture range, which must show every step, the warm-up ranges
     and the kernel launched before the loop,
exports `nsys stats --report nvtx_sum,cuda_gpu_kern_sum --format csv` and asserts that the
reports hold exactly the kernels and step_N ranges of the scheduled steps, and nothing from
skipped, waiting or warm-up steps. The expected steps are computed here, independently of the
C++ schedule, and the example's own "recorded_steps=" line is checked against them too.

Exit 0: all matched; 1: a mismatch (printed); 77: no GPU or no nsys (skipped).
nsys is found through $NSYS, then PATH, then the usual install folders
(/opt/nvidia/nsight-systems/*/bin, /opt/nvidia/nsight-compute/*/host/target-linux-x64,
/usr/local/cuda/bin); ncu through $NCU, then PATH.
"""
import argparse
import csv
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys

KERNELS = ["forward_kernel", "loss_kernel", "backward_kernel", "optimizer_kernel"]
PHASE_RANGES = ["forward", "backward", "optimizer"]
CAPTURE_RANGE = "capture"  # capture@nvscope, the NVTX backend's range


def reference_steps(spec, steps):
    """Recorded steps of a KEY=N spec, spelled out cycle by cycle (not the C++ arithmetic)."""
    v = {"skip": 0, "wait": 0, "warmup": 0, "active": 0, "repeat": 1}
    for item in spec.split(","):
        k, n = item.split("=")
        v[k.strip()] = int(n)
    seq = ["S"] * v["skip"]
    cycles = []
    c = 0
    while (v["repeat"] == 0 or c < v["repeat"]) and len(seq) < steps:
        seq += ["W"] * v["wait"] + ["U"] * v["warmup"]
        cycles.append(list(range(len(seq), len(seq) + v["active"])))
        seq += ["A"] * v["active"]
        c += 1
    cycles = [[s for s in cyc if s < steps] for cyc in cycles]
    return [cyc for cyc in cycles if cyc]


def find_tool(env, name, patterns):
    if os.environ.get(env):
        return os.environ[env] if os.access(os.environ[env], os.X_OK) else None
    p = shutil.which(name)
    if p:
        return p
    for pat in patterns:
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[-1]
    return None


def run(cmd, env_extra=None, timeout=300, log=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    if log:
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n" + p.stdout + "\n")
    return p


def nsys_profile(common, out, capture_args, example_args, spec, log):
    """Runs the example under nsys profile (capture_args) into `out`, old reports removed first.
    Returns the process and the reports written, sorted."""
    for old in glob.glob(out + "*"):
        os.remove(old)
    p = run(common + capture_args + ["-o", out] + example_args, {"NVSCOPE_CAPTURE": spec}, log=log)
    return p, sorted(glob.glob(out + "*.nsys-rep"))


def check_profile(label, p, recorded, problems):
    """nsys exited 0 and the example's recorded_steps= line names `recorded`."""
    if p.returncode != 0:
        problems.append("%s: nsys profile exited %d" % (label, p.returncode))
    if example_recorded(p.stdout) != recorded:
        problems.append("%s: the example says it recorded %s, want %s" %
                        (label, example_recorded(p.stdout), recorded))


def example_recorded(output):
    m = re.search(r"nvscope-capture: recorded_steps=([0-9,]*) ", output)
    if not m:
        return None
    return [int(s) for s in m.group(1).split(",") if s]


def read_csv_rows(path):
    with open(path, newline="") as f:
        text = f.read()
    return list(csv.DictReader(io.StringIO(text)))


def nsys_stats(nsys, rep, prefix, log):
    """Returns ({range: instances}, {kernel name: instances}) of one report."""
    p = run([nsys, "stats", "--force-export=true", "--report", "nvtx_sum,cuda_gpu_kern_sum",
             "--format", "csv", "--output", prefix, rep], log=log)
    if p.returncode != 0:
        raise RuntimeError("nsys stats failed on %s (see log)" % rep)
    ranges, kernels = {}, {}
    nvtx_csv = prefix + "_nvtx_sum.csv"
    kern_csv = prefix + "_cuda_gpu_kern_sum.csv"
    if os.path.exists(nvtx_csv):
        for r in read_csv_rows(nvtx_csv):
            name = r.get("Range", "")
            name = name.split(":")[-1]  # "domain:name" or ":name"
            ranges[name] = ranges.get(name, 0) + int(r["Instances"])
    if os.path.exists(kern_csv):
        for r in read_csv_rows(kern_csv):
            kernels[r["Name"]] = kernels.get(r["Name"], 0) + int(r["Instances"])
    return ranges, kernels


def short_kernel(name):
    for k in KERNELS + ["init_kernel"]:
        if re.search(r"\b%s\b" % k, name):
            return k
    return name


def compare(label, steps, ranges, kernels, problems):
    """Checks one report against the steps it should hold. Returns (expected, reported, unexpected) kernels."""
    n = len(steps)
    want_ranges = {"step_%d" % s: 1 for s in steps}
    for r in PHASE_RANGES:
        want_ranges[r] = n
    got_ranges = dict(ranges)
    got_ranges.pop(CAPTURE_RANGE, None)
    if got_ranges != want_ranges:
        problems.append("%s: NVTX ranges %s, want %s" % (label, sorted(got_ranges.items()),
                                                          sorted(want_ranges.items())))
    expected = n * len(KERNELS)
    reported = sum(kernels.values())
    by_short = {}
    for name, count in kernels.items():
        by_short[short_kernel(name)] = by_short.get(short_kernel(name), 0) + count
    unexpected = 0
    for name, count in by_short.items():
        if name not in KERNELS:
            unexpected += count
        elif count > n:
            unexpected += count - n
    for k in KERNELS:
        if by_short.get(k, 0) != n:
            problems.append("%s: %s x%d, want x%d" % (label, k, by_short.get(k, 0), n))
    if unexpected:
        problems.append("%s: %d unexpected kernel instances: %s" % (label, unexpected, by_short))
    return expected, reported, unexpected


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--metrics", help="write the metrics JSON here")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    log = os.path.join(args.work, "e2e.log")
    open(log, "w").close()

    probe = run([args.example, "--steps", "0"], log=log)
    if "no CUDA device" in probe.stdout:
        print("SKIP: no CUDA device (%s)" % probe.stdout.strip())
        return 77
    nsys = find_tool("NSYS", "nsys", ["/opt/nvidia/nsight-systems/*/bin/nsys",
                                       "/opt/nvidia/nsight-systems/*/target-linux-x64/nsys",
                                       "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
                                       "/usr/local/cuda/bin/nsys"])
    if not nsys:
        print("SKIP: nsys not found (set NSYS=/path/to/nsys)")
        return 77
    ncu = find_tool("NCU", "ncu", ["/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"])
    print("nsys: %s\nncu: %s" % (nsys, ncu))
    problems = []
    metrics = {}
    common = [nsys, "profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none",
              "--force-overwrite=true"]

    # A. cudaProfilerApi, a repeating schedule: one report per cycle.
    spec_a = "skip=2,wait=1,warmup=1,active=3,repeat=2"
    cycles_a = reference_steps(spec_a, args.steps)

    def example(mechanism):
        return [args.example, "--steps", str(args.steps), "--mechanism", mechanism]

    p, reps = nsys_profile(common, os.path.join(args.work, "cuda_api"),
                           ["--capture-range=cudaProfilerApi", "--capture-range-end=repeat:%d" % len(cycles_a)],
                           example("both"), spec_a, log)
    check_profile("A", p, sum(cycles_a, []), problems)
    if len(reps) != len(cycles_a):
        problems.append("A: %d reports %s, want %d (one per cycle)" % (len(reps), reps, len(cycles_a)))
    exp_a = rep_a = unexp_a = 0
    for i, rep in enumerate(reps):
        ranges, kernels = nsys_stats(nsys, rep, os.path.join(args.work, "A%d" % i), log)
        steps = cycles_a[i] if i < len(cycles_a) else []
        e, r, u = compare("A report %d (%s)" % (i + 1, os.path.basename(rep)), steps, ranges, kernels, problems)
        exp_a, rep_a, unexp_a = exp_a + e, rep_a + r, unexp_a + u
    exp_a = sum(len(c) for c in cycles_a) * len(KERNELS)
    metrics.update(nsys_expected_kernels=exp_a, nsys_reported_kernels=rep_a,
                   nsys_unexpected_kernels=unexp_a, nsys_capture_reports=len(reps),
                   nsys_expected_capture_reports=len(cycles_a))

    # B. --capture-range=nvtx, with the NVTX backend alone.
    spec_b = "skip=3,warmup=2,active=4"
    cycles_b = reference_steps(spec_b, args.steps)
    p, reps = nsys_profile(common, os.path.join(args.work, "nvtx"),
                           ["--capture-range=nvtx", "--nvtx-capture=capture@nvscope", "--capture-range-end=stop"],
                           example("nvtx"), spec_b, log)
    check_profile("B", p, sum(cycles_b, []), problems)
    rep_b = unexp_b = 0
    if len(reps) != 1:
        problems.append("B: %d reports, want 1" % len(reps))
    else:
        ranges, kernels = nsys_stats(nsys, reps[0], os.path.join(args.work, "B"), log)
        _, rep_b, unexp_b = compare("B (nvtx)", cycles_b[0], ranges, kernels, problems)
    metrics.update(nvtx_mode_expected_kernels=len(cycles_b[0]) * len(KERNELS),
                   nvtx_mode_reported_kernels=rep_b, nvtx_mode_unexpected_kernels=unexp_b)

    # C. ncu --profile-from-start off, the repeating schedule of A.
    if not ncu:
        problems.append("C: ncu not found (set NCU=/path/to/ncu)")
    else:
        ncu_csv = os.path.join(args.work, "ncu.csv")
        if os.path.exists(ncu_csv):
            os.remove(ncu_csv)
        p = run([ncu, "--profile-from-start", "off", "--clock-control", "none",
                 "--metrics", "gpu__time_duration.sum", "--csv", "--log-file", ncu_csv,
                 *example("cuda"), "--n", "65536"],
                {"NVSCOPE_CAPTURE": spec_a}, log=log, timeout=400)
        if p.returncode != 0:
            problems.append("C: ncu exited %d" % p.returncode)
        ids, names = set(), {}
        if os.path.exists(ncu_csv):
            lines = [l for l in open(ncu_csv) if l.startswith('"')]
            for r in csv.DictReader(io.StringIO("".join(lines))):
                if r.get("ID") is None:
                    continue
                if r["ID"] not in ids:
                    ids.add(r["ID"])
                    k = short_kernel(r.get("Kernel Name", ""))
                    names[k] = names.get(k, 0) + 1
        exp_c = sum(len(c) for c in cycles_a) * len(KERNELS)
        if len(ids) != exp_c:
            problems.append("C: ncu profiled %d kernels, want %d (%s)" % (len(ids), exp_c, names))
        if any(k not in KERNELS for k in names):
            problems.append("C: ncu profiled kernels outside the steps: %s" % names)
        metrics.update(ncu_expected_kernels=exp_c, ncu_reported_kernels=len(ids))

    # D. Control: the same program traced in full (no capture range) shows every step, the
    # warm-up ranges and the kernel before the loop, so that their absence above means
    # something.
    p, reps = nsys_profile(common, os.path.join(args.work, "full"), [], example("cuda"), spec_a, log)
    full_steps = full_kernels = 0
    if p.returncode != 0 or len(reps) != 1:
        problems.append("D: full trace failed (exit %d, %d reports)" % (p.returncode, len(reps)))
    else:
        ranges, kernels = nsys_stats(nsys, reps[0], os.path.join(args.work, "D"), log)
        full_steps = sum(1 for r in ranges if re.fullmatch(r"step_[0-9]+", r))
        full_kernels = sum(kernels.values())
        want_warmups = sum(1 for c in cycles_a)  # one warm-up step per cycle in spec_a
        if full_steps != args.steps or ranges.get("warmup", 0) != want_warmups:
            problems.append("D: full trace has %d step ranges and %d warmup ranges, want %d and %d"
                            % (full_steps, ranges.get("warmup", 0), args.steps, want_warmups))
        if full_kernels != args.steps * len(KERNELS) + 1:
            problems.append("D: full trace has %d kernels, want %d" %
                            (full_kernels, args.steps * len(KERNELS) + 1))
    metrics.update(full_trace_step_ranges=full_steps, full_trace_kernels=full_kernels)

    width = max(len(k) for k in metrics)
    for k, v in metrics.items():
        print("%-*s %s" % (width, k, v))
    if args.metrics:
        with open(args.metrics, "w") as f:
            json.dump(metrics, f, indent=2)
    for pr in problems:
        print("MISMATCH: " + pr)
    print("e2e capture: %s (log: %s)" % ("FAILED" if problems else "ok", log))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
