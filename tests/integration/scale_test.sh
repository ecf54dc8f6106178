#!/usr/bin/env bash
# scale_test.sh -- 2000 connections per process (bench/rpma_sim_scale.cc): in process (both
# sides as two threads), and client and server as two processes over TCP and over shared
# memory. Each side must connect all of them, write on each, disconnect them all and find
# the data in place, with at most 4 simulator threads and one fd of its own per connection
# (+64 for the rest) while every connection is open. In process the connects go one after
# another, then with 32 under way at once (--window); between two processes the client
# keeps 32 under way, so the server's listener and both engines handle many handshakes
# interleaved (the examples' tests connect one at a time over tcp and shm).
#
# usage: scale_test.sh RPMA_SIM_SCALE_BINARY
set -u
scale=$1
connections=2000
max_sim_threads=4
max_fds=$((connections + 64))
window=32
work=${TEST_TMPDIR:-$(mktemp -d)}
failed=0

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Checks one side's report line: its fds.
check_line() {  # LABEL LINE
  local fds
  echo "  $1: $2"
  fds=$(sed -n 's/.* fds \([0-9]*\),.*/\1/p' <<<"$2")
  if [ -z "$fds" ]; then
    echo "FAIL: $1: no report line"
    failed=1
  elif [ "$fds" -gt "$max_fds" ]; then
    echo "FAIL: $1: $fds fds with $connections connections open (at most $max_fds)"
    failed=1
  fi
}

# Both sides as two threads of one process, WINDOW connects under way at once.
in_process() {  # WINDOW
  local label="in process, window $1" out status
  echo "=== $label: $connections connections, both sides in one process"
  out=$(RPMA_SIM_TRANSPORT=inproc timeout 300 "$scale" both 127.0.0.1 "$(free_port)" \
    "$connections" --max-sim-threads "$max_sim_threads" --window "$1" 2>&1)
  status=$?
  echo "$out"
  [ "$status" -eq 0 ] || { echo "FAIL: $label: exit $status"; failed=1; }
  check_line "$label" "$(grep '^client:' <<<"$out")"
}

in_process 1
in_process "$window"

# Client and server as two processes over TRANSPORT (tcp or shm).
two_processes() {  # TRANSPORT
  local transport=$1 port out client_status server_status
  echo "=== $transport: $connections connections, client and server as two processes," \
    "$window connects under way at once"
  port=$(free_port)
  : >"$work/server.out"
  RPMA_SIM_TRANSPORT=$transport timeout 300 "$scale" server 127.0.0.1 "$port" "$connections" \
    --max-sim-threads "$max_sim_threads" >"$work/server.out" 2>&1 &
  local server_pid=$!
  timeout 60 tail -n +1 --pid="$server_pid" -f "$work/server.out" | grep -q -m1 "listening on"
  out=$(RPMA_SIM_TRANSPORT=$transport timeout 300 "$scale" client 127.0.0.1 "$port" \
    "$connections" --max-sim-threads "$max_sim_threads" --window "$window" 2>&1)
  client_status=$?
  wait "$server_pid"
  server_status=$?
  cat "$work/server.out"
  echo "$out"
  [ "$client_status" -eq 0 ] || { echo "FAIL: $transport client: exit $client_status"; failed=1; }
  [ "$server_status" -eq 0 ] || { echo "FAIL: $transport server: exit $server_status"; failed=1; }
  check_line "$transport client" "$(grep '^client:' <<<"$out")"
  check_line "$transport server" "$(grep '^server: [0-9]' "$work/server.out")"
}

two_processes tcp

# Each shared-memory connection takes about 180 KiB of /dev/shm (rings for librpma's default
# queue depth); a smaller /dev/shm (a container's default 64 MiB) is said plainly, not left
# to show as connect errors.
shm_needed_kib=$((connections * 200))
shm_free_kib=$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')
if [ "${shm_free_kib:-0}" -lt "$shm_needed_kib" ]; then
  echo "FAIL: shm: /dev/shm has ${shm_free_kib:-0} KiB free; $connections connections need" \
    "about $shm_needed_kib KiB (enlarge it, e.g. docker run --shm-size=1g)"
  failed=1
else
  two_processes shm
fi

[ "$failed" -eq 0 ] && echo "PASS" || echo "FAILED"
exit "$failed"
