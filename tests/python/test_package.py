"""The installed nvscope package, in its venv, on the CPU: load, attach's checks, the command.

Run by package_test.sh with the venv's python (NVSCOPE_TEST_SOURCE: the repository)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import nvscope

SOURCE = os.environ["NVSCOPE_TEST_SOURCE"]
SHIPPED = os.path.join(SOURCE, "tests", "data", "h200_03_in_process", "summary.json")
try:
    import pandas  # noqa: F401
    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


def version_hpp():
    with open(os.path.join(SOURCE, "include", "nvscope", "version.hpp")) as f:
        text = f.read()
    return ".".join(re.search(r"#define NVSCOPE_VERSION_%s (\d+)" % p, text).group(1) for p in ("MAJOR", "MINOR", "PATCH"))


def rows(table):
    return table.to_dict("records") if HAVE_PANDAS else table


class Load(unittest.TestCase):
    def test_shipped_summary_tables_as_written(self):
        with open(SHIPPED) as f:
            raw = json.load(f)
        p = nvscope.load(SHIPPED)
        self.assertEqual(sorted(p.reports), sorted(raw["reports"]))
        for name, table in p.reports.items():
            self.assertEqual(rows(table), raw["reports"][name], name)
        kernels = p["cuda_gpu_kern_sum"]
        self.assertEqual(type(kernels).__name__, "DataFrame" if HAVE_PANDAS else "list")
        self.assertEqual(p.verdict["line"], raw["verdict"])
        self.assertEqual(p.metrics, raw["metrics"])

    def test_stem_and_diagnosis_verdict(self):
        summary = {"reports": {"cuda_gpu_kern_sum": [{"Name": "gemm", "Instances": 2, "Total Time (ns)": 10}]},
                   "metrics": {"gpu_busy_percent": 50.0}, "verdict": "launch-bound: ...", "verdict_kind": "launch_bound",
                   "diagnosis": {"verdict": {"kind": "launch_bound", "line": "launch-bound: ...", "findings": [{"rule": "x"}]}}}
        folder = tempfile.mkdtemp()
        try:
            with open(os.path.join(folder, "run.json"), "w") as f:
                json.dump(summary, f)
            p = nvscope.load(os.path.join(folder, "run"))  # the stem: .json added
            self.assertEqual(p.verdict["kind"], "launch_bound")
            self.assertEqual(p.verdict["findings"], [{"rule": "x"}])
            self.assertEqual(rows(p["cuda_gpu_kern_sum"]), summary["reports"]["cuda_gpu_kern_sum"])
            with open(os.path.join(folder, "run.trace.json"), "w") as f:
                json.dump({"traceEvents": []}, f)
            with self.assertRaises(ValueError):
                nvscope.load(os.path.join(folder, "run.trace.json"))
        finally:
            shutil.rmtree(folder)


class Command(unittest.TestCase):
    def test_packaged_files(self):
        self.assertIsNotNone(nvscope.executable())
        self.assertIsNotNone(nvscope.injection_library())

    def test_version_and_run_on_cpu(self):
        tool = os.path.join(sys.prefix, "bin", "nvscope")  # the venv's console script
        self.assertTrue(os.access(tool, os.X_OK), tool)
        out = subprocess.run([tool, "--version"], stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(out.stdout.strip(), "nvscope " + version_hpp())
        done = subprocess.run([tool, "run", "--", sys.executable, "-c", "import sys; sys.exit(3)"])
        self.assertEqual(done.returncode, 3)  # the program's own status, profiled or not
        bad = subprocess.run([tool, "run", "--frobnicate", "--", "true"], stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("unknown option '--frobnicate'", bad.stderr)


class Attach(unittest.TestCase):
    def test_bad_option_is_the_tools_line(self):
        with self.assertRaises(ValueError) as e:
            nvscope.attach(frobnicate=1)
        self.assertIn("unknown option '--frobnicate'", str(e.exception))
        with self.assertRaises(ValueError) as e:
            nvscope.attach(skip="x", active=2)
        self.assertIn("bad --skip='x'", str(e.exception))

    def test_variables_of_nvscope_run(self):
        before = dict(os.environ)
        try:
            got = nvscope.attach(output_dir="prof", outputs=["summary", "json"], steps="train*", active=3)
        except RuntimeError as e:  # no driver here (CI): said in one line, nothing set
            self.assertRegex(str(e), r"^nvscope: env: (no CUDA driver|libcupti|another CUDA tool)")
            self.assertEqual(dict(os.environ), before)
            return
        self.assertEqual(got["CUDA_INJECTION64_PATH"], nvscope.injection_library())
        self.assertEqual(got["NVSCOPE_RUN_OUTPUT_DIR"], "prof")
        self.assertEqual(got["NVSCOPE_RUN_OUTPUTS"], "summary,json")
        self.assertEqual(got["NVSCOPE_RUN_CAPTURE_RANGE"], "steps")
        for k, v in got.items():
            self.assertEqual(os.environ[k], v)


if __name__ == "__main__":
    unittest.main()
