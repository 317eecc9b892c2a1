#!/usr/bin/env python3
"""nsys's own CSVs of the fidelity workload (tests/data/nsys_reports/nsys_NAME.csv, saved on the
GPU machine by `bench/fidelity/reports_vs_nsys.sh --save-data`) against nvscope's of a run of
the same program saved beside them (nvscope_NAME.csv): the same columns in the same order, and the rows
joined on nsys's keys with no row on one side only and no count mismatch
(bench/fidelity/compare_reports.py's rules). A report of compare_reports.py's REPORTS with no nsys
CSV committed yet (a variant added since the data was saved) is named as not compared: neither a
failure nor a report counted as equal. Registered by tests/analyze/CMakeLists.txt.
Exit 0 all compared reports equal, 1 a report differs or none was compared.
"""
import glob
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "bench", "fidelity"))
from compare_reports import KEYS, REPORTS, compare_report, report_of  # noqa: E402


# The driver call during which the in-process collector starts: CUPTI is enabled inside it, so
# it is never seen (docs/analysis.md, cuda_api_sum); nsys, attached before the program runs, has
# it. A row nsys has and nvscope lacks only for this reason is said, not failed.
STARTS_INSIDE = {"cuModuleGetLoadingMode"}


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "data", "nsys_reports")
    theirs = sorted(glob.glob(os.path.join(data, "nsys_*.csv")))
    if not theirs:
        print("nsys_reports_test: no nsys_*.csv in " + data)
        return 1
    failed = equal = 0
    for path in theirs:
        name = os.path.basename(path)[len("nsys_"):-len(".csv")]
        base = report_of(name)[0]  # a variant's report: "cuda_gpu_sum_nvtx-name_base" is cuda_gpu_sum's
        ours = os.path.join(data, "nvscope_%s.csv" % name)
        if base not in KEYS or not os.path.exists(ours):
            print("%s: no nvscope CSV or no keys for it" % name)
            failed += 1
            continue
        d = compare_report(base, ours, path)
        excused = [r for r in d["only_nsys"] if str(r[0] if isinstance(r, (list, tuple)) else r).split(" | ")[0] in STARTS_INSIDE]
        d["only_nsys"] = [r for r in d["only_nsys"] if r not in excused]
        if excused:
            print("%-36s nsys only, the call the collector starts in: %s" % (name, excused))
        ok = d["header_equal"] and not d["only_nvscope"] and not d["only_nsys"] and not d["count_mismatches"]
        print("%-36s %s (rows %d / %d)" % (name, "equal" if ok else "DIFFERS", d["rows_nvscope"], d["rows_nsys"]))
        failed += not ok
        equal += ok
    saved = {report_of(os.path.basename(p)[len("nsys_"):-len(".csv")]) for p in theirs}
    missing = [r for r in REPORTS if report_of(r) not in saved]
    for r in missing:
        print("%-36s not compared: no nsys CSV in the data (bench/fidelity/reports_vs_nsys.sh --save-data writes it)" % r)
    print("nsys_reports_test: %d compared, %d equal, %d of compare_reports.py's %d reports not compared" % (
        len(theirs), equal, len(missing), len(REPORTS)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
