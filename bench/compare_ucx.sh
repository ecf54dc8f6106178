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
# with UCX's sm. Each rpma-sim row is measured twice: with the server blocked (asleep in
# rpma_conn_next_event, or in rpma_cq_wait in the send test: rpma-sim-perf -e) and with the
# server busy-polling its completion queue (-b). Pairs:
#   write 64 B latency   rpma-sim-perf write_lat (post until its completion is polled: a
#                        round trip) vs ucp_put_lat (ping-pong, half the round trip)
#   read 64 B latency    rpma-sim-perf read_lat vs ucp_get -O 1 (one get at a time)
#   send/recv 64 B       rpma-sim-perf send_lat vs ucp_am_lat (both ping-pong, half round trip)
#   flush 64 B latency   rpma-sim-perf flush_lat (no ucx_perftest counterpart)
#   write bandwidth      rpma-sim-perf write_bw vs ucp_put_bw, 4 KiB, 64 KiB and 1 MiB
#   write message rate   rpma-sim-perf write_bw -s 64 (128 in flight, one in 16 signalled) vs
#                        ucp_put_bw -s 64's message rate, millions of operations per second;
#                        and rpma-sim in one process (`both`, in-process transport)
# Latencies are medians; bandwidths MiB/s (ucx_perftest's "MB/s" is 2^20 bytes per second).
#
# rpma-sim's buffers are heap memory first, as librpma's examples and most programs register
# them, each the size of one message. A region's whole pages move into a shared mapping that
# a peer on the host copies to with memcpy (docs/transports.md); a 64 B region, on part of
# a page, stays, and the peer reaches it with process_vm_writev/readv. The "heap-page" rows
# (64 B ones only) register a 4 KiB heap region on the server and move 64 B in it
# (rpma-sim-perf -r 4096), as a server registers a log or a table. Last, shared mappings of
# files in /dev/shm (rpma-sim-perf -f), as a registered persistent-memory region is a
# mapping of a file and as ucx_perftest's buffers are shared memory that ucp_mem_map
# allocated. Each is a row of its own.
#
# Environment: LAT_ITERS (default 10000), BW_MIB (MiB streamed per bandwidth row, default
# 1024; 200 to 20000 operations), RATE_OPS (writes per message-rate run, default 1000000),
# BUFFERS (the kinds measured, in order: default "heap heap-page file"), RUNS (whole tables,
# default 3). About six minutes per run.
set -u -o pipefail

LAT_ITERS=${LAT_ITERS:-10000}
RATE_OPS=${RATE_OPS:-1000000}
BUFFERS=${BUFFERS:-heap heap-page file}
RUNS=${RUNS:-3}
BUFFER_FLAG=()   # set per measurement: (-f) for file-backed buffers
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

# extract OUT KIND: from a client's output, the median latency (KIND lat, us), the bandwidth
# (bw, MiB/s) or the message rate (rate, million operations per second) rpma-sim-perf printed.
extract() {
  case $2 in
    lat) awk '{ for (i = 1; i < NF; i++) if ($i == "median") print $(i + 1) }' "$1" ;;
    bw) awk '{ for (i = 2; i <= NF; i++) if ($i == "MiB/s") print $(i - 1) }' "$1" ;;
    rate) awk '{ for (i = 2; i <= NF; i++) if ($i == "ops/s") printf "%.2f\n", $(i - 1) / 1e6 }' "$1" ;;
  esac
}

kind_of() {  # kind_of TEST [rate]: lat, bw or rate
  if [[ ${2:-} == rate ]]; then echo rate
  elif [[ $1 == *_lat ]]; then echo lat
  else echo bw; fi
}

# ours MODE TRANSPORT TEST SIZE ITERS [rate]: RESULT = the median latency (us), bandwidth
# (MiB/s) or, with "rate", the message rate (M ops/s), or "n/a". MODE: blocked or busy (the
# server's -e or -b). (Results go through a variable, not $(...), so that every pid is
# recorded in this shell.)
ours() {
  local mode=$1 transport=$2 test=$3 size=$4 iters=$5 kind port log out pid value flag=-e
  kind=$(kind_of "$test" "${6:-}")
  [[ $mode == busy ]] && flag=-b
  RESULT=n/a
  port=$(free_port) || { FAILED=1; return; }
  log=$WORK/ours-$mode-$transport-$test-$size.server
  out=$WORK/ours-$mode-$transport-$test-$size.client
  RPMA_SIM_TRANSPORT=$transport "$PERF" "$test" server $ADDR "$port" "$flag" \
    "${BUFFER_FLAG[@]}" > "$log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  if wait_ready "$pid" "$log" "listening on" "$port"; then
    RPMA_SIM_TRANSPORT=$transport run_client "$out" "$PERF" "$test" client $ADDR "$port" \
      -s "$size" -n "$iters" "${BUFFER_FLAG[@]}"
  else
    echo "server never listened" > "$out"
  fi
  finish_server "$pid"
  value=$(extract "$out" "$kind")
  if [[ -z "$value" ]]; then
    echo "compare_ucx.sh: RPMA_SIM_TRANSPORT=$transport rpma-sim-perf $test -s $size" \
         "(server $flag) failed:" >&2
    cat "$out" "$log" >&2
    FAILED=1
    return
  fi
  RESULT=$value
}

# in_process TEST SIZE ITERS: RESULT = the message rate of rpma-sim-perf TEST both (a server
# thread and the client in one process, the in-process transport), M ops/s.
in_process() {
  local port out=$WORK/in-process.client
  RESULT=n/a
  port=$(free_port) || { FAILED=1; return; }
  RPMA_SIM_TRANSPORT=inproc run_client "$out" "$PERF" "$1" both $ADDR "$port" -s "$2" -n "$3" \
    "${BUFFER_FLAG[@]}"
  RESULT=$(extract "$out" rate)
  if [[ -z "$RESULT" ]]; then
    echo "compare_ucx.sh: rpma-sim-perf $1 both failed:" >&2
    cat "$out" >&2
    RESULT=n/a
    FAILED=1
  fi
}

# ucx TLS TEST SIZE ITERS KIND [extra flags]: RESULT = the median latency (us), bandwidth
# (MiB/s) or message rate (M ops/s), as KIND (lat, bw, rate) says.
ucx() {
  local tls=$1 test=$2 size=$3 iters=$4 kind=$5
  shift 5
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
  local field=2 scale=1
  [[ $kind == bw ]] && field=6
  [[ $kind == rate ]] && field=8 && scale=1e6
  value=$(awk -F, -v f=$field -v scale=$scale \
    'header { if (scale == 1) print $f; else printf "%.2f\n", $f / scale; exit }
     /^iterations,/ { header = 1 }' "$out")
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
row() {  # row OPERATION SIZE SERVER BUFFERS OURS_TCP UCX_TCP OURS_SHM UCX_SM
  local tcp_ratio=- sm_ratio=-
  [[ $6 != - ]] && tcp_ratio=$(ratio "$5" "$6")
  [[ $8 != - ]] && sm_ratio=$(ratio "$7" "$8")
  ROWS+=("| $1 | $(human "$2") | $3 | $4 | $5 | $6 | $tcp_ratio | $7 | $8 | $sm_ratio |")
  echo "measured: $1 $(human "$2"), server $3, $4 buffers" >&2
}

START=$SECONDS
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# measure OPERATION SIZE OURS_TEST UCX_TEST ITERS [rate] [-- UCX flags]: two table rows,
# server blocked and server busy-polling (UCX_TEST "-": no counterpart; UCX measured once).
measure() {
  local operation=$1 size=$2 ours_test=$3 ucx_test=$4 iters=$5 rate= kind tcp=- sm=- mode
  shift 5
  if [[ ${1:-} == rate ]]; then rate=rate; shift; fi
  [[ ${1:-} == -- ]] && shift
  kind=$(kind_of "$ours_test" "$rate")
  if [[ $ucx_test != - ]]; then
    ucx tcp,self "$ucx_test" "$size" "$iters" "$kind" "$@"
    tcp=$RESULT
    ucx sm,self "$ucx_test" "$size" "$iters" "$kind" "$@"
    sm=$RESULT
  fi
  local buffers
  for buffers in $BUFFERS; do
    BUFFER_FLAG=()
    [[ $buffers == file ]] && BUFFER_FLAG=(-f)
    if [[ $buffers == heap-page ]]; then
      ((size >= 4096)) && continue  # the same as heap: the region is a page already
      BUFFER_FLAG=(-r 4096)
    fi
    for mode in blocked busy; do
      ours $mode tcp "$ours_test" "$size" "$iters" $rate
      local ours_tcp=$RESULT
      ours $mode shm "$ours_test" "$size" "$iters" $rate
      row "$operation" "$size" "$mode" "$buffers" "$ours_tcp" "$tcp" "$RESULT" "$sm"
    done
  done
}

for run in $(seq "$RUNS"); do
  ROWS=()
  measure "write latency, round trip (us)" 64 write_lat ucp_put_lat "$LAT_ITERS"
  measure "read latency (us)" 64 read_lat ucp_get "$LAT_ITERS" -- -O 1
  measure "send/recv ping-pong, half round trip (us)" 64 send_lat ucp_am_lat "$LAT_ITERS"
  measure "write + flush latency (us)" 64 flush_lat - "$LAT_ITERS"
  for size in 4096 65536 1048576; do
    measure "write bandwidth (MiB/s)" $size write_bw ucp_put_bw "$(bw_iters $size)"
  done
  measure "write message rate (M ops/s)" 64 write_bw ucp_put_bw "$RATE_OPS" rate
  BUFFER_FLAG=()
  in_process write_bw 64 "$RATE_OPS"
  IN_PROCESS_RATE=$RESULT

  echo "Run $run of $RUNS:"
  echo
  echo "| operation | size | server | buffers | rpma-sim tcp | UCX tcp | ratio | rpma-sim shm | UCX sm | ratio |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "In one process (rpma-sim-perf write_bw both, in-process transport, heap buffers):" \
       "$IN_PROCESS_RATE M 64 B writes/s."
  echo
done
echo "Ratios are rpma-sim / UCX: below 1 is better for latency, above 1 for bandwidth and rate."
echo "rpma-sim's write latency is a round trip, UCX's put latency half of one. UCX was" \
     "measured once per row and run, next to each kind of rpma-sim buffer."
echo "Measured in $((SECONDS - START)) s on $(nproc) cores; load average before: $LOAD_BEFORE," \
     "after: $(cut -d' ' -f1-3 /proc/loadavg)."
exit $FAILED
