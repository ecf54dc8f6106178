#!/usr/bin/env bash
# persistence_cost.sh -- what the persistence model costs on the in-process write path: 64 B
# write latency (median) and 1 MiB write bandwidth from inproc_bench, three runs each, with
#   off       RPMA_SIM_PERSISTENCE_REPORT=0 (nothing tracked)
#   report    the default: the ranges each connection placed, for the report
#   armed     BENCH_ARMED=1: the server's node armed for a power failure (pre-images kept)
# The three are interleaved run by run so that they see the same machine load. Prints one
# Markdown table (recorded in bench/RESULTS.md).
#
#   bench/persistence_cost.sh          # from the workspace root; builds //bench:inproc_bench -c opt
#   INPROC_BENCH=/path/to/inproc_bench bench/persistence_cost.sh   # this binary, no build
set -u -o pipefail
RUNS=${RUNS:-3}
bench=${INPROC_BENCH:-}
if [ -z "$bench" ]; then
  bazel build -c opt //bench:inproc_bench >&2 || exit 1
  bench=$(bazel info -c opt bazel-bin 2>/dev/null)/bench/inproc_bench
fi

# run MODE: one inproc_bench run in that mode; prints "LATENCY_US BANDWIDTH_GIBS".
run() {
  local -a env=()
  case $1 in
    off) env=(RPMA_SIM_PERSISTENCE_REPORT=0) ;;
    report) env=() ;;
    armed) env=(BENCH_ARMED=1) ;;
  esac
  env "${env[@]}" "$bench" 100000 1024 | awk -F'|' '
    $2 ~ /^ write $/ && $3 ~ /^ 64 B $/ { lat = $4 }
    $2 ~ /^ write $/ && $3 ~ /^ 1 MiB $/ { bw = $6 }
    END { gsub(/ /, "", lat); gsub(/ /, "", bw); print lat, bw }'
}

declare -A lat bw
for round in $(seq "$RUNS"); do
  for mode in off report armed; do
    read -r l b < <(run "$mode")
    lat[$mode]+="$l "
    bw[$mode]+="$b "
  done
done

echo "| tracking | 64 B write median latency (us), $RUNS runs | 1 MiB write bandwidth (GiB/s), $RUNS runs |"
echo "|---|---|---|"
for mode in off report armed; do
  echo "| $mode | ${lat[$mode]% } | ${bw[$mode]% } |"
done
