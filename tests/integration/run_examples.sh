#!/usr/bin/env bash
# run_examples.sh -- runs every example program as two processes or forced onto TCP in one,
# and checks its output.
#
# usage: run_examples.sh MODE BINARY...
#   two-processes: `BINARY server 127.0.0.1 PORT` in one process and `BINARY client 127.0.0.1
#                  PORT` in another, over the transport RPMA_SIM_TRANSPORT names (tcp or
#                  shm; a forced shm connection fails rather than fall back). Two hosts:
#                  EXAMPLES_SERVER_NETNS and EXAMPLES_CLIENT_NETNS name network namespaces
#                  to run each side in (ip netns exec), EXAMPLES_SERVER_ADDR the server's
#                  address there (default 127.0.0.1);
#   forced-tcp:    `BINARY both` (two threads of one process) with RPMA_SIM_TRANSPORT=tcp.
#
# EXAMPLES_MEMCHECK=1 runs every process under valgrind's memcheck, as librpma's CI ran its
# examples: each must report 0 errors and no definite leak, and no thread may still be
# running when it exits (a running thread's stack shows as a "possibly lost" block
# allocated by pthread_create). The valgrind logs are kept in the test's outputs.
#
# Each example must exit 0 (both processes), every expect pattern of its example() in
# examples/*/BUILD must appear (a "[server]" pattern in the server's output, a "[client]" one
# in the client's), and each side must print its "done" line; the example's env applies too.
#
# The examples' BUILD files are not visible to other packages (no exports_files), so they
# cannot be data of this test: they are read from the source tree, found by following this
# script's runfiles symlink back to the workspace (hence the test is tagged "external").
# Prints a PASS/FAIL table at the end and fails if any example failed.
set -u

mode=${1:-}
shift || true
case "$mode" in
  two-processes | forced-tcp) ;;
  *)
    echo "usage: $0 two-processes|forced-tcp BINARY..." >&2
    exit 2
    ;;
esac
if [ "$#" -eq 0 ]; then
  echo "usage: $0 two-processes|forced-tcp BINARY..." >&2
  exit 2
fi
# The workspace: this script is tests/integration/run_examples.sh in it.
script=$(readlink -f "${BASH_SOURCE[0]}")
source_root=$(cd "$(dirname "$script")/../.." && pwd)
if [ ! -f "$source_root/examples/example.bzl" ]; then
  echo "cannot find the source tree (looked in $source_root)" >&2
  exit 1
fi

echo "mode $mode, RPMA_SIM_TRANSPORT=${RPMA_SIM_TRANSPORT:-(unset)}"
server_addr=${EXAMPLES_SERVER_ADDR:-127.0.0.1}
server_prefix=()
client_prefix=()
[ -n "${EXAMPLES_SERVER_NETNS:-}" ] && server_prefix=(ip netns exec "$EXAMPLES_SERVER_NETNS")
[ -n "${EXAMPLES_CLIENT_NETNS:-}" ] && client_prefix=(ip netns exec "$EXAMPLES_CLIENT_NETNS")
work=${TEST_TMPDIR:-$(mktemp -d)}
logs=${TEST_UNDECLARED_OUTPUTS_DIR:-$work}
listen_deadline_s=20   # the server must say "listening on" within this
run_timeout_s=60       # each process must finish within this
memcheck=${EXAMPLES_MEMCHECK:-0}
if [ "$memcheck" = 1 ]; then
  command -v valgrind >/dev/null || { echo "EXAMPLES_MEMCHECK=1 needs valgrind on PATH" >&2; exit 1; }
  listen_deadline_s=60
  run_timeout_s=180
fi

free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# What example(name = NAME) in the BUILD file FILE declares. `patterns`: its expect patterns
# (what its own test greps for), one per line; `env`: its env, as NAME=VALUE lines.
example_info() {  # FILE NAME patterns|env
  python3 -c '
import ast, sys
path, name, what = sys.argv[1], sys.argv[2], sys.argv[3]
for node in ast.walk(ast.parse(open(path).read(), path)):
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "example"):
        continue
    attrs = {k.arg: k.value for k in node.keywords}
    if "name" not in attrs or ast.literal_eval(attrs["name"]) != name:
        continue
    if what == "env":
        env = ast.literal_eval(attrs["env"]) if "env" in attrs else {}
        for key in sorted(env):
            print("%s=%s" % (key, env[key]))
    else:
        for pattern in ast.literal_eval(attrs["expect"]) if "expect" in attrs else []:
            print(pattern)
    sys.exit(0)
sys.exit("no example(name = %r) in %s" % (name, path))
' "$1" "$2" "$3"
}

# Prints FILE with every line prefixed by LABEL.
show() {  # LABEL FILE
  sed "s/^/    $1| /" "$2"
}

# Waits up to SECONDS for process PID to end; kills it (SIGKILL) if it does not.
# Returns 0 if it ended by itself.
wait_bounded() {  # PID SECONDS
  local pid=$1 ticks=$(($2 * 20))
  while kill -0 "$pid" 2>/dev/null && [ "$ticks" -gt 0 ]; do
    sleep 0.05
    ticks=$((ticks - 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
    return 1
  fi
  return 0
}

# Sets the array `wrapper` to what runs one side (NAME.SIDE) of an example: nothing, or
# memcheck writing its report to $logs/NAME.SIDE.memcheck.
memcheck_wrapper() {  # NAME SIDE
  wrapper=()
  [ "$memcheck" = 1 ] || return 0
  wrapper=(valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite
           --show-leak-kinds=definite,possible --num-callers=40 --error-exitcode=97 --vgdb=no
           "--log-file=$logs/$1.$2.memcheck")
}

# Checks the memcheck report of NAME.SIDE; appends reasons to $reasons.
check_memcheck() {  # NAME SIDE
  [ "$memcheck" = 1 ] || return 0
  local report="$logs/$1.$2.memcheck" summary
  if [ ! -f "$report" ]; then
    reasons+="no memcheck report for the $2; "
    return
  fi
  summary=$(grep -Eo 'ERROR SUMMARY: [0-9]+ errors' "$report" | tail -n 1)
  echo "  $2 memcheck: ${summary:-no summary}; $(grep -Eo 'definitely lost: [0-9,]+ bytes' "$report" || echo 'no leaks')"
  if [ "$summary" != "ERROR SUMMARY: 0 errors" ]; then
    reasons+="memcheck: ${summary:-no summary} in the $2 (see $(basename "$report")); "
    sed -n '/^==[0-9]*== [A-Z][a-z]/,/^==[0-9]*== $/p' "$report" | head -n 80
  fi
  # A block that pthread_create allocated and that is only "possibly" reachable at exit is
  # the thread-local storage of a thread that was still running.
  if awk '/blocks are possibly lost/ {block = 1; next} /^==[0-9]*== $/ {block = 0}
          block && /pthread_create/ {found = 1} END {exit !found}' "$report"; then
    reasons+="memcheck: a thread of the $2 was still running at exit (see $(basename "$report")); "
    grep -A 14 'blocks are possibly lost' "$report" | head -n 40
  fi
}

# Runs a command with the example test's env ($example_env) added to the environment (the
# command may start with more NAME=VALUE words, which win).
with_example_env() {
  local -a assignments=()
  local line
  while IFS= read -r line; do
    [ -n "$line" ] && assignments+=("$line")
  done <<<"$example_env"
  env "${assignments[@]}" "$@"
}

# Checks the expect patterns and the "done" lines; appends reasons to $reasons.
check_output() {  # NAME SERVER_OUT CLIENT_OUT COMBINED_OUT
  local name=$1 server_out=$2 client_out=$3 combined=$4 pattern target patterns
  if ! patterns=$(example_info "$build_file" "$name" patterns); then
    reasons+="cannot read the expect patterns of $name from $build_file; "
    return
  fi
  if [ -z "$patterns" ]; then
    reasons+="$build_file declares no expect patterns for $name; "
  fi
  while IFS= read -r pattern; do
    [ -z "$pattern" ] && continue
    if [[ $pattern == *'\[server\]'* ]]; then
      target=$server_out
    elif [[ $pattern == *'\[client\]'* ]]; then
      target=$client_out
    else
      target=$combined
    fi
    if ! grep -Eq -- "$pattern" "$target"; then
      reasons+="no line matches /$pattern/ in $(basename "$target"); "
    fi
  done <<<"$patterns"
  grep -Eq '^\[server\] done$' "$server_out" || reasons+="no \"[server] done\" line; "
  grep -Eq '^\[client\] done$' "$client_out" || reasons+="no \"[client] done\" line; "
}

run_two_processes() {  # BINARY NAME
  local binary=$1 name=$2 port server_pid attempt ticks listening=0
  local server_out="$work/$name.server.out" client_out="$work/$name.client.out"
  local combined="$work/$name.combined.out"
  # The port is free when picked but could be taken before the server binds it: retry then.
  for attempt in 1 2 3; do
    port=$(free_port) || { reasons+="cannot pick a free port; "; return; }
    : >"$server_out"
    memcheck_wrapper "$name" server
    with_example_env "${server_prefix[@]}" "${wrapper[@]}" "$binary" server "$server_addr" "$port" \
      >"$server_out" 2>&1 &
    server_pid=$!
    ticks=$((listen_deadline_s * 20))
    while [ "$ticks" -gt 0 ]; do
      if grep -q "listening on" "$server_out"; then listening=1; break; fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.05
      ticks=$((ticks - 1))
    done
    [ "$listening" -eq 1 ] && break
    if kill -0 "$server_pid" 2>/dev/null; then
      kill -KILL "$server_pid" 2>/dev/null
      wait "$server_pid" 2>/dev/null
      show server "$server_out"
      reasons+="the server did not say \"listening on\" within ${listen_deadline_s}s; "
      return
    fi
    wait "$server_pid" 2>/dev/null
    echo "  attempt $attempt: the server exited before listening on port $port:"
    show server "$server_out"
  done
  if [ "$listening" -ne 1 ]; then
    reasons+="the server never listened; "
    return
  fi

  memcheck_wrapper "$name" client
  with_example_env timeout "$run_timeout_s" \
    "${client_prefix[@]}" "${wrapper[@]}" "$binary" client "$server_addr" "$port" \
    >"$client_out" 2>&1
  local client_status=$? server_status
  if wait_bounded "$server_pid" "$run_timeout_s"; then
    wait "$server_pid"
    server_status=$?
  else
    wait "$server_pid" 2>/dev/null
    server_status=killed
  fi
  echo "  port $port: server exit $server_status, client exit $client_status"
  show server "$server_out"
  show client "$client_out"
  if [ "$server_status" = killed ]; then
    reasons+="the server did not exit within ${run_timeout_s}s after the client (killed); "
  elif [ "$server_status" -ne 0 ]; then
    reasons+="the server exited with $server_status; "
  fi
  if [ "$client_status" -eq 124 ]; then
    reasons+="the client did not finish within ${run_timeout_s}s; "
  elif [ "$client_status" -ne 0 ]; then
    reasons+="the client exited with $client_status; "
  fi
  cat "$server_out" "$client_out" >"$combined"
  check_output "$name" "$server_out" "$client_out" "$combined"
  check_memcheck "$name" server
  check_memcheck "$name" client
}

run_forced_tcp() {  # BINARY NAME
  local binary=$1 name=$2
  local out="$work/$name.both.out"
  with_example_env RPMA_SIM_TRANSPORT=tcp timeout "$run_timeout_s" "$binary" both >"$out" 2>&1
  local status=$?
  echo "  RPMA_SIM_TRANSPORT=tcp $name both: exit $status"
  show both "$out"
  if [ "$status" -eq 124 ]; then
    reasons+="did not finish within ${run_timeout_s}s; "
  elif [ "$status" -ne 0 ]; then
    reasons+="exited with $status; "
  fi
  grep -Eq '^OK: server and client both finished successfully' "$out" ||
    reasons+="no \"OK: server and client both finished successfully\" line; "
  check_output "$name" "$out" "$out" "$out"
}

declare -a names=() results=()
failed=0
for binary in "$@"; do
  name=$(basename "$binary")
  build_file="$source_root/$(dirname "$binary")/BUILD"
  reasons=""
  echo "=== $name ($mode)"
  if [ ! -x "$binary" ]; then
    reasons="no executable $binary; "
  elif [ ! -f "$build_file" ]; then
    reasons="no $build_file to read the expected lines from; "
  elif ! example_env=$(example_info "$build_file" "$name" env); then
    reasons="cannot read the env of $name from $build_file; "
  elif [ "$mode" = two-processes ]; then
    run_two_processes "$binary" "$name"
  else
    run_forced_tcp "$binary" "$name"
  fi
  names+=("$name")
  if [ -z "$reasons" ]; then
    results+=("PASS")
  else
    results+=("FAIL: ${reasons%; }")
    failed=$((failed + 1))
    echo "  FAIL: ${reasons%; }"
  fi
done

echo
echo "=== $mode: results"
for i in "${!names[@]}"; do
  printf '%-42s %s\n' "${names[$i]}" "${results[$i]}"
done
echo "$((${#names[@]} - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
