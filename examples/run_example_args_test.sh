#!/usr/bin/env bash
# run_example_args_test.sh -- runs an example with the given arguments (both sides in one
# process) and checks that it exits 0 and says both sides finished.
# usage: run_example_args_test.sh BINARY ARG...
set -u
binary=$1
shift
output=$(timeout 60 "$binary" "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "FAIL: $binary $* exited with $status"
  exit 1
fi
if ! grep -q "^OK: server and client both finished successfully" <<<"$output"; then
  echo "FAIL: $binary $*: no OK line"
  exit 1
fi
echo "PASS"
