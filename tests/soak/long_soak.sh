#!/usr/bin/env bash
# long_soak.sh -- the long soak: builds //tests/soak:soak optimized and runs it for OPS
# operations (default 10 million) split across inproc, shm and tcp, in chunks of CHUNK
# operations (default 1 million) each with its own seed SEED, SEED+1, ..., so a failure names
# a seed that replays it in a short run. Prints each chunk's result and a total line; exits 1
# at the first failing chunk.
#
#   tests/soak/long_soak.sh [OPS] [SEED] [CHUNK]
set -u
cd "$(dirname "$0")/../.."
ops=${1:-10000000}
seed=${2:-$(date +%s)}
chunk=${3:-1000000}
bazel build --jobs=2 -c opt //tests/soak:soak >/dev/null 2>&1 || { echo "build failed"; exit 1; }
# A copy: a later build of another configuration replaces what .bazel/bin points to.
soak=$(mktemp -d)/soak
cp .bazel/bin/tests/soak/soak "$soak"
echo "long soak: $ops operations from seed $seed in chunks of $chunk"
start=$(date +%s)
done_ops=0
while [ "$done_ops" -lt "$ops" ]; do
  n=$(( ops - done_ops < chunk ? ops - done_ops : chunk ))
  out=$("$soak" --seed "$seed" --ops "$n" 2>/dev/null)
  rc=$?
  echo "$out" | grep -E '^soak: (seed|.*FAILED)' | tail -4
  if [ "$rc" -ne 0 ]; then
    echo "long soak: FAILED at seed $seed after $done_ops operations ($(( $(date +%s) - start )) s)"
    echo "$out" | grep FAILED
    exit 1
  fi
  done_ops=$(( done_ops + n ))
  seed=$(( seed + 1 ))
done
echo "long soak: PASSED, $done_ops operations in $(( $(date +%s) - start )) s"
