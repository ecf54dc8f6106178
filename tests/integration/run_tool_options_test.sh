#!/usr/bin/env bash
# run_tool_options_test.sh -- rpma-sim-run's options, against a stand-in library folder
# (RPMA_SIM_LIBRARY_DIR; the script only looks for librpma.so.0 in it) and a stand-in command.
#
# usage: run_tool_options_test.sh RPMA_SIM_RUN
set -u
run=$(readlink -f "$1")
failures=0
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
libdir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/run-tool.XXXXXX")
touch "$libdir/librpma.so.0"
export RPMA_SIM_LIBRARY_DIR=$libdir

# --help asks for the usage: it is printed on standard output and the exit status is 0 (as
# rpma-sim-info -h does); "exits 2 on bad usage" is for bad usage.
out=$("$run" --help 2>/dev/null); rc=$?
if [ "$rc" -eq 0 ] && grep -q '^usage: rpma-sim-run' <<<"$out"; then
  echo "ok    --help prints the usage on stdout and exits 0"
else
  fail "--help prints the usage on stdout and exits 0 (exit $rc, stdout '$out')"
fi

# --seed takes what the library takes: a seed the library will not read (2^64 does not fit
# in 64 bits; the library's ParseSeed rejects it and every rpma_peer_new then fails with
# RPMA_E_INVAL) is refused here, with exit 2, before COMMAND runs.
out=$("$run" --seed 18446744073709551616 -- sh -c 'echo COMMAND RAN with RPMA_SIM_SEED=$RPMA_SIM_SEED' 2>&1); rc=$?
if [ "$rc" -eq 2 ] && ! grep -q "COMMAND RAN" <<<"$out"; then
  echo "ok    --seed 18446744073709551616 (2^64) is refused"
else
  fail "--seed 18446744073709551616 (2^64) is refused (exit $rc): $out"
fi
out=$("$run" --seed 18446744073709551615 --quiet -- sh -c 'echo $RPMA_SIM_SEED' 2>&1); rc=$?
[ "$rc" -eq 0 ] && [ "$out" = 18446744073709551615 ] && echo "ok    --seed 2^64-1 is taken" ||
  fail "--seed 2^64-1 is taken (exit $rc: $out)"

# Under `bazel run //api:rpma-sim-run -- ...` (the way the docs give for the source tree),
# Bazel starts the script in its runfiles folder and names the user's folder in
# BUILD_WORKING_DIRECTORY: COMMAND (./my_server), --trace FILE and --faults @FILE are the
# user's relative paths, so COMMAND runs there (as //:install's script honours it).
user_dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/user-dir.XXXXXX")
printf '#!/bin/sh\necho "ran in $(pwd)"\n' >"$user_dir/my_server"
chmod +x "$user_dir/my_server"
runfiles_dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/runfiles.XXXXXX")
out=$(cd "$runfiles_dir" && BUILD_WORKING_DIRECTORY=$user_dir "$run" --quiet -- ./my_server 2>&1); rc=$?
if [ "$rc" -eq 0 ] && [ "$out" = "ran in $user_dir" ]; then
  echo "ok    under bazel run, COMMAND runs in BUILD_WORKING_DIRECTORY"
else
  fail "under bazel run, COMMAND runs in BUILD_WORKING_DIRECTORY (exit $rc): $out"
fi

echo "$failures failed"
[ "$failures" -eq 0 ]
