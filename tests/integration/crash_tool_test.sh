#!/usr/bin/env bash
# crash_tool_test.sh CRASH REMOTE_LOG REMOTE_LOG_TAIL_FIRST CHECK -- rpma-sim-crash on the
# remote-log example, in process (one process, both sides), over shm and over tcp (a server
# and a client process), in loss mode all and torn: the tail-first client's order is found
# (the record's flush named as the point), the right order passes, and the replay line the
# tool prints makes an ordinary run leave a log that the check cannot recover.
set -u
crash=$1
right=$2
wrong=$3
check=$4
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/crash.XXXXXX")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# explore TRANSPORT BINARY [TORN]: prints the tool's output; its status in $status.
explore() {
  local transport=$1 binary=$2 torn=${3:-0}
  local log="$work/log-$transport" port
  port=$(free_port)
  if [ "$transport" = inproc ]; then
    "$crash" --torn "$torn" --timeout 30 \
      -- env RPMA_SIM_TRANSPORT=inproc REMOTE_LOG_FILE="$log" "$binary" both \
      -- -- "$check" "{file}" >"$work/out" 2>&1
  else
    "$crash" --torn "$torn" --timeout 30 \
      -- env RPMA_SIM_TRANSPORT="$transport" REMOTE_LOG_FILE="$log" "$binary" server 127.0.0.1 "$port" \
      -- env RPMA_SIM_TRANSPORT="$transport" "$binary" client 127.0.0.1 "$port" \
      -- "$check" "{file}" >"$work/out" 2>&1
  fi
  status=$?
}

# A --ready that is not a regular expression is a usage error before anything runs: the
# server is never started (it would have made its log file).
"$crash" --ready "(" -- env REMOTE_LOG_FILE="$work/never" "$right" server 127.0.0.1 "$(free_port)" \
  -- "$right" client 127.0.0.1 1 -- "$check" "{file}" >"$work/out" 2>&1
status=$?
[ "$status" -eq 2 ] || { cat "$work/out"; fail "a bad --ready exited $status, not 2"; }
[ ! -e "$work/never" ] || fail "a bad --ready still started the server"
echo "PASS: a bad --ready is a usage error before the server starts"

# A CHECK that cannot be run (a typo in its path) judges nothing: the run could not be
# explored (exit 2, saying so), not 13 failed states with replay lines for crash bugs that
# the right order does not have.
"$crash" --timeout 30 \
  -- env RPMA_SIM_TRANSPORT=inproc REMOTE_LOG_FILE="$work/log-no-check" "$right" both \
  -- -- "$work/no-such-check" "{file}" >"$work/out" 2>&1
status=$?
[ "$status" -eq 2 ] || { cat "$work/out"; fail "a CHECK that cannot run exited $status, not 2"; }
echo "PASS: a CHECK that cannot run is not a failed state"

# A node's journal that cannot be explored (damaged: here a garbage one written after the
# server's nodes wrote theirs) is no pass for the nodes that explored cleanly: exit 2.
# shellcheck disable=SC2016 # expanded by the inner shell
"$crash" --timeout 30 \
  -- sh -c 'env RPMA_SIM_TRANSPORT=inproc REMOTE_LOG_FILE="$1" "$2" both || exit
            n=1; while [ -e "$RPMA_SIM_CRASH_JOURNAL.$n" ]; do n=$((n + 1)); done
            printf garbage >"$RPMA_SIM_CRASH_JOURNAL.$n"' sh "$work/log-damaged" "$right" \
  -- -- "$check" "{file}" >"$work/out" 2>&1
status=$?
[ "$status" -eq 2 ] && grep -q "cannot be explored" "$work/out" ||
  { cat "$work/out"; fail "a damaged node journal exited $status, not 2"; }
echo "PASS: a node journal that cannot be explored is no pass"

# The replay line is a shell command to paste: a word with a quote in it (a path with an
# apostrophe) must come out quoted so that the shell reads it back as the same word.
"$crash" --timeout 30 \
  -- env RPMA_SIM_TRANSPORT=inproc "REMOTE_LOG_FILE=$work/it's a log" "$wrong" both \
  -- -- "$check" "{file}" >"$work/out" 2>&1
status=$?
[ "$status" -eq 1 ] || { cat "$work/out"; fail "the wrong order in a quoted file was not found (exit $status)"; }
line=$(grep -A1 "^replay point" "$work/out" | head -2 | tail -1)
words=$(bash -c "set -- $line; printf '%s\n' \"\$@\"" 2>&1)
printf '%s\n' "$words" | grep -qxF "REMOTE_LOG_FILE=$work/it's a log" ||
  { echo "replay line: $line"; echo "the shell reads it as:"; echo "$words"; fail "the replay line does not give the server's words back"; }
echo "PASS: the replay line quotes a word with a quote in it"

# A number option that is negative or does not fit is a usage error before anything runs,
# as a word is: not wrapped around to 4294967295 samples, 0 torn states or a timeout that has
# passed already.
for bad in "--torn -1" "--torn 4294967296" "--timeout -1" "--timeout 4294967297" "--max-states -1"; do
  rm -f "$work/started"
  # shellcheck disable=SC2086 # the option and its value are two words
  timeout 60 "$crash" $bad -- touch "$work/started" -- -- true >"$work/out" 2>&1
  status=$?
  [ "$status" -eq 2 ] && grep -q "takes a whole number" "$work/out" && [ ! -e "$work/started" ] ||
    { cat "$work/out"; fail "'$bad' was taken (exit $status): not a usage error before the server starts"; }
done
echo "PASS: a negative or too large number is a usage error before the server starts"

for transport in inproc shm tcp; do
  for torn in 0 2; do
    explore "$transport" "$wrong" "$torn"
    [ "$status" -eq 1 ] || { cat "$work/out"; fail "$transport torn=$torn: the wrong order was not found (exit $status)"; }
    # The first record: its flush comes after the tail's, and a crash just before it leaves
    # a tail over a record that is not there.
    grep -E -A1 "FAILED .*persistent flush of 24 bytes at offset 64 " "$work/out" |
      grep -q "exit 1: not recovered: record 1" ||
      { cat "$work/out"; fail "$transport torn=$torn: the record's flush is not named"; }
    grep -q "^replay point" "$work/out" || { cat "$work/out"; fail "$transport: no replay line"; }
    echo "PASS: $transport torn=$torn: the wrong order is found: $(tail -1 "$work/out")"
    [ "$transport" = shm ] && [ "$torn" = 0 ] && cp "$work/out" "$work/wrong-shm.out"

    explore "$transport" "$right" "$torn"
    [ "$status" -eq 0 ] || { cat "$work/out"; fail "$transport torn=$torn: the right order failed"; }
    grep -Eq "^[0-9]+ states, 0 failed$" "$work/out" || { cat "$work/out"; fail "$transport: no summary"; }
    echo "PASS: $transport torn=$torn: the right order recovers in every state: $(tail -1 "$work/out")"
  done
done

# The lint of the run: the tail-first order leaves nothing unflushed, but every record's
# flush comes after a tail that already covers it.
grep -q "^lint: " "$work/wrong-shm.out" && echo "lint lines: $(grep -c '^lint: ' "$work/wrong-shm.out")"

# The replay: the printed rule in an ordinary run of the server, with the client; the check
# then fails on the file the server left.
rule=$(grep -A1 "^replay point" "$work/wrong-shm.out" | head -2 | tail -1 |
  sed -n "s/.*RPMA_SIM_FAULTS='\([^']*\)'.*/\1/p")
[ -n "$rule" ] || { cat "$work/wrong-shm.out"; fail "no rule in the replay line"; }
port=$(free_port)
log="$work/replay-log"
: >"$work/replay-server.out"  # before the server's redirection: tail must find the file
RPMA_SIM_TRANSPORT=shm RPMA_SIM_FAULTS="$rule" REMOTE_LOG_FILE="$log" \
  "$wrong" server 127.0.0.1 "$port" >"$work/replay-server.out" 2>&1 &
server=$!
timeout 30 tail -n +1 --pid="$server" -f "$work/replay-server.out" | grep -q -m1 "listening on"
RPMA_SIM_TRANSPORT=shm timeout 30 "$wrong" client 127.0.0.1 "$port" >"$work/replay-client.out" 2>&1
wait "$server"
server_status=$?
[ "$server_status" -eq 1 ] || { cat "$work/replay-server.out"; fail "the replayed server exited $server_status, not 1 (the rule's exit)"; }
"$check" "$log" >"$work/replay-check.out" 2>&1
check_status=$?
[ "$check_status" -eq 1 ] || { cat "$work/replay-check.out"; fail "the check recovered the replayed log"; }
echo "PASS: the replay ($rule) leaves: $(cat "$work/replay-check.out")"
