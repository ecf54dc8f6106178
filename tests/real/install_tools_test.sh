#!/usr/bin/env bash
# install_tools_test.sh -- `bazel run //:install -- PREFIX` under --config=real (a user whose
# builds default to the real backend) must still install working simulator tools: the
# installed rpma-sim-crash explores crash states with the simulator's rpma_sim_crash_explore,
# so it must carry the simulator, not the real backend's stubs (RPMA_E_NOSUPP) linked to
# Debian's librpma.so.0.
set -u
fail() { echo "FAIL: $*"; exit 1; }
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tools.XXXXXX")
prefix="$work/prefix"
RUNFILES_DIR="$runfiles" "$runfiles/rpma_sim/install" "$prefix" >/dev/null || fail "install"

tool="$prefix/bin/rpma-sim-crash"
[ -x "$tool" ] || fail "no rpma-sim-crash installed"
echo "ldd rpma-sim-crash:"; ldd "$tool"
if ldd "$tool" | grep -q 'librpma\.so'; then
  fail "the installed rpma-sim-crash loads $(ldd "$tool" | awk '/librpma/ {print $3}'): its rpma_sim_crash_explore is the real backend's stub (RPMA_E_NOSUPP), so it can never explore"
fi
nm "$tool" | grep -q ' T rpma_peer_new$' || fail "the installed rpma-sim-crash does not carry the simulator"
echo "PASS"
