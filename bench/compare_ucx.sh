#!/usr/bin/env bash
# compare_ucx.sh -- rpma-sim between two processes against UCX's ucx_perftest, in one run,
# printed as one Markdown table with the ratios (recorded in bench/RESULTS.md).
#
#   bench/compare_ucx.sh            # from the workspace root; builds //bench:rpma-sim-perf -c opt
#   RPMA_SIM_PERF=/path/to/rpma-sim-perf bench/compare_ucx.sh     # use this binary, no build
#
# Needs ucx_perftest (Debian: apt-get install ucx-utils); installs nothing itself.
# Every measurement is a server process and a client process on 127.0.0.1 with a fresh free
# port: rpma-sim-perf with RPMA_SIM_TRANSPORT=tcp and =shm, and ucx_perftest with
# UCX_TLS=tcp,self and UCX_TLS=sm,self; rpma-sim's tcp is compared with UCX's tcp, its shm
# with UCX's sm. Pairs:
#   write 64 B latency   rpma-sim-perf write_lat (post until its completion is polled)
#                        vs ucp_put_lat (ping-pong, half the round trip)
#   read 64 B latency    rpma-sim-perf read_lat vs ucp_get -O 1 (one get at a time)
#   send/recv 64 B       rpma-sim-perf send_lat vs ucp_am_lat (both ping-pong, half round trip)
#   flush 64 B latency   rpma-sim-perf flush_lat (no ucx_perftest counterpart)
#   write bandwidth      rpma-sim-perf write_bw vs ucp_put_bw, 4 KiB, 64 KiB and 1 MiB
# Latencies are medians; bandwidths MiB/s (ucx_perftest's "MB/s" is 2^20 bytes per second).
#
# Environment: LAT_ITERS (default 10000), BW_MIB (MiB streamed per bandwidth row, default 1024;
# 200 to 20000 operations). About a minute in all.
set -u -o pipefail

LAT_ITERS=${LAT_ITERS:-10000}
BW_MIB=${BW_MIB:-1024}
ADDR=127.0.0.1
READY_TIMEOUT=15   # seconds for a server to listen
RUN_TIMEOUT=60     # seconds for one client run

if ! command -v ucx_perftest > /dev/null; then
  echo "compare_ucx.sh: ucx_perftest not found; install Debian's ucx-utils" \
       "(apt-get install ucx-utils)" >&2
  exit 2
fi
for tool in ss timeout; do
  command -v $tool > /dev/null || { echo "compare_ucx.sh: needs $tool" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/compare_ucx.XXXXXX)
PIDS=()   # every server and client started (by pid), killed at exit whatever happens

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2> /dev/null
  done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# forget PID: it has been reaped; never signal that number again (it may be reused).
forget() {
  local kept=() pid
  for pid in "${PIDS[@]}"; do [[ $pid == "$1" ]] || kept+=("$pid"); done
  PIDS=("${kept[@]}")
}
trap 'exit 130' INT TERM

if [[ -n "${RPMA_SIM_PERF:-}" ]]; then
  PERF=$RPMA_SIM_PERF
else
  cd "$(dirname "$0")/.." || exit 2
  bazel build -c opt //bench:rpma-sim-perf >&2 || { echo "compare_ucx.sh: build failed" >&2; exit 2; }
  # Copied: another build may repoint bazel-bin while this runs.
  cp "$(bazel info -c opt bazel-bin 2> /dev/null)/bench/rpma-sim-perf" "$WORK/rpma-sim-perf"
  PERF=$WORK/rpma-sim-perf
fi
[[ -x "$PERF" ]] || { echo "compare_ucx.sh: $PERF is not executable" >&2; exit 2; }

# A TCP port nobody on this host uses (listening or connected), picked at random.
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
    if ! ss -Htan "( sport = :$port or dport = :$port )" | grep -q .; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# wait_ready PID LOG PATTERN PORT: until LOG shows PATTERN (if not empty) and PORT listens,
# the server dies, or READY_TIMEOUT passes.
wait_ready() {
  local pid=$1 log=$2 pattern=$3 port=$4
  local deadline=$((SECONDS + READY_TIMEOUT))
  while ((SECONDS < deadline)); do
    kill -0 "$pid" 2> /dev/null || return 1
    if { [[ -z $pattern ]] || grep -qs "$pattern" "$log"; } &&
       ss -Htln "sport = :$port" | grep -q .; then
      return 0
    fi
    sleep 0.02
  done
  return 1
}

# finish_server PID: the server exits by itself once its client leaves; a bounded wait, then
# it is killed.
finish_server() {
  local pid=$1
  for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  forget "$pid"
}

# run_client OUT COMMAND...: runs a client in the background (so that a signal to this script
# is handled at once) and waits for it.
run_client() {
  local out=$1 pid
  shift
  timeout $RUN_TIMEOUT "$@" > "$out" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  wait "$pid"
  local status=$?
  forget "$pid"
  return $status
}

FAILED=0
RESULT=

# ours TRANSPORT TEST SIZE ITERS: RESULT = the median latency (us) or bandwidth (MiB/s), or
# "n/a". (Results go through a variable, not $(...), so that every pid is recorded in this
# shell.)
ours() {
  local transport=$1 test=$2 size=$3 iters=$4 port log out pid value
  RESULT=n/a
  port=$(free_port) || { FAILED=1; return; }
  log=$WORK/ours-$transport-$test-$size.server
  out=$WORK/ours-$transport-$test-$size.client
  RPMA_SIM_TRANSPORT=$transport "$PERF" "$test" server $ADDR "$port" > "$log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  if wait_ready "$pid" "$log" "listening on" "$port"; then
    RPMA_SIM_TRANSPORT=$transport run_client "$out" "$PERF" "$test" client $ADDR "$port" \
      -s "$size" -n "$iters"
  else
    echo "server never listened" > "$out"
  fi
  finish_server "$pid"
  case $test in
    *_lat) value=$(awk '$1 == "'"$test"'" { for (i = 1; i < NF; i++) if ($i == "median") print $(i + 1) }' "$out") ;;
    *_bw) value=$(awk '$1 == "'"$test"'" { for (i = 2; i <= NF; i++) if ($i == "MiB/s") print $(i - 1) }' "$out") ;;
  esac
  if [[ -z "$value" ]]; then
    echo "compare_ucx.sh: RPMA_SIM_TRANSPORT=$transport rpma-sim-perf $test -s $size failed:" >&2
    cat "$out" "$log" >&2
    FAILED=1
    return
  fi
  RESULT=$value
}

# ucx TLS TEST SIZE ITERS [extra flags]: RESULT = the median latency (us) or bandwidth (MiB/s).
ucx() {
  local tls=$1 test=$2 size=$3 iters=$4
  shift 4
  local port log out pid value tag=${tls%%,*}
  RESULT=n/a
  port=$(free_port) || { FAILED=1; return; }
  log=$WORK/ucx-$tag-$test-$size.server
  out=$WORK/ucx-$tag-$test-$size.client
  UCX_TLS=$tls ucx_perftest -p "$port" > "$log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  # Its "Waiting for connection..." sits in a stdio buffer when redirected: watch the port.
  if wait_ready "$pid" "$log" "" "$port"; then
    UCX_TLS=$tls run_client "$out" ucx_perftest $ADDR -p "$port" -t "$test" -s "$size" \
      -n "$iters" -w $((iters / 10)) -v "$@"
  else
    echo "server never listened" > "$out"
  fi
  finish_server "$pid"
  # -v: a CSV header line "iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,
  # overall_bw,..." and the final numbers on the line after it.
  local field=2
  [[ $test == *_bw ]] && field=6
  value=$(awk -F, -v f=$field 'header { print $f; exit } /^iterations,/ { header = 1 }' "$out")
  if [[ -z "$value" ]]; then
    echo "compare_ucx.sh: UCX_TLS=$tls ucx_perftest -t $test -s $size failed:" >&2
    cat "$out" "$log" >&2
    FAILED=1
    return
  fi
  RESULT=$value
}

bw_iters() {  # BW_MIB per row, between 200 and 20000 operations
  local n=$((BW_MIB * 1048576 / $1))
  ((n > 20000)) && n=20000
  ((n < 200)) && n=200
  echo $n
}

ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "n/a" }'
}

human() {
  if (($1 >= 1048576)); then echo "$(($1 / 1048576)) MiB"
  elif (($1 >= 1024)); then echo "$(($1 / 1024)) KiB"
  else echo "$1 B"; fi
}

ROWS=()
row() {  # row OPERATION SIZE OURS_TCP UCX_TCP OURS_SHM UCX_SM
  local tcp_ratio=- sm_ratio=-
  [[ $4 != - ]] && tcp_ratio=$(ratio "$3" "$4")
  [[ $6 != - ]] && sm_ratio=$(ratio "$5" "$6")
  ROWS+=("| $1 | $(human "$2") | $3 | $4 | $tcp_ratio | $5 | $6 | $sm_ratio |")
  echo "measured: $1 $(human "$2")" >&2
}

START=$SECONDS
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# measure OPERATION SIZE OURS_TEST UCX_TEST ITERS [UCX flags]: one table row (UCX_TEST "-":
# no counterpart).
measure() {
  local operation=$1 size=$2 ours_test=$3 ucx_test=$4 iters=$5 ours_tcp ours_shm tcp=- sm=-
  shift 5
  ours tcp "$ours_test" "$size" "$iters"
  ours_tcp=$RESULT
  ours shm "$ours_test" "$size" "$iters"
  ours_shm=$RESULT
  if [[ $ucx_test != - ]]; then
    ucx tcp,self "$ucx_test" "$size" "$iters" "$@"
    tcp=$RESULT
    ucx sm,self "$ucx_test" "$size" "$iters" "$@"
    sm=$RESULT
  fi
  row "$operation" "$size" "$ours_tcp" "$tcp" "$ours_shm" "$sm"
}

measure "write latency (us)" 64 write_lat ucp_put_lat "$LAT_ITERS"
measure "read latency (us)" 64 read_lat ucp_get "$LAT_ITERS" -O 1
measure "send/recv ping-pong, half round trip (us)" 64 send_lat ucp_am_lat "$LAT_ITERS"
measure "write + flush latency (us)" 64 flush_lat - "$LAT_ITERS"
for size in 4096 65536 1048576; do
  measure "write bandwidth (MiB/s)" $size write_bw ucp_put_bw "$(bw_iters $size)"
done

echo "| operation | size | rpma-sim tcp | UCX tcp | ratio | rpma-sim shm | UCX sm | ratio |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "Ratios are rpma-sim / UCX: below 1 is better for latency, above 1 for bandwidth."
echo "Measured in $((SECONDS - START)) s on $(nproc) cores; load average before: $LOAD_BEFORE," \
     "after: $(cut -d' ' -f1-3 /proc/loadavg)."
exit $FAILED
