#!/bin/sh
# lsan_tracer_retry.sh COMMAND [ARGS...]
#
# Runs a test command built with AddressSanitizer and reruns it once, only once, when the
# single thing that went wrong is LeakSanitizer's own stop-the-world tracer crashing at exit
# ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error"): a known
# sanitizer flake, rare per process (google/sanitizers#1353), that aborts before any leak is
# looked for. With some 70 leak-checked processes a CI run, it reddens a run now and then
# although the test passed.
#
# Never rerun, so still red: any sanitizer or doctest report (an "ERROR: ", "SUMMARY: " or
# "runtime error:" line, a doctest FAILURE status), half the signature, any other non-zero
# exit, and a second tracer crash. The output of each run is printed, with one line between
# saying why the command runs again. Exit status: the last run's.
set -u
if [ "$#" -eq 0 ]; then
  echo "lsan_tracer_retry: no command given" >&2
  exit 2
fi

log=$(mktemp "${TMPDIR:-/tmp}/nvscope_lsan_retry.XXXXXX") || exit 2
trap 'rm -f "$log"' EXIT

run() {
  "$@" >"$log" 2>&1
  status=$?
  cat "$log"
}

tracer_crash_only() {
  grep -q -F 'Tracer caught signal' "$log" &&
    grep -q -F 'LeakSanitizer has encountered a fatal error' "$log" &&
    ! grep -q -E 'ERROR: |SUMMARY: |runtime error:|\[doctest\] Status: FAILURE' "$log"
}

run "$@"
if [ "$status" -ne 0 ] && tracer_crash_only; then
  echo "lsan_tracer_retry: LeakSanitizer's tracer crashed at exit with nothing reported" \
       "(google/sanitizers#1353); running the test once more"
  run "$@"
fi
exit "$status"
