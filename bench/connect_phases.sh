#!/bin/bash
# connect_phases.sh -- where one connect's time goes: uprobes on the connection setup's
# functions in both processes of rpma-sim-scale, then a table of the median time from one
# probe to the next, following a connect around (client application, server engine, server
# application, client engine, client application).
#
# usage: bench/connect_phases.sh [shm|tcp] [N]             (default: shm 3000)
#   RPMA_SIM_SCALE=/path/to/rpma-sim-scale bench/connect_phases.sh ...   (no build)
# Needs root (uprobes), perf (Debian's linux-perf) and python3. Each probe costs a few
# microseconds, so a probed connect is slower than an unprobed one; compare phases, and
# builds measured the same way.
set -euo pipefail

TRANSPORT=${1:-shm}
CONNECTIONS=${2:-3000}
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
GROUP=rpma_sim_connect_$$
SERVER_PID=

cleanup() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null || true
  perf probe -q -d "$GROUP:*" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ -n "${RPMA_SIM_SCALE:-}" ]]; then
  SCALE=$RPMA_SIM_SCALE
else
  (cd "$HERE" && bazel build -c opt //bench:rpma-sim-scale >&2)
  cp "$HERE/.bazel/bin/bench/rpma-sim-scale" "$WORK/rpma-sim-scale"
  SCALE=$WORK/rpma-sim-scale
fi

nm -C "$SCALE" > "$WORK/symbols"
# probe NAME SYMBOL [return]: a probe at the function whose demangled name starts with SYMBOL.
probe() {
  local address
  address=$(awk -v s="$2" 'index($0, " T " s) { print "0x" $1; exit }' "$WORK/symbols")
  [[ -n $address ]] || { echo "connect_phases.sh: no symbol $2 in $SCALE" >&2; exit 1; }
  perf probe -x "$SCALE" -a "$GROUP:$1=$address${3:+%return}" >/dev/null 2>"$WORK/probe.err" ||
    { echo "connect_phases.sh: perf probe $1:" >&2; cat "$WORK/probe.err" >&2; exit 1; }
}
probe connect_call rpma_conn_req_connect
probe next_event_done rpma_conn_next_event return
probe next_request_done rpma_ep_next_conn_req return
probe create 'rpma_sim::ShmSegment::Create('
probe create_done 'rpma_sim::ShmSegment::Create(' return
probe open 'rpma_sim::ShmSegment::Open('
probe open_done 'rpma_sim::ShmSegment::Open(' return
probe tcp_connect 'rpma_sim::SocketStream::Connect('
probe tcp_connect_done 'rpma_sim::SocketStream::Connect(' return
probe send_hello 'rpma_sim::WireConnection::SendHello('
probe on_hello 'rpma_sim::WireConnection::OnHello('
probe deliver 'rpma_sim::Listener::DeliverLocked('
probe send_accept 'rpma_sim::WireConnection::SendAccept('
probe on_accept 'rpma_sim::WireConnection::OnAccept('
probe on_accept_done 'rpma_sim::WireConnection::OnAccept(' return

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RPMA_SIM_TRANSPORT=$TRANSPORT "$SCALE" server 127.0.0.1 "$PORT" "$CONNECTIONS" \
  > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 200); do grep -q listening "$WORK/server.log" && break; sleep 0.05; done
grep -q listening "$WORK/server.log" ||
  { echo "connect_phases.sh: the server did not listen:" >&2; cat "$WORK/server.log" >&2; exit 1; }
if ! perf record -q -e "$GROUP:*" -a -o "$WORK/perf.data" -- env RPMA_SIM_TRANSPORT="$TRANSPORT" \
    "$SCALE" client 127.0.0.1 "$PORT" "$CONNECTIONS" > "$WORK/client.log" 2>&1; then
  echo "connect_phases.sh: the client failed:" >&2
  cat "$WORK/client.log" "$WORK/server.log" >&2
  exit 1
fi
wait "$SERVER_PID" || true
SERVER_PID=
perf script -i "$WORK/perf.data" -F tid,time,event 2>/dev/null > "$WORK/events.txt"
echo "# $(grep -o 'client: .*MiB$' "$WORK/client.log" || cat "$WORK/client.log")"

python3 - "$WORK/events.txt" "$TRANSPORT" <<'EOF'
import re, statistics, sys

# (event, by the client's application thread or not, what the time up to it is)
PHASES = [
    ("create", None, "client: up to ShmSegment::Create"),
    ("create_done", None, "client: ShmSegment::Create"),
    ("tcp_connect", None, "client: up to the TCP connect"),
    ("tcp_connect_done", None, "client: SocketStream::Connect"),
    ("send_hello", None, "client: session set up"),
    ("on_hello", None, "HELLO -> server engine, WireConnection::OnHello (a wake-up)"),
    ("open", None, "server: the HELLO decoded"),
    ("open_done", None, "server: ShmSegment::Open"),
    ("deliver", None, "server: the request to the listener"),
    ("next_request_done", None, "server application wakes, rpma_ep_next_conn_req returns"),
    ("send_accept", None, "server: rpma_conn_req_connect up to SendAccept"),
    ("on_accept", None, "ACCEPT -> client engine, WireConnection::OnAccept (a wake-up)"),
    ("on_accept_done", None, "client: OnAccept"),
    ("next_event_done", True, "client application wakes with ESTABLISHED"),
]
events = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*(\d+)\s+([\d.]+):\s+\w+:(\w+)", line)
    if m:
        events.append((float(m.group(2)) * 1e6, int(m.group(1)), m.group(3).replace("__return", "")))
client = next((tid for _, tid, name in events if name == "tcp_connect"), None)
if client is None:
    sys.exit("connect_phases.sh: no connect was recorded")
cycles, current = [], None
for ts, tid, name in events:
    if name == "connect_call" and tid == client:
        if current:
            cycles.append(current)
        current = {"connect_call": ts}
    elif current is not None:
        key = name + ("@client" if name == "next_event_done" and tid == client else "")
        current.setdefault(key, ts)
if current:
    cycles.append(current)
middle = cycles[len(cycles) // 10: len(cycles) * 9 // 10] or cycles
times = {label: [] for _, _, label in PHASES}
whole = []
for cycle in middle:
    if "next_event_done@client" not in cycle or "on_accept" not in cycle:
        continue
    previous = cycle["connect_call"]
    for name, by_client, label in PHASES:
        key = name + ("@client" if by_client else "")
        if key in cycle:
            times[label].append(cycle[key] - previous)
            previous = cycle[key]
    whole.append(cycle["next_event_done@client"] - cycle["connect_call"])
print("| phase (%s) | median (us) | mean (us) |" % sys.argv[2])
print("|---|---|---|")
for _, _, label in PHASES:
    if times[label]:
        print("| %s | %.0f | %.0f |" % (label, statistics.median(times[label]),
                                       statistics.mean(times[label])))
whole.sort()
if not whole:
    sys.exit("connect_phases.sh: no whole connect was recorded")
print("| **one connect** (%d of them; p99 %.0f us, max %.0f us) | **%.0f** | **%.0f** |" %
      (len(whole), whole[int(len(whole) * 0.99)], whole[-1], statistics.median(whole),
       statistics.mean(whole)))
EOF
