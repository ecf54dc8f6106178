#!/usr/bin/env bash
# two_hosts_test.sh -- two hosts on one machine: network namespaces joined by a veth pair,
# with link-local addresses (169.254.x.y). First the write example runs as server in one and
# client in the other and its data must arrive end to end; then every example does, checked
# by run_examples.sh. RPMA_SIM_TRANSPORT is left unset: auto must pick TCP, as the server's
# address belongs to the other namespace. The namespaces are removed whatever happens.
# Where creating namespaces is not permitted (not root, no CAP_SYS_ADMIN), the test reports
# itself skipped with the reason.
#
# usage: two_hosts_test.sh RUN_EXAMPLES WRITE_BINARY EXAMPLE_BINARY...
set -u
unset RPMA_SIM_TRANSPORT
run_examples=$1
binary=$2
shift 2
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

port=7204
ip netns exec "$ns_a" "$binary" server "$addr_a" "$port" >"$work/server.txt" 2>&1 &
server_pid=$!
# Wait for the server's "listening" line itself (tail -f follows the file as it grows);
# 20 s is only a safety net.
timeout 20 tail -n +1 --pid="$server_pid" -f "$work/server.txt" | grep -q -m1 "listening on"
grep -q "listening on" "$work/server.txt" || { cat "$work/server.txt"; fail "the server did not listen"; }

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
