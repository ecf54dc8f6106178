#!/usr/bin/env bash
# runtime_swap_test.sh -- installs rpma-sim (//:install), then proves that a program built
# outside Bazel against Debian's librpma runs on the simulator unchanged:
#  1. built with Debian's header and -lrpma, it fails cleanly on the real library here;
#  2. the same binary with LD_LIBRARY_PATH=PREFIX/lib runs on the simulator;
#  3. built with `pkg-config --cflags --libs librpma` from PREFIX, it runs too;
#  4. the installed librpma.so.0 exports exactly the real library's 84 symbols + rpma_sim_*.
set -u
fail() { echo "FAIL: $*"; exit 1; }
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}
src="$runfiles/rpma_sim/tests/swap/swap_program.c"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/swap.XXXXXX")
prefix="$work/prefix"

RUNFILES_DIR="$runfiles" "$runfiles/rpma_sim/install" "$prefix" || fail "install"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# 1. Debian's header and library.
gcc -std=gnu11 -Wall -Werror -o "$work/swap_real" "$src" -lrpma -libverbs -lpthread \
  || fail "cannot build against Debian's librpma"
out=$("$work/swap_real" "$(free_port)" 2>&1); rc=$?
echo "real librpma: exit $rc: $out"
[ "$rc" -eq 3 ] || fail "expected a clean failure (exit 3) on the real library, got $rc"
grep -q "Provider error occurred" <<<"$out" || fail "no provider error from the real library"

# 2. The same binary, the simulator swapped in at run time. A sanitizer build of the library
# (--config=asan) needs its runtime loaded first.
preload=""
for runtime in asan ubsan; do
  if readelf -d "$prefix/lib/librpma.so.0" | grep -q "lib$runtime.so"; then
    preload="$preload $(gcc -print-file-name=lib$runtime.so)"
  fi
done
run_swapped() {  # run_swapped BINARY: on the simulator
  LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH="$prefix/lib" "$@"
}
out=$(run_swapped "$work/swap_real" "$(free_port)" 2>&1); rc=$?
echo "simulator via LD_LIBRARY_PATH: exit $rc: $out"
[ "$rc" -eq 0 ] || fail "the swapped binary failed on the simulator"
grep -q "SWAP OK" <<<"$out" || fail "no SWAP OK"
grep -q 'server: received "hello over the simulator"; memory holds "written by the swapped-in client"' \
  <<<"$out" || fail "the server did not see the client's data"

# 3. A pkg-config build against the installed simulator.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs librpma) \
  || fail "pkg-config does not find librpma in $prefix"
gcc -std=gnu11 -Wall -Werror -o "$work/swap_pc" "$src" $flags -libverbs -lpthread \
  || fail "pkg-config build"
out=$(run_swapped "$work/swap_pc" "$(free_port)" 2>&1); rc=$?
echo "pkg-config build: exit $rc"
[ "$rc" -eq 0 ] && grep -q "SWAP OK" <<<"$out" || fail "the pkg-config build failed: $out"

# 4. Exported symbols.
real_lib=$(gcc -print-file-name=librpma.so.0)
[ -f "$real_lib" ] || real_lib=/usr/lib/x86_64-linux-gnu/librpma.so.0
# rpma_sim.h's functions, as its prototypes name them.
sim_functions=$(grep -Eo '^int (rpma_sim_[a-z_]+)\(' "$prefix/include/rpma_sim.h" | sed 's/^int //; s/($//')
[ -n "$sim_functions" ] || fail "no rpma_sim_* prototypes found in rpma_sim.h"
expected=$( (nm -D --defined-only "$real_lib" | awk '$3 ~ /^rpma_/ {print $3}';
             for f in $sim_functions; do echo "$f@@LIBRPMA_1.0"; done) | sort)
actual=$(nm -D --defined-only "$prefix/lib/librpma.so.0" | awk '$3 != "LIBRPMA_1.0" {print $3}' | sort)
if [ "$expected" != "$actual" ]; then
  diff <(echo "$expected") <(echo "$actual")
  fail "exported symbols differ from the real librpma's"
fi
sim_count=$(echo "$sim_functions" | wc -w)
[ "$(echo "$actual" | grep -c '@@LIBRPMA_1.0$')" -eq $((84 + sim_count)) ] ||
  fail "expected $((84 + sim_count)) symbols in LIBRPMA_1.0"
readelf -d "$prefix/lib/librpma.so.0" | grep -q 'SONAME.*\[librpma.so.0\]' || fail "SONAME"
echo "PASS: 84 librpma symbols + $sim_count rpma_sim_* in LIBRPMA_1.0, SONAME librpma.so.0"
