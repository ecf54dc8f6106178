#!/usr/bin/env bash
# tools_link_the_simulator_test.sh -- the query result (a path from the simulator's tools to
# the real backend, if any; tests/real/BUILD) must be empty.
# usage: tools_link_the_simulator_test.sh QUERY_OUTPUT
set -u
if [ -s "$1" ]; then
  echo "FAIL: a simulator tool reaches the real backend (under --config=real it would be"
  echo "linked with Debian's librpma, whose rpma_sim_* are stubs):"
  cat "$1"
  exit 1
fi
echo "PASS"
