#!/usr/bin/env bash
# optimized_install_test.sh -- installs rpma-sim with //:install into a temporary prefix and
# checks (check_install.py) that every compilation unit of the simulator in the installed
# librpma.so.0 was compiled with -O2 and with debug information, that the library itself is
# stripped of it, and that its .gnu_debuglink names the installed debug file by CRC, that the
# testing kit's archive is built the same way (and -fPIC); and that
# PREFIX/bin/rpma-sim-{sweep,info,trace-plot} run, `man rpma_sim` reads the installed
# rpma_sim(7) and every function of the installed rpma_sim.h has its page.
#
# The test is built with the suite's own flags (fastbuild, or -O1 and sanitizers under
# --config=asan), so it also shows that //:install does not follow them.
set -u
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}
prefix=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install.XXXXXX")/prefix
RUNFILES_DIR="$runfiles" "$runfiles/rpma_sim/install" "$prefix" || { echo "FAIL: install"; exit 1; }
# The tools are installed next to the library and run.
"$prefix/bin/rpma-sim-sweep" --help >/dev/null || { echo "FAIL: PREFIX/bin/rpma-sim-sweep"; exit 1; }
"$prefix/bin/rpma-sim-info" | grep -q "^hca_id:.rpma_sim0$" || { echo "FAIL: PREFIX/bin/rpma-sim-info"; exit 1; }
"$prefix/bin/rpma-sim-trace-plot" --help >/dev/null || { echo "FAIL: PREFIX/bin/rpma-sim-trace-plot"; exit 1; }
# `man rpma_sim` works against the installed manual, and every rpma_sim.h function has a page.
MANWIDTH=80 man --warnings -M "$prefix/share/man" rpma_sim 2>&1 | grep -q "^NAME" ||
  { echo "FAIL: man -M PREFIX/share/man rpma_sim"; exit 1; }
for fn in $(grep -o "^int rpma_sim_[a-z_]*" "$prefix/include/rpma_sim.h" | cut -c5-); do
  MANWIDTH=80 man -M "$prefix/share/man" 3 "$fn" 2>/dev/null | grep -q "$fn" ||
    { echo "FAIL: man 3 $fn"; exit 1; }
done
exec python3 "$runfiles/rpma_sim/tests/install/check_install.py" "$prefix"
