#!/usr/bin/env python3
"""Refresh tests/data/nsys_recipes from a bench/fidelity/recipes_vs_nsys.sh run (GPU machine, where
pandas reads nsys's parquet): nsys.sqlite (nsys's export of the report: every record the recipes
read), nsys's recipe outputs (nsys_recipe_NAME/*.parquet, the notebooks and scripts left out), the
same parquet files as CSV (csv/nsys_recipe_NAME__FILE.csv, for Debian's CI image, which has no
pyarrow; a stats file's index, the name column, kept as its first column), nvscope's CSVs of its own run and the log with the output folder written as OUT.
tests/analyze/recipes_vs_nsys_test then feeds the sqlite's records to nvscope's recipes and
compares them with csv/ exactly.
  python3 bench/fidelity/recipes_data.py OUT/fidelity_recipes tests/data/nsys_recipes
"""
import glob
import os
import shutil
import sys

import pandas


def main(src, dst):
    src = os.path.abspath(src)
    for old in glob.glob(os.path.join(dst, "nsys_recipe_*")) + glob.glob(os.path.join(dst, "nvscope_*.csv")):
        shutil.rmtree(old) if os.path.isdir(old) else os.remove(old)
    shutil.rmtree(os.path.join(dst, "csv"), ignore_errors=True)
    os.makedirs(os.path.join(dst, "csv"))
    shutil.copy(os.path.join(src, "nsys.sqlite"), dst)
    for f in glob.glob(os.path.join(src, "nvscope_*.csv")):
        shutil.copy(f, dst)
    for folder in sorted(glob.glob(os.path.join(src, "nsys_recipe_*"))):
        name = os.path.basename(folder)
        os.makedirs(os.path.join(dst, name))
        for p in sorted(glob.glob(os.path.join(folder, "*.parquet"))):
            shutil.copy(p, os.path.join(dst, name))
            stem = os.path.splitext(os.path.basename(p))[0]
            if stem == "files":
                continue  # the report's path: nothing a recipe computes
            frame = pandas.read_parquet(p)
            if stem == "stats":
                frame = frame.reset_index()  # its index is the name column (Text, or Shortname for kernels)
            frame.to_csv(os.path.join(dst, "csv", "%s__%s.csv" % (name, stem)), index=False)
    with open(os.path.join(src, "log.txt")) as f:
        log = f.read().replace(src, "OUT")
    with open(os.path.join(dst, "log.txt"), "w") as f:
        f.write(log)
    print("recipes_data: %s refreshed from %s" % (dst, src))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
