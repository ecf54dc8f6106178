#!/usr/bin/env bash
# run_example_test.sh -- runs an example (both sides in one process) and checks its output.
# usage: run_example_test.sh [OPTION...] BINARY [PATTERN...]
#   every PATTERN (grep -E) must appear, and the program must end within 60 s;
#   --args "ARG..."   run BINARY ARG... instead of BINARY both;
#   --absent PATTERN  no line may match PATTERN;
#   --fails           one side fails (a fault rule in the test's env): the program must exit
#                     1 with its "FAILED (" line, not hang.
set -u
args=(both)
absent=()
fails=0
while [ $# -gt 0 ]; do
  case $1 in
    --args) read -r -a args <<<"$2"; shift 2 ;;
    --absent) absent+=("$2"); shift 2 ;;
    --fails) fails=1; shift ;;
    *) break ;;
  esac
done
binary=$1
shift
output=$(timeout 60 "$binary" "${args[@]}" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 124 ]; then
  echo "FAIL: $binary ${args[*]} still ran after 60 s (hung)"
  exit 1
fi
if [ "$fails" -eq 1 ]; then
  expected_status=1
  set -- "$@" "^FAILED \\("
else
  expected_status=0
  set -- "$@" "^OK: server and client both finished successfully"
fi
if [ "$status" -ne "$expected_status" ]; then
  echo "FAIL: $binary ${args[*]} exited with $status, expected $expected_status"
  exit 1
fi
for pattern in "$@"; do
  if ! grep -Eq -- "$pattern" <<<"$output"; then
    echo "FAIL: no line matches: $pattern"
    exit 1
  fi
done
for pattern in "${absent[@]}"; do
  if grep -Eq -- "$pattern" <<<"$output"; then
    echo "FAIL: a line matches what must not appear: $pattern"
    exit 1
  fi
done
echo "PASS"
