#!/usr/bin/env bash
# run_example_fails_test.sh -- runs an example (both sides in one process) under a fault that
# makes one side fail (set in the test's env), and checks that the program ends within 20 s
# with exit status 1 and its "FAILED (...)" line, instead of hanging.
# usage: run_example_fails_test.sh BINARY
set -u
binary=$1
output=$(timeout 20 "$binary" both 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 124 ]; then
  echo "FAIL: $binary both still ran after 20 s (hung: one side failed, the other waits)"
  exit 1
fi
if [ "$status" -ne 1 ]; then
  echo "FAIL: $binary both exited with $status, expected 1"
  exit 1
fi
if ! grep -q "^FAILED (" <<<"$output"; then
  echo "FAIL: no FAILED line"
  exit 1
fi
echo "PASS"
