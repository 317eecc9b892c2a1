#!/bin/sh
# Checks cmake/lsan_tracer_retry.sh with stand-in tests: it reruns a command once where the
# only failure is LeakSanitizer's tracer crashing at exit, and never otherwise.
# Usage: lsan_tracer_retry_test.sh PATH/TO/lsan_tracer_retry.sh
set -u
retry=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/nvscope_lsan_retry_test.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
failures=0

# A stand-in test: counts its runs in $work/runs, prints the lines given for run N in
# $work/out.N and exits with $work/rc.N (0 where that file is missing).
cat >"$work/fake.sh" <<'EOF'
n=$(($(cat "$1/runs" 2>/dev/null || echo 0) + 1))
echo "$n" >"$1/runs"
[ -f "$1/out.$n" ] && cat "$1/out.$n"
exit "$(cat "$1/rc.$n" 2>/dev/null || echo 0)"
EOF

tracer='Tracer caught signal 11: addr=0x280 pc=0x7f08dd6e80f0 sp=0x7f08d81ffd10
==12697==LeakSanitizer has encountered a fatal error.'

# case NAME EXPECTED_RUNS EXPECTED_RC: runs the fake through the launcher with the out.N and
# rc.N files set up before, then clears them.
case_() {
  output=$(sh "$retry" sh "$work/fake.sh" "$work" 2>&1)
  rc=$?
  runs=$(cat "$work/runs" 2>/dev/null || echo 0)
  if [ "$runs" != "$2" ] || [ "$rc" != "$3" ]; then
    echo "FAIL $1: ran $runs times (expected $2), exit $rc (expected $3)"
    echo "$output" | sed 's/^/  | /'
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
  rm -f "$work"/runs "$work"/out.* "$work"/rc.*
}

printf '%s\n' "[doctest] Status: SUCCESS!" "$tracer" >"$work/out.1"; echo 134 >"$work/rc.1"
case_ "a tracer crash after a passing test runs it again, and the rerun's pass counts" 2 0
if ! printf '%s\n' "$output" | grep -q "running the test once more"; then
  echo "FAIL the rerun is not announced"; failures=$((failures + 1))
fi

printf '%s\n' "$tracer" >"$work/out.1"; echo 134 >"$work/rc.1"
printf '%s\n' "$tracer" >"$work/out.2"; echo 134 >"$work/rc.2"
case_ "a second tracer crash stays red" 2 134

printf '%s\n' "==1==ERROR: AddressSanitizer: heap-use-after-free" "$tracer" >"$work/out.1"; echo 134 >"$work/rc.1"
case_ "a sanitizer report with the crash is never rerun" 1 134

printf '%s\n' "x.cpp:3:5: runtime error: signed integer overflow" "$tracer" >"$work/out.1"; echo 134 >"$work/rc.1"
case_ "a UBSan report with the crash is never rerun" 1 134

printf '%s\n' "[doctest] Status: FAILURE!" "$tracer" >"$work/out.1"; echo 134 >"$work/rc.1"
case_ "a failed doctest with the crash is never rerun" 1 134

printf '%s\n' "==1==LeakSanitizer has encountered a fatal error." >"$work/out.1"; echo 134 >"$work/rc.1"
case_ "half the signature is never rerun" 1 134

echo 1 >"$work/rc.1"
case_ "an ordinary failure is never rerun" 1 1

echo 77 >"$work/rc.1"
case_ "a skip (77) passes through once" 1 77

printf '%s\n' "$tracer" >"$work/out.1"
case_ "the signature in a passing run changes nothing" 1 0

if sh "$retry" >/dev/null 2>&1; then
  echo "FAIL no command given, yet exit 0"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all cases passed"
