#!/usr/bin/env bash
# crash_states.sh -- how fast rpma-sim-crash judges crash states with a command as the check:
# the remote-log example appending RECORDS records (default 50: 100 writes, 100 flushes) over
# shm, each state's file checked by remote-log-check (a process per state), in loss mode all
# and torn (--torn 2). Prints one Markdown table (recorded in bench/RESULTS.md).
#
#   bench/crash_states.sh        # from the workspace root; builds what it needs with -c opt
set -u -o pipefail
RECORDS=${RECORDS:-50}
bazel build -c opt //api:rpma-sim-crash //examples/remote-log:remote-log \
  //examples/remote-log:remote-log-check >&2 || exit 1
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "| workload | mode | states | seconds | states/s |"
echo "|---|---|---|---|---|"
for torn in 0 2; do
  p=$(port)
  start=$(date +%s.%N)
  out=$("$bin/api/rpma-sim-crash" --torn "$torn" \
    -- env RPMA_SIM_TRANSPORT=shm REMOTE_LOG_FILE="$work/log" "$bin/examples/remote-log/remote-log" server 127.0.0.1 "$p" \
    -- env RPMA_SIM_TRANSPORT=shm REMOTE_LOG_RECORDS="$RECORDS" "$bin/examples/remote-log/remote-log" client 127.0.0.1 "$p" \
    -- "$bin/examples/remote-log/remote-log-check" "{file}")
  end=$(date +%s.%N)
  states=$(sed -n 's/^\([0-9]*\) states, .*/\1/p' <<<"$out")
  python3 -c "import sys; s, t = int(sys.argv[1]), float(sys.argv[3]) - float(sys.argv[2]); print(f'| remote-log, {sys.argv[4]} records | {sys.argv[5]} | {s} | {t:.2f} | {s / t:.0f} |')" \
    "$states" "$start" "$end" "$RECORDS" "$([ "$torn" = 0 ] && echo all || echo "torn (words, lines; 2 seeded)")"
done
