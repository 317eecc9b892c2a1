#!/usr/bin/env python3
"""The records nsys's recipes read from an `nsys export --type sqlite` file, as plain text lines
that tests/analyze/recipes_vs_nsys_test.cpp turns into an nvscope trace (Python's own sqlite3:
no library to link). One record a line, tab-separated, its kind first:

  session  startTime stopTime duration utcEpochNs   (ANALYSIS_DETAILS, TARGET_INFO_SESSION_START_TIME)
  process  PID
  kernel   start end device context stream correlation shortName demangledName
  memcpy   start end device context stream correlation bytes copyKind srcKind dstKind
  memset   start end device context stream correlation bytes memKind
  runtime  start end TID correlation name
  nvtx     start end eventType TID endTID domain text    (end "-" for a mark)

Times are the file's own (nanoseconds from the session start), enums nsys's numbers (the
ENUM_CUDA_* tables). Every table of CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME and
NVTX_EVENTS (push/pop, start/end ranges and marks) is written whole, in rowid order. The
session line is what nsys's heatmap recipes place the report by (`collective_loader.py`'s
ProfileInfo: the analysis' duration, binned from the report's time zero, and the session's
wall-clock start, which aligns several reports). Several files, one pair each:
  nsys_sqlite_records.py IN.sqlite OUT.txt [IN2.sqlite OUT2.txt ...]
"""
import sqlite3
import sys


def rows(db, sql):
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError:  # a table nsys did not write: no such records
        return []


def field(v):
    return "-" if v is None else str(v).replace("\t", " ").replace("\n", " ")


def main(src, dst):
    db = sqlite3.connect("file:%s?mode=ro" % src, uri=True)
    out = [("session",) + r for r in rows(db, """
        SELECT a.startTime, a.stopTime, a.duration, s.utcEpochNs
        FROM ANALYSIS_DETAILS AS a, TARGET_INFO_SESSION_START_TIME AS s LIMIT 1""")]
    for (pid,) in rows(db, "SELECT DISTINCT (globalPid >> 24) & 0xFFFFFF FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        out.append(("process", pid))
    out += [("kernel",) + r for r in rows(db, """
        SELECT k.start, k.end, k.deviceId, k.contextId, k.streamId, k.correlationId, s.value, d.value
        FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.shortName
        JOIN StringIds AS d ON d.id = k.demangledName ORDER BY k.rowid""")]
    out += [("memcpy",) + r for r in rows(db, """
        SELECT start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind, srcKind, dstKind
        FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY rowid""")]
    out += [("memset",) + r for r in rows(db, """
        SELECT start, end, deviceId, contextId, streamId, correlationId, bytes, memKind
        FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY rowid""")]
    out += [("runtime",) + r for r in rows(db, """
        SELECT r.start, r.end, r.globalTid & 0xFFFFFF, r.correlationId, s.value
        FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s ON s.id = r.nameId ORDER BY r.rowid""")]
    out += [("nvtx",) + r for r in rows(db, """
        SELECT n.start, n.end, n.eventType, n.globalTid & 0xFFFFFF, coalesce(n.endGlobalTid, n.globalTid) & 0xFFFFFF,
               n.domainId, coalesce(n.text, s.value, '')
        FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
        WHERE n.eventType IN (34, 59, 60) ORDER BY n.rowid""")]
    with open(dst, "w") as f:
        for r in out:
            f.write("\t".join(field(v) for v in r) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or len(sys.argv) % 2 == 0:
        sys.exit(__doc__)
    for i in range(1, len(sys.argv), 2):
        main(sys.argv[i], sys.argv[i + 1])
    sys.exit(0)
