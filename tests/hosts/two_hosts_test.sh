#!/usr/bin/env bash
# two_hosts_test.sh -- two hosts on one machine: network namespaces joined by a veth pair,
# with link-local addresses (169.254.x.y). First the write example runs as server in one and
# client in the other and its data must arrive end to end; then every example does, checked
# by run_examples.sh. RPMA_SIM_TRANSPORT is left unset: auto must pick TCP, as the server's
# address belongs to the other namespace. Last, a connection whose link goes down (no FIN,
# no RST): both sides must get RPMA_CONN_LOST and their outstanding receive flushed, in a
# few seconds (probes after 2 s of silence, the connection ended after 5 s; printed). Before
# that, a connect to an address nobody has must end in RPMA_CONN_UNREACHABLE after the
# connection's timeout.
# The namespaces are removed whatever happens.
# Where creating namespaces is not permitted (not root, no CAP_SYS_ADMIN), the test reports
# itself skipped with the reason.
#
# usage: two_hosts_test.sh RUN_EXAMPLES WRITE_BINARY LINK_WATCH EXAMPLE_BINARY...
set -u
unset RPMA_SIM_TRANSPORT
run_examples=$1
binary=$2
link_watch=$3
shift 3
skip() {
  echo "SKIPPED: $*"
  # A test that cannot run here says so in its XML result too.
  if [ -n "${XML_OUTPUT_FILE:-}" ]; then
    cat > "$XML_OUTPUT_FILE" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="two_hosts" tests="1" skipped="1"><testcase name="two_hosts" status="notrun"><skipped message="$*"/></testcase></testsuite></testsuites>
XML
  fi
  exit 0
}
fail() { echo "FAIL: $*"; exit 1; }

command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
[ "$(id -u)" -eq 0 ] || skip "creating network namespaces needs root"

# Names and addresses unique to this run, so parallel runs never collide.
tag=$(printf '%04x' $(( ($$ ^ RANDOM) & 0xffff )))
ns_a="rpmasim-a-$tag"
ns_b="rpmasim-b-$tag"
veth_a="rsa$tag"
veth_b="rsb$tag"
octet=$(( (0x$tag % 250) + 1 ))
addr_a="169.254.$octet.1"
addr_b="169.254.$octet.2"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/hosts.XXXXXX")

cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null
  [ -n "${client_pid:-}" ] && kill "$client_pid" 2>/dev/null
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  ip link del "$veth_a" 2>/dev/null
}
trap cleanup EXIT

if ! ip netns add "$ns_a" 2>"$work/err"; then
  skip "ip netns add is not permitted here: $(cat "$work/err")"
fi
ip netns add "$ns_b" || fail "ip netns add $ns_b"
ip link add "$veth_a" type veth peer name "$veth_b" || fail "veth pair"
ip link set "$veth_a" netns "$ns_a" && ip link set "$veth_b" netns "$ns_b" || fail "move veth"
ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a" && ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b" \
  || fail "addresses"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_b" link set "$veth_b" up || fail "link up"

# Waits (20 s at most, a safety net) until FILE has a line matching PATTERN or PID ends.
# FILE must exist already: the background process's redirection may not have created it yet
# (hence the ": >FILE" before each start; without it, tail once found no file and gave up).
wait_line() {  # FILE PATTERN PID
  timeout 20 tail -n +1 --pid="$3" -f "$1" | grep -q -m1 "$2"
  grep -q "$2" "$1"
}

port=7204
: >"$work/server.txt"
ip netns exec "$ns_a" "$binary" server "$addr_a" "$port" >"$work/server.txt" 2>&1 &
server_pid=$!
wait_line "$work/server.txt" "listening on" "$server_pid" ||
  { cat "$work/server.txt"; fail "the server did not listen"; }

timeout 60 ip netns exec "$ns_b" "$binary" client "$addr_a" "$port" >"$work/client.txt" 2>&1
client_rc=$?
timeout 60 tail --pid="$server_pid" -f /dev/null
wait "$server_pid"
server_rc=$?
server_pid=""
echo "--- server on $addr_a (namespace $ns_a)"; cat "$work/server.txt"
echo "--- client on $addr_b (namespace $ns_b)"; cat "$work/client.txt"
[ "$client_rc" -eq 0 ] || fail "client exited with $client_rc"
[ "$server_rc" -eq 0 ] || fail "server exited with $server_rc"
grep -q 'the client has left; my memory now holds "Written by the client with rpma_write."' \
  "$work/server.txt" || fail "the server's memory does not hold the client's bytes"
grep -q "the read-back matches what I wrote" "$work/client.txt" || fail "read-back"
echo "PASS: write and read-back between $addr_b and $addr_a over TCP across two namespaces"

echo "--- every example, server in $ns_a ($addr_a), client in $ns_b"
EXAMPLES_SERVER_NETNS="$ns_a" EXAMPLES_CLIENT_NETNS="$ns_b" EXAMPLES_SERVER_ADDR="$addr_a" \
  bash "$run_examples" two-processes "$@" || fail "an example failed across the namespaces"

addr_none="169.254.$octet.3"
echo "--- a client in $ns_b connects to $addr_none, which nobody has"
start_ns=$(date +%s%N)
timeout 60 ip netns exec "$ns_b" "$link_watch" client "$addr_none" 7206 >"$work/nobody.txt" 2>&1
nobody_ms=$((($(date +%s%N) - start_ns) / 1000000))
cat "$work/nobody.txt"
grep -q "^NOT ESTABLISHED: RPMA_CONN_UNREACHABLE" "$work/nobody.txt" ||
  fail "connecting to an address nobody has did not end in RPMA_CONN_UNREACHABLE"
# The connect gives up after the connection's timeout (1 s); the bound is generous.
[ "$nobody_ms" -le 15000 ] || fail "the unreachable connect took ${nobody_ms} ms"
echo "PASS: RPMA_CONN_UNREACHABLE after ${nobody_ms} ms"

echo "--- the link between $ns_a and $ns_b goes down under an idle connection"
port=7205
: >"$work/link_server.txt"
: >"$work/link_client.txt"
ip netns exec "$ns_a" "$link_watch" server "$addr_a" "$port" >"$work/link_server.txt" 2>&1 &
server_pid=$!
wait_line "$work/link_server.txt" "listening on" "$server_pid" ||
  { cat "$work/link_server.txt"; fail "link_watch server did not listen"; }
ip netns exec "$ns_b" "$link_watch" client "$addr_a" "$port" >"$work/link_client.txt" 2>&1 &
client_pid=$!
wait_line "$work/link_client.txt" ESTABLISHED "$client_pid" &&
  wait_line "$work/link_server.txt" ESTABLISHED "$server_pid" ||
  { cat "$work/link_server.txt" "$work/link_client.txt"; fail "link_watch did not connect"; }
start_ns=$(date +%s%N)
ip -n "$ns_a" link set "$veth_a" down && ip -n "$ns_b" link set "$veth_b" down || fail "link down"
wait "$client_pid"
client_rc=$?
client_ms=$((($(date +%s%N) - start_ns) / 1000000))
wait "$server_pid"
server_rc=$?
server_ms=$((($(date +%s%N) - start_ns) / 1000000))
client_pid=""
server_pid=""
echo "--- link_watch server (namespace $ns_a), exit $server_rc after ${server_ms} ms"
cat "$work/link_server.txt"
echo "--- link_watch client (namespace $ns_b), exit $client_rc after ${client_ms} ms"
cat "$work/link_client.txt"
for side in server client; do
  grep -q "^EVENT RPMA_CONN_LOST" "$work/link_$side.txt" || fail "the $side did not lose its connection"
  grep -q "^RECEIVE IBV_WC_WR_FLUSH_ERR" "$work/link_$side.txt" || fail "the $side's receive was not flushed"
done
[ "$client_rc" -eq 0 ] && [ "$server_rc" -eq 0 ] || fail "link_watch failed"
# A generous bound (the machine may be slow); what it took is printed above.
[ "$server_ms" -le 15000 ] || fail "the connection was lost only after ${server_ms} ms"
echo "PASS: both sides lost the connection ${client_ms} ms (client) and ${server_ms} ms (server) after the link went down"
