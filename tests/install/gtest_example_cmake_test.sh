#!/usr/bin/env bash
# gtest_example_cmake_test.sh -- what a user outside Bazel does with the testing kit: installs
# rpma-sim with //:install into a temporary prefix, configures and builds examples/gtest with
# CMake, finding the kit through pkg-config (rpma-sim-testing.pc, which requires librpma and
# gtest), and runs the built test binary, which must pass on every transport.
set -u
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/gtest_example.XXXXXX")
prefix=$work/prefix
RUNFILES_DIR="$runfiles" "$runfiles/rpma_sim/install" "$prefix" >/dev/null ||
  { echo "FAIL: install"; exit 1; }
for file in include/rpma_sim/testing.h lib/librpma_sim_testing.a \
  lib/pkgconfig/rpma-sim-testing.pc; do
  [ -f "$prefix/$file" ] || { echo "FAIL: PREFIX/$file was not installed"; exit 1; }
done
# A copy of the example's sources: CMake writes nothing next to them then.
mkdir -p "$work/src"
cp "$runfiles/rpma_sim/examples/gtest/CMakeLists.txt" \
  "$runfiles/rpma_sim/examples/gtest/write_test.cc" "$work/src/"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; echo "FAIL: cmake configure"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; echo "FAIL: cmake --build"; exit 1; }
# The binary must use the installed library (its rpath), not another librpma.
ldd "$work/build/write_test" | grep -q "$prefix/lib/librpma.so.0" ||
  { ldd "$work/build/write_test"; echo "FAIL: write_test does not link PREFIX/lib/librpma.so.0"; exit 1; }
"$work/build/write_test" || { echo "FAIL: the example test failed"; exit 1; }
echo "PASS: examples/gtest built with CMake + pkg-config against $prefix and passed"
