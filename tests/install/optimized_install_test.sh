#!/usr/bin/env bash
# optimized_install_test.sh -- installs rpma-sim with //:install into a temporary prefix and
# checks (check_install.py) that every compilation unit of the simulator in the installed
# librpma.so.0 was compiled with -O2 and with debug information, that the library itself is
# stripped of it, and that its .gnu_debuglink names the installed debug file by CRC, that the
# testing kit's archive is built the same way (and -fPIC); and that
# PREFIX/bin/rpma-sim-sweep runs.
#
# The test is built with the suite's own flags (fastbuild, or -O1 and sanitizers under
# --config=asan), so it also shows that //:install does not follow them.
set -u
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}
prefix=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install.XXXXXX")/prefix
RUNFILES_DIR="$runfiles" "$runfiles/rpma_sim/install" "$prefix" || { echo "FAIL: install"; exit 1; }
# The sweep tool is installed next to the library and runs.
"$prefix/bin/rpma-sim-sweep" --help >/dev/null || { echo "FAIL: PREFIX/bin/rpma-sim-sweep"; exit 1; }
exec python3 "$runfiles/rpma_sim/tests/install/check_install.py" "$prefix"
