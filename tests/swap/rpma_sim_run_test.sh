#!/usr/bin/env bash
# rpma_sim_run_test.sh -- rpma-sim-run, installed beside the library by //:install, runs an
# unmodified program built against Debian's librpma (its header, -lrpma) on the simulator:
# over each transport, with each option it takes set in the environment and printed; a fault
# rule makes the program fail where the rule says; bad usage and a missing library are
# refused (exit 2). rpma-sim-sweep, installed beside it, sweeps the same binary through it.
set -u
fail() { echo "FAIL: $*"; exit 1; }
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}
src="$runfiles/rpma_sim/tests/swap/swap_program.c"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/run.XXXXXX")
prefix="$work/prefix"
RUNFILES_DIR="$runfiles" "$runfiles/rpma_sim/install" "$prefix" >/dev/null || fail "install"
run="$prefix/bin/rpma-sim-run"
[ -x "$run" ] || fail "rpma-sim-run is not installed in $prefix/bin"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The program as a user builds it: Debian's /usr/include/librpma.h and its librpma.so.
gcc -std=gnu11 -Wall -Werror -o "$work/program" "$src" -lrpma -libverbs -lpthread \
  || fail "cannot build against Debian's librpma"
"$work/program" "$(free_port)" >/dev/null 2>&1
[ $? -eq 3 ] || fail "the program did not fail cleanly on the real librpma"

# 1. Nothing but the library: the program runs on the simulator; what was set is printed.
out=$("$run" -- "$work/program" "$(free_port)" 2>"$work/err"); rc=$?
[ "$rc" -eq 0 ] || fail "on the simulator: exit $rc: $out $(cat "$work/err")"
grep -q "SWAP OK" <<<"$out" || fail "no SWAP OK: $out"
grep -qx "rpma-sim-run: LD_LIBRARY_PATH=$prefix/lib" "$work/err" || fail "did not print the library: $(cat "$work/err")"
echo "PASS: runs on the simulator"

# 2. Every option, over every transport.
for transport in inproc shm tcp; do
  out=$("$run" --transport "$transport" --seed 7 --pmem 1 --report 1 \
        --trace "$work/trace-$transport.json" -- "$work/program" "$(free_port)" 2>"$work/err"); rc=$?
  [ "$rc" -eq 0 ] && grep -q "SWAP OK" <<<"$out" || fail "$transport: exit $rc: $out $(cat "$work/err")"
  for setting in "RPMA_SIM_TRANSPORT=$transport" RPMA_SIM_SEED=7 RPMA_SIM_PMEM=1 \
                 RPMA_SIM_PERSISTENCE_REPORT=1 "RPMA_SIM_TRACE=$work/trace-$transport.json"; do
    grep -qx "rpma-sim-run: $setting" "$work/err" || fail "$transport: $setting not printed"
  done
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/trace-$transport.json" \
    || fail "$transport: the trace is not JSON"
  echo "PASS: over $transport"
done

# 3. A fault rule: the connect fails as the rule says, and the program says so.
out=$("$run" --quiet --faults "call:fn=rpma_conn_req_connect,err=RPMA_E_PROVIDER" \
      -- "$work/program" "$(free_port)" 2>&1); rc=$?
[ "$rc" -eq 1 ] || fail "with a fault rule: exit $rc, expected 1: $out"
grep -q "rpma_conn_req_connect.*failed: Provider error occurred" <<<"$out" || fail "with a fault rule: $out"
grep -q "^rpma-sim-run:" <<<"$out" && fail "--quiet printed: $out"
echo "PASS: a fault rule"

# 4. Bad usage and a missing library: exit 2, and the program never runs.
expect_refused() {  # expect_refused WHAT ARGS...
  local what=$1
  shift
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2: $out"
  grep -q "SWAP OK" <<<"$out" && fail "$what: the program ran"
  echo "PASS: refused: $what: ${out%%$'\n'*}"
}
expect_refused "an unknown transport" "$run" --transport warp -- "$work/program" 1
expect_refused "a seed that is no number" "$run" --seed x -- "$work/program" 1
expect_refused "a pmem of 2" "$run" --pmem 2 -- "$work/program" 1
expect_refused "no command" "$run" --transport tcp
expect_refused "an unknown option" "$run" --color red -- "$work/program" 1
mkdir "$work/alone"
cp "$run" "$work/alone/"
expect_refused "no library beside it" env -u RUNFILES_DIR "$work/alone/rpma-sim-run" -- "$work/program" 1

# 5. rpma-sim-sweep sweeps the same binary on the simulator through rpma-sim-run: librpma's
# first fault point fires (Debian's release build has none).
out=$("$prefix/bin/rpma-sim-sweep" --max 2 -- "$work/program" "{port}" 2>&1)
grep -Eq '^ +1  rpma_[a-z_]+ ' <<<"$out" || fail "the sweep did not run on the simulator: $out"
echo "PASS: rpma-sim-sweep runs the program through rpma-sim-run"
