#!/usr/bin/env bash
# run_under_drd.sh -- runs multi-threaded test binaries under Valgrind's DRD (the thread error
# detector librpma's own CI used), with drd.supp, and fails if DRD reports anything that the
# suppression file does not explain, or if a binary fails its own tests under DRD.
#
#   run_under_drd.sh SUPPRESSIONS (NAME TRANSPORT GTEST_FILTER BINARY)...
#
# Each run is four arguments: a name for the summary table, the RPMA_SIM_TRANSPORT to set
# (inproc, shm or tcp; "-" leaves it unset), a --gtest_filter ("*" for all) and the binary.
# Valgrind's own output for each run goes to $TEST_UNDECLARED_OUTPUTS_DIR (kept by Bazel in
# outputs.zip); the report of a failing run is printed in full, with a drafted suppression
# for every unexplained error (--gen-suppressions=all).
set -u

fail() { echo "FAIL: $*" >&2; exit 1; }

# The gtest binaries run here must not write this test's JUnit XML: the verdict is this
# script's exit status, which Bazel puts in the XML it writes when none was written (a
# binary's all-passing XML would hide DRD's reports from the CI's count).
unset XML_OUTPUT_FILE

[ $# -ge 5 ] && [ $((($# - 1) % 4)) -eq 0 ] ||
  fail "usage: $0 SUPPRESSIONS (NAME TRANSPORT GTEST_FILTER BINARY)..."
supp=$1
shift
[ -r "$supp" ] || fail "suppression file $supp not found"

command -v valgrind >/dev/null 2>&1 ||
  fail "valgrind is not on PATH: this test runs the threaded tests under valgrind --tool=drd;" \
    "install it (Debian: apt-get install valgrind; .ci/install does) or leave out tag 'valgrind'"
echo "$(valgrind --version) at $(command -v valgrind)"

out=${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-/tmp}}
# A distinct exit code for "DRD reported errors", so it is told apart from a failing gtest.
readonly drd_error_exit=99
# --fair-sched=yes: the tests and the shared-memory wire spin (yield, then sleep) while they
# wait; Valgrind runs one thread at a time, and without a fair lock a spinning thread can keep
# the one that would end its wait off the CPU for a whole time slice, many times over.
# --num-callers=50: deep enough that every frame drd.supp matches on is in the stack.
drd_flags=(
  --tool=drd
  --check-stack-var=no
  --fair-sched=yes
  --num-callers=50
  --suppressions="$supp"
  --gen-suppressions=all
  --error-exitcode=$drd_error_exit
)
echo "valgrind ${drd_flags[*]}"

rows=()
failed=0
while [ $# -gt 0 ]; do
  name=$1 transport=$2 filter=$3 binary=$4
  shift 4
  [ -x "$binary" ] || fail "$name: $binary is not an executable"
  # Valgrind cannot run sanitizer builds (--config=asan/tsan): say so instead of a crash.
  if grep -qaE '__(asan|tsan)_init' "$binary"; then
    fail "$name: $binary is built with a sanitizer, which valgrind cannot run;" \
      "run this test only in plain builds (the sanitizer configs filter out tag 'valgrind')"
  fi
  log="$out/$name.drd.log"
  env_args=()
  [ "$transport" != "-" ] && env_args=(RPMA_SIM_TRANSPORT="$transport")
  echo
  echo "=== $name: RPMA_SIM_TRANSPORT=$transport ${binary##*/} --gtest_filter=$filter"
  start=$(date +%s.%N)
  env "${env_args[@]}" valgrind "${drd_flags[@]}" --log-file="$log" \
    "$binary" --gtest_filter="$filter" --gtest_brief=1
  rc=$?
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  # "ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 26 from 13)"
  summary=$(grep -E 'ERROR SUMMARY:' "$log" | tail -1)
  errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) errors from ([0-9]+) contexts.*/\1 (\2 contexts)/p' \
    <<<"$summary")
  suppressed=$(sed -nE 's/.*suppressed: ([0-9]+) from ([0-9]+).*/\1 (\2 contexts)/p' <<<"$summary")
  if [ -z "$summary" ]; then
    verdict="NO SUMMARY (valgrind or the binary died)"
  elif [ "$rc" -eq 0 ]; then
    verdict="ok"
  elif [ "$rc" -eq "$drd_error_exit" ]; then
    verdict="DRD REPORTS"
  else
    verdict="TESTS FAILED (exit $rc)"
  fi
  if [ "$verdict" != "ok" ]; then
    failed=1
    echo "--- $name: $verdict; DRD's report ($log):"
    cat "$log"
  fi
  rows+=("$(printf '%-28s %-7s %-32s %8s  %-18s %-20s %s' "$name" "$transport" "$filter" \
    "$seconds" "${errors:--}" "${suppressed:--}" "$verdict")")
done

echo
echo "=== DRD summary (suppressions: ${supp##*/})"
printf '%-28s %-7s %-32s %8s  %-18s %-20s %s\n' run transport gtest_filter seconds \
  "errors" "suppressed" verdict
for row in "${rows[@]}"; do echo "$row"; done
if [ "$failed" -ne 0 ]; then
  echo "FAIL: see the reports above; a false positive of DRD goes into ${supp##*/} with a" \
    "comment saying why, a real race gets fixed"
  exit 1
fi
echo "PASS: no DRD report left unexplained"
