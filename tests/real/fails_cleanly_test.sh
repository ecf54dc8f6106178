#!/usr/bin/env bash
# fails_cleanly_test.sh BINARY MESSAGE [ARG...] -- a program built against the real librpma
# (no RDMA device here) exits with status 1 after a clear message (MESSAGE), never a crash
# or a hang.
set -u
binary=$1
expected=$2
shift 2
output=$(timeout 60 "$binary" "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 1 ]; then
  echo "FAIL: expected exit status 1, got $status"
  exit 1
fi
if ! grep -qF "$expected" <<<"$output"; then
  echo "FAIL: no clean provider error reported (\"$expected\")"
  exit 1
fi
echo "PASS"
