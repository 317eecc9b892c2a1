"""Refreshes tests/data/nsys_nccl from the nsys_nccl.tgz that bench/run/ddp_merge.sh packs
(bench/gpu_extras.sh PART=merge HOSTS_PER_RANK=1 NPROC=2): each rank's sqlite export reduced to
the tables nsys's NCCL and heatmap recipes read, and nsys's recipe CSVs beside them, all from one
run, so that tests/analyze/recipes_vs_nsys_test compares nvscope's recipes with nsys's on the
very records nsys read.

  python3 bench/fidelity/nccl_data.py nsys_nccl.tgz [tests/data/nsys_nccl]

The reduction: every table but CUPTI_ACTIVITY_KIND_KERNEL, StringIds, ANALYSIS_DETAILS and
TARGET_INFO_SESSION_START_TIME dropped; of StringIds only the kernels' names kept (shortName,
demangledName, mangledName); VACUUM. The README of the folder is kept.
"""
import os
import shutil
import sqlite3
import sys
import tarfile
import tempfile

KEEP = {"CUPTI_ACTIVITY_KIND_KERNEL", "StringIds", "ANALYSIS_DETAILS", "TARGET_INFO_SESSION_START_TIME"}


def reduce(path):
    db = sqlite3.connect(path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    missing = {"CUPTI_ACTIVITY_KIND_KERNEL", "StringIds"} - set(tables)
    if missing:
        sys.exit("nccl_data: %s has no %s" % (path, ", ".join(sorted(missing))))
    for t in tables:
        if t not in KEEP:
            db.execute('DROP TABLE "%s"' % t)
    db.execute("DELETE FROM StringIds WHERE id NOT IN (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION "
               "SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT mangledName FROM CUPTI_ACTIVITY_KIND_KERNEL)")
    db.commit()
    db.execute("VACUUM")
    kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    db.close()
    return kernels


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[5].strip())
    archive, dest = sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "tests/data/nsys_nccl"
    work = tempfile.mkdtemp()
    try:
        with tarfile.open(archive) as t:
            t.extractall(work, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(work)
        ranks = sorted(f for f in os.listdir(work) if f.endswith(".sqlite"))
        if not ranks:
            sys.exit("nccl_data: %s holds no sqlite export" % archive)
        for f in os.listdir(dest) if os.path.isdir(dest) else []:
            if f != "README.md":
                p = os.path.join(dest, f)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        os.makedirs(dest, exist_ok=True)
        for f in ranks:
            shutil.copy(os.path.join(work, f), os.path.join(dest, f))
            print("%s: %d kernels, %d bytes" % (f, reduce(os.path.join(dest, f)), os.path.getsize(os.path.join(dest, f))))
        for d in sorted(os.listdir(work)):
            if d.startswith("nsys_recipe_") and os.path.isdir(os.path.join(work, d)):
                shutil.copytree(os.path.join(work, d), os.path.join(dest, d))
                print("%s: %s" % (d, ", ".join(sorted(os.listdir(os.path.join(dest, d))))))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
