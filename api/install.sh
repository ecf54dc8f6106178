#!/usr/bin/env bash
# install.sh -- `bazel run //:install -- PREFIX`: installs the simulator as a librpma for
# builds outside Bazel: PREFIX/include/{librpma.h,rpma_sim.h}, PREFIX/lib/librpma.so.0 (and
# the librpma.so link), PREFIX/lib/.debug/librpma.so.0.debug (its symbols, which gdb finds
# through the library's .gnu_debuglink), PREFIX/lib/pkgconfig/librpma.pc, and
# PREFIX/bin/rpma-sim-run (an unmodified librpma program run on this library),
# rpma-sim-sweep (a program run once per librpma fault point), rpma-sim-crash (every crash
# state of a program's run, judged by a check), rpma-sim-info (the
# simulated device, the settings in effect, this host's transports) and rpma-sim-trace-plot
# (an RPMA_SIM_TRACE file as an SVG timeline), and the man pages in PREFIX/share/man
# (rpma_sim(7), a page per rpma_sim.h function).
#
# This is the template of //:install (api/install.bzl), which builds the library optimized
# whatever flags `bazel run` was given and fills in where that library is in the runfiles.
set -eu
if [ $# -ne 1 ]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
fi
prefix=$1
# `bazel run` starts us in the runfiles tree; a relative PREFIX means the caller's directory.
case "$prefix" in
  /*) ;;
  *) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;;
esac
here=$(dirname "$0")
runfiles="${RUNFILES_DIR:-$0.runfiles}/rpma_sim"
[ -d "$runfiles" ] || runfiles="$here"
library_dir="$runfiles/@LIBRARY_DIR@"
mkdir -p "$prefix/include/rpma_sim" "$prefix/lib/pkgconfig" "$prefix/lib/.debug" "$prefix/bin"
# cp, not install(1): under `bazel test` the runfiles' own "install" can shadow it on PATH.
cp -f "$runfiles/api/include/librpma.h" "$runfiles/api/include/rpma_sim.h" "$prefix/include/"
cp -f "$library_dir/librpma.so.0" "$prefix/lib/librpma.so.0"
cp -f "$library_dir/librpma.so.0.debug" "$prefix/lib/.debug/librpma.so.0.debug"
chmod 0644 "$prefix/include/librpma.h" "$prefix/include/rpma_sim.h"
chmod 0755 "$prefix/lib/librpma.so.0"
chmod 0644 "$prefix/lib/.debug/librpma.so.0.debug"
ln -sf librpma.so.0 "$prefix/lib/librpma.so"
for tool in tools/rpma-sim-run tools/rpma-sim-sweep tools/rpma-sim-trace-plot rpma-sim-info \
    rpma-sim-crash; do
  cp -f "$runfiles/api/$tool" "$prefix/bin/"
  chmod 0755 "$prefix/bin/$(basename "$tool")"
done
for section in 3 7; do
  mkdir -p "$prefix/share/man/man$section"
  cp -f "$runfiles/api/man/man$section/"*."$section" "$prefix/share/man/man$section/"
  chmod 0644 "$prefix/share/man/man$section/"*."$section"
done
sed "s|@PREFIX@|$prefix|" "$runfiles/api/librpma.pc.in" > "$prefix/lib/pkgconfig/librpma.pc"
cp -f "$runfiles/testing/include/rpma_sim/testing.h" "$prefix/include/rpma_sim/testing.h"
cp -f "$library_dir/librpma_sim_testing.a" "$prefix/lib/librpma_sim_testing.a"
chmod 0644 "$prefix/include/rpma_sim/testing.h" "$prefix/lib/librpma_sim_testing.a"
sed "s|@PREFIX@|$prefix|" "$runfiles/testing/rpma-sim-testing.pc.in" \
  > "$prefix/lib/pkgconfig/rpma-sim-testing.pc"
echo "installed rpma-sim's librpma into $prefix"
echo "  cflags: $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags librpma 2>/dev/null || echo "-I$prefix/include")"
echo "  libs:   $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs librpma 2>/dev/null || echo "-L$prefix/lib -lrpma")"
echo "  tests:  pkg-config rpma-sim-testing (rpma_sim/testing.h, -lrpma_sim_testing)"
