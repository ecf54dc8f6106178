#!/usr/bin/env bash
# run_example_test.sh -- runs an example (both sides in one process) and checks its output.
# usage: run_example_test.sh BINARY [PATTERN...]; every PATTERN (grep -E) must appear.
set -u
binary=$1
shift
output=$("$binary" both 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "FAIL: $binary exited with $status"
  exit 1
fi
for pattern in "$@" "^OK: server and client both finished successfully"; do
  if ! grep -Eq -- "$pattern" <<<"$output"; then
    echo "FAIL: no line matches: $pattern"
    exit 1
  fi
done
echo "PASS"
