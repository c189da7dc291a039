#!/usr/bin/env bash
# weft's build on a machine without pkg-config and without an installed
# GoogleTest, as on a lent GPU machine (perf/gpu_check.sh with .gpu-deps):
# hwloc must come from the fallback finder (cmake/WeftHwloc.cmake: hwloc.h and
# libhwloc on the default and prefix paths) and GoogleTest from its sources
# (WEFT_GTEST_SOURCE_DIR); the gtest library must build with weft's flags.
# Configures a second tree (no CUDA, nothing else optional) and builds only
# gtest_main and weft-info, then runs weft-info.
#   bare_finders_test.sh SOURCE_DIR
set -euo pipefail
src=$1
gtest_src=/usr/src/googletest
if [ ! -f "$gtest_src/CMakeLists.txt" ]; then
  echo "SKIPPED: no GoogleTest sources at $gtest_src (Debian's googletest package)"
  exit 77
fi
work=$(mktemp -d /tmp/weft-bare.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake -S "$src" -B "$work/b" -DPKG_CONFIG_EXECUTABLE=/nonexistent/pkg-config \
  -DWEFT_GTEST_SOURCE_DIR="$gtest_src" -DWEFT_WITH_CUDA=OFF -DWEFT_WITH_VERBS=OFF \
  -DWEFT_WITH_MPI=OFF -DWEFT_WITH_TORCH=OFF -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; exit 1; }
grep -q "weft: hwloc .* (API of .*hwloc.h) found" "$work/configure.log" \
  || { echo "hwloc did not come from the fallback finder:"; grep "weft:" "$work/configure.log"; exit 1; }
grep -q "weft: GoogleTest built from $gtest_src" "$work/configure.log" \
  || { echo "GoogleTest was not taken from its sources"; exit 1; }
cmake --build "$work/b" -j2 --target gtest_main weft-info >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log"; exit 1; }
info=$("$work/b/tools/weft-info")
echo "${info%%$'\n'*}"
echo "bare_finders_test: hwloc without pkg-config, GoogleTest from sources: configured, built, ran"
