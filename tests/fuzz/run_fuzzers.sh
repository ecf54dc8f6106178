#!/usr/bin/env bash
# run_fuzzers.sh -- runs libFuzzer binaries (tests/fuzz, built with --config=fuzz) for a
# bounded time or number of runs each, from their seed corpus, and prints the executions
# per target and in total. Fails if any fuzzer found something (a crash, a broken
# invariant, a leak, an ASan or UBSan report, a timeout or running out of memory): its
# report is printed and the input that did it saved (the path is printed).
#
#   tests/fuzz/run_fuzzers.sh [-t SECONDS] [-r RUNS] [-j PARALLEL] [FUZZER...]
#
# -t: seconds per target (default 10); -r: at most this many inputs per target (default: no
# limit); -j: fuzzers run at once (default 1). With no FUZZER, builds every target with
# `bazel build --config=fuzz --jobs=2 //tests/fuzz/...` and runs them all (from the source
# tree: the long run of docs/testing-the-project.md). Each target's seeds are tests/fuzz/corpus/<name>/
# (relative to the current directory: the workspace, or a Bazel test's runfiles); what a run
# adds goes to a scratch directory, not to the repository.
set -u
seconds=10
runs=-1
parallel=1
while getopts "t:r:j:" option; do
  case $option in
    t) seconds=$OPTARG ;;
    r) runs=$OPTARG ;;
    j) parallel=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
fuzzers=("$@")
if [ "${#fuzzers[@]}" -eq 0 ]; then
  cd "$(dirname "$0")/../.." || exit 2
  bazel build --config=fuzz --jobs=2 //tests/fuzz/... || exit 1
  fuzzers=(.bazel/bin/tests/fuzz/*_fuzzer)
fi
scratch=${TEST_TMPDIR:-$(mktemp -d /tmp/rpma-sim-fuzz.XXXXXX)}
artifacts=${TEST_UNDECLARED_OUTPUTS_DIR:-$scratch}

# fuzz FUZZER: one run; its log in $scratch/<name>.log, its status in <name>.status.
fuzz() {
  local fuzzer=$1
  local name
  name=$(basename "$fuzzer" _fuzzer)
  mkdir -p "$scratch/$name.corpus"
  local start=$SECONDS
  "$fuzzer" -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 -timeout=25 \
    -artifact_prefix="$artifacts/$name-" "$scratch/$name.corpus" "tests/fuzz/corpus/$name" \
    >"$scratch/$name.log" 2>&1
  echo "$? $((SECONDS - start))" >"$scratch/$name.status"
}

for fuzzer in "${fuzzers[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
  fuzz "$fuzzer" &
done
wait

total=0
failed=0
printf '%-22s %14s %8s %10s  %s\n' target executions seconds exec/s result
for fuzzer in "${fuzzers[@]}"; do
  name=$(basename "$fuzzer" _fuzzer)
  read -r status elapsed <"$scratch/$name.status"
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log" | tail -1)
  executions=${executions:-0}
  total=$((total + executions))
  result=ok
  if [ "$status" -ne 0 ] || [ "$executions" -eq 0 ]; then
    result="FAILED (exit $status)"
    failed=$((failed + 1))
  fi
  printf '%-22s %14d %8d %10d  %s\n' "$name" "$executions" "$elapsed" \
    $((executions / (elapsed > 0 ? elapsed : 1))) "$result"
done
printf '%-22s %14d\n' total "$total"

for fuzzer in "${fuzzers[@]}"; do
  name=$(basename "$fuzzer" _fuzzer)
  read -r status _ <"$scratch/$name.status"
  [ "$status" -eq 0 ] && continue
  echo "=== $name: the end of its log ($scratch/$name.log); inputs saved as $artifacts/$name-*"
  tail -n 60 "$scratch/$name.log"
done
[ "$failed" -eq 0 ]
