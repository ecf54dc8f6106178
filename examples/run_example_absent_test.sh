#!/usr/bin/env bash
# run_example_absent_test.sh -- runs an example (both sides in one process) and checks that it
# exits 0 and that no line of its output matches PATTERN (grep -E).
# usage: run_example_absent_test.sh BINARY PATTERN
set -u
binary=$1
pattern=$2
output=$(timeout 60 "$binary" both 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "FAIL: $binary exited with $status"
  exit 1
fi
if grep -Eq -- "$pattern" <<<"$output"; then
  echo "FAIL: a line matches what must not appear: $pattern"
  grep -E -- "$pattern" <<<"$output"
  exit 1
fi
echo "PASS"
