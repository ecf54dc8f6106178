#!/usr/bin/env bash
# sweep_example_test.sh -- sweeps one example program with rpma-sim-sweep, as librpma's
# run-all-examples.sh --integration-tests does: the client with RPMA_FAULT_INJECTION=1, 2, ...
# against a server without faults, then the server against a client without faults, until a
# run passes no failing point. Every run must end by itself (no hang), without a signal and
# without a sanitizer report, in both processes; a run may fail (that is the point).
#
# SWEEP_STRIDE=K (set by .bazelrc for the sanitizer runs, where a full sweep costs too much
# of CI's time) runs every Kth point only, from a first point that differs per example and
# side, so that the examples together still cover every residue.
#
# usage: sweep_example_test.sh SWEEP BINARY
set -u
sweep=$1
binary=$2
name=$(basename "$binary")
stride=${SWEEP_STRIDE:-1}
common=(--timeout 60 --peer-grace 0.1 --stride "$stride")
status=0

# Runs one sweep; checks it passed points (the mechanism works) and found nothing wrong.
run_sweep() {  # SIDE SWEEP-ARGS...
  local side=$1 out first
  shift
  first=$(( $(printf '%s' "$name.$side" | cksum | cut -d' ' -f1) % stride + 1 ))
  echo "=== $name: sweeping the $side (every ${stride}th point from $first)"
  out=$("$sweep" "${common[@]}" --first "$first" "$@" 2>&1)
  local rc=$?
  echo "$out"
  local points
  points=$(echo "$out" | sed -n 's/.*no fault fired: \([0-9]*\) points in all.*/\1/p')
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: the $side's sweep found a crash, hang or sanitizer error"
    status=1
  elif [ -z "$points" ] || [ "$points" -lt 10 ]; then
    echo "FAIL: the $side passed ${points:-no} fault points in a whole run (expected 10 or more)"
    status=1
  else
    echo "=== $name: $side swept: $points points in a whole run, every run clean"
  fi
}

run_sweep client --before "$binary server 127.0.0.1 {port}" -- "$binary" client 127.0.0.1 '{port}'
run_sweep server --after "$binary client 127.0.0.1 {port}" -- "$binary" server 127.0.0.1 '{port}'
exit "$status"
