#!/usr/bin/env bash
# info_tool_test.sh -- rpma-sim-info prints the simulated device, every setting with the value
# in effect and where it came from (default, environment, or a value it did not understand),
# this host's transports, and the shared-memory connections under way.
#
# usage: info_tool_test.sh RPMA_SIM_INFO
set -u
info=$1
failures=0
expect() {  # expect DESCRIPTION OUTPUT EXTENDED-REGEX
  if grep -Eq -- "$3" <<<"$2"; then
    echo "ok    $1"
  else
    echo "FAIL  $1: no line matches /$3/ in:"
    echo "$2"
    failures=$((failures + 1))
  fi
}
clean_env=(env -u RPMA_SIM_PMEM -u RPMA_SIM_EADR -u RPMA_SIM_FLUSH_SCOPE -u RPMA_SIM_TRANSPORT
           -u RPMA_SIM_FAULTS -u RPMA_SIM_SEED -u RPMA_FAULT_INJECTION -u RPMA_SIM_TRACE
           -u RPMA_SIM_TRACE_MAX_MB -u RPMA_SIM_SHM_PROCESS_VM -u RPMA_SIM_SHM_DIRECT
           -u RPMA_SIM_PERSISTENCE_REPORT
           -u RPMA_SIM_NATIVE_FLUSH -u RPMA_SIM_NATIVE_ATOMIC_WRITE -u RPMA_SIM_ODP)

out=$("${clean_env[@]}" "$info") || { echo "FAIL: rpma-sim-info exited $?"; exit 1; }
expect "the version" "$out" '^rpma-sim [0-9]+\.[0-9]+\.[0-9]+: the librpma 1\.3\.0 API'
expect "the device" "$out" $'^hca_id:\trpma_sim0$'
expect "persistent memory by default" "$out" $'persistent memory:\tyes'
for setting in RPMA_SIM_PMEM=1 RPMA_SIM_EADR=0 RPMA_SIM_FLUSH_SCOPE=range \
    RPMA_SIM_PERSISTENCE_REPORT=1 RPMA_SIM_NATIVE_FLUSH=0 RPMA_SIM_NATIVE_ATOMIC_WRITE=0 \
    RPMA_SIM_ODP=0 RPMA_SIM_TRANSPORT=auto RPMA_SIM_SHM_PROCESS_VM=1 RPMA_SIM_SHM_DIRECT=1 \
    RPMA_SIM_SHM_SHARE_HEAP=1 \
    'RPMA_SIM_FAULTS=\(none\)' \
    'RPMA_SIM_SEED=\(random\)' 'RPMA_FAULT_INJECTION=\(off\)' 'RPMA_SIM_TRACE=\(off\)' \
    RPMA_SIM_TRACE_MAX_MB=256; do
  expect "$setting by default" "$out" "^	$setting +default"
done
expect "tcp works on loopback" "$out" $'^\ttcp:\t+yes'
expect "shm says whether it works" "$out" $'^\tshm:\t+(yes|no): '
expect "process_vm says whether it works" "$out" $'^\tprocess_vm:\t(yes|no): '
expect "heap regions say how a peer reaches them" "$out" \
  $'^\theap regions:\t(memcpy: |process_vm, |through the target)'
# The connections under way (tests/sim:segment_census_test checks what each line says).
expect "the shared-memory connections under way" "$out" \
  '^shared-memory connections of this user on this host: [0-9]+$'

out=$("${clean_env[@]}" RPMA_SIM_SHM_SHARE_HEAP=0 "$info")
expect "heap sharing turned off" "$out" '^	RPMA_SIM_SHM_SHARE_HEAP=0 +environment;'
expect "heap regions by process_vm when turned off" "$out" \
  $'^\theap regions:\t(process_vm, a system call per operation or per 64 under way \\(RPMA_SIM_SHM_SHARE_HEAP=0\\)|through the target)'

# Without process_vm (as under Yama's ptrace_scope), moved heap pages are still mapped.
out=$("${clean_env[@]}" RPMA_SIM_SHM_PROCESS_VM=0 "$info")
expect "heap regions by memcpy without process_vm" "$out" \
  $'^\theap regions:\tmemcpy: .*partial first or last page through the target\'s threads\\)'

out=$("${clean_env[@]}" RPMA_SIM_PMEM=0 RPMA_SIM_TRANSPORT=tcp RPMA_SIM_SEED=42 \
      RPMA_SIM_FLUSH_SCOPE=qp RPMA_SIM_FAULTS='delay:op=send,us=5' RPMA_FAULT_INJECTION=7 \
      RPMA_SIM_SHM_PROCESS_VM=0 RPMA_SIM_TRACE_MAX_MB=3 RPMA_SIM_SHM_DIRECT=no "$info")
expect "a capability from the environment" "$out" $'persistent memory:\tno'
expect "RPMA_SIM_PMEM from the environment" "$out" '^	RPMA_SIM_PMEM=0 +environment;'
expect "RPMA_SIM_TRANSPORT from the environment" "$out" '^	RPMA_SIM_TRANSPORT=tcp +environment;'
expect "RPMA_SIM_FLUSH_SCOPE from the environment" "$out" '^	RPMA_SIM_FLUSH_SCOPE=qp +environment;'
expect "the seed from the environment" "$out" '^	RPMA_SIM_SEED=42 +environment;'
expect "the rules in force" "$out" '^	RPMA_SIM_FAULTS=delay:op=send,us=5 +environment;'
expect "librpma's fault point" "$out" '^	RPMA_FAULT_INJECTION=7 +environment;'
expect "the trace bound" "$out" '^	RPMA_SIM_TRACE_MAX_MB=3 +environment;'
expect "process_vm turned off" "$out" $'^\tprocess_vm:\tno: RPMA_SIM_SHM_PROCESS_VM=0'
expect "direct access turned off" "$out" '^	RPMA_SIM_SHM_DIRECT=0 +environment;'

out=$("${clean_env[@]}" RPMA_SIM_PMEM=maybe RPMA_SIM_TRANSPORT=carrier-pigeon \
      RPMA_SIM_FAULTS='wc:op=write,status=IBV_WC_NOT_A_STATUS' RPMA_SIM_TRACE_MAX_MB=-1 "$info")
expect "a flag not understood" "$out" \
  '^	RPMA_SIM_PMEM=1 +environment \("maybe" not understood: default used\);'
expect "a transport not understood" "$out" \
  '^	RPMA_SIM_TRANSPORT=auto +environment \("carrier-pigeon" not understood'
expect "rules not understood, with the reason" "$out" \
  '^	RPMA_SIM_FAULTS=\(none: every rpma_peer_new fails with RPMA_E_INVAL\) +environment \(not understood: .*IBV_WC_NOT_A_STATUS'
expect "a bound not understood" "$out" '^	RPMA_SIM_TRACE_MAX_MB=256 +environment \("-1" not understood'

# A seed that is not a number is shown as refused (every rpma_peer_new fails), not as another seed.
out=$("${clean_env[@]}" RPMA_SIM_SEED=seven "$info")
expect "a seed not understood" "$out" \
  '^	RPMA_SIM_SEED=\(none: every rpma_peer_new fails with RPMA_E_INVAL\) +environment \("seven" not understood'

# RPMA_SIM_CRASH_JOURNAL is a setting too (every program run with it records its nodes' crash
# points and writes journals at exit): shown off by default, and where it came from when set.
out=$("${clean_env[@]}" -u RPMA_SIM_CRASH_JOURNAL "$info")
expect "RPMA_SIM_CRASH_JOURNAL off by default" "$out" '^	RPMA_SIM_CRASH_JOURNAL=\(off\) +default'
out=$("${clean_env[@]}" RPMA_SIM_CRASH_JOURNAL=/tmp/journal.%p "$info")
expect "RPMA_SIM_CRASH_JOURNAL from the environment" "$out" \
  '^	RPMA_SIM_CRASH_JOURNAL=/tmp/journal\.%p +environment'

# rpma-sim-info reports RPMA_SIM_TRACE; it must not act on it. A user with the variable
# exported (a server of the run writing the file) who asks rpma-sim-info what is set must not
# have the file truncated and rewritten with rpma-sim-info's own trace, nor get files for
# rpma-sim-info and its probes' children (left without their closing "]").
trace_dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/info-trace.XXXXXX")
echo '[the server is writing this]' >"$trace_dir/run.json"
out=$("${clean_env[@]}" RPMA_SIM_TRACE="$trace_dir/run.json" "$info")
expect "RPMA_SIM_TRACE from the environment" "$out" "^	RPMA_SIM_TRACE=$trace_dir/run.json +environment"
if [ "$(cat "$trace_dir/run.json")" = '[the server is writing this]' ]; then
  echo "ok    rpma-sim-info leaves the RPMA_SIM_TRACE file alone"
else
  echo "FAIL  rpma-sim-info leaves the RPMA_SIM_TRACE file alone; it now holds:"
  head -c 400 "$trace_dir/run.json"; echo
  failures=$((failures + 1))
fi
"${clean_env[@]}" RPMA_SIM_TRACE="$trace_dir/info-%p.json" "$info" >/dev/null
made=$(ls "$trace_dir" | grep -c '^info-' || true)
if [ "$made" -eq 0 ]; then
  echo "ok    rpma-sim-info writes no trace file of its own (%p)"
else
  echo "FAIL  rpma-sim-info writes no trace file of its own (%p): it made $made:"
  ls -l "$trace_dir"
  failures=$((failures + 1))
fi

"$info" -h | grep -q '^usage: rpma-sim-info' || { echo "FAIL  -h prints the usage"; failures=$((failures + 1)); }
"$info" --bogus 2>/dev/null
[ $? -eq 2 ] && echo "ok    an unknown option exits 2" || { echo "FAIL  an unknown option exits 2"; failures=$((failures + 1)); }

echo "$failures failed"
[ "$failures" -eq 0 ]
