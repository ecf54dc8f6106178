#!/usr/bin/env bash
# pkg_config_libs_test.sh -- the installed librpma.pc must link what Debian's librpma.pc links:
# Debian's says `-lrpma -libverbs -lrdmacm`, so a program that uses libibverbs as well as
# librpma (ibv_wc_status_str, as librpma's examples print completions) builds with nothing
# but `pkg-config --libs librpma`. The same build against the installed simulator must work.
set -u
fail() { echo "FAIL: $*"; exit 1; }
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}
src="$runfiles/rpma_sim/tests/swap/verbs_user_program.c"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/pcl.XXXXXX")
prefix="$work/prefix"
RUNFILES_DIR="$runfiles" "$runfiles/rpma_sim/install" "$prefix" >/dev/null || fail "install"

# Control: Debian's librpma.pc alone is enough.
flags=$(pkg-config --cflags --libs librpma) || fail "no Debian librpma.pc"
echo "Debian's librpma.pc: $flags"
gcc -std=gnu11 -Wall -Werror -o "$work/with_debian_pc" "$src" $flags \
  || fail "the program does not build with Debian's librpma.pc alone (the test is wrong)"

# The simulator's librpma.pc alone.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs librpma) \
  || fail "pkg-config does not find librpma in $prefix"
echo "rpma-sim's librpma.pc: $flags"
gcc -std=gnu11 -Wall -Werror -o "$work/with_sim_pc" "$src" $flags \
  || fail "a program that builds with Debian's librpma.pc does not build with rpma-sim's"
out=$("$work/with_sim_pc" 2>&1) || fail "it does not run: $out"
echo "$out"
echo "PASS"
