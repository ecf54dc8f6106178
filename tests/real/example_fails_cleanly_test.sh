#!/usr/bin/env bash
# example_fails_cleanly_test.sh -- an example built against the real librpma (no RDMA device
# here) exits with status 1 after a clear message, never a crash or a hang.
set -u
binary=$1
output=$(timeout 60 "$binary" both 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 1 ]; then
  echo "FAIL: expected exit status 1, got $status"
  exit 1
fi
if ! grep -q "rpma_utils_get_ibv_context failed: Provider error occurred" <<<"$output"; then
  echo "FAIL: no clean provider error reported"
  exit 1
fi
echo "PASS"
