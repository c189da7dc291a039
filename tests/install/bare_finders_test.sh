#!/usr/bin/env bash
# weft's build on a machine without pkg-config and without an installed
# GoogleTest, as on a lent GPU machine (perf/gpu_check.sh with .gpu-deps):
# hwloc must come from the fallback finder (cmake/WeftHwloc.cmake: hwloc.h and
# libhwloc on the default and prefix paths) and GoogleTest from its sources
# (WEFT_GTEST_SOURCE_DIR); the gtest library must build with weft's flags.
# Configures a second tree (no CUDA, nothing else optional), builds gtest_main,
# and builds and runs a program against the hwloc the finder chose.
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
# hwloc as tools/gpu_deps.sh lays it out: Debian's files under a prefix that is
# not the compiler's, with hwloc/autogen/config.h apart under include/<triplet>
# (found only if the finder looks there; under /usr the compiler finds it alone).
triplet=$(cc -print-multiarch 2>/dev/null || true)
prefix_args=()
if [ -n "$triplet" ] && [ -f "/usr/include/$triplet/hwloc/autogen/config.h" ]; then
  p="$work/prefix/usr"
  mkdir -p "$p/include/$triplet" "$p/lib/$triplet"
  cp -r /usr/include/hwloc.h /usr/include/hwloc "$p/include/"
  cp -r "/usr/include/$triplet/hwloc" "$p/include/$triplet/"
  cp -P "/usr/lib/$triplet"/libhwloc.so* "$p/lib/$triplet/"
  prefix_args=("-DCMAKE_PREFIX_PATH=$p")
fi
cmake -S "$src" -B "$work/b" -DPKG_CONFIG_EXECUTABLE=/nonexistent/pkg-config "${prefix_args[@]}" \
  -DWEFT_GTEST_SOURCE_DIR="$gtest_src" -DWEFT_WITH_CUDA=OFF -DWEFT_WITH_VERBS=OFF \
  -DWEFT_WITH_MPI=OFF -DWEFT_WITH_TORCH=OFF -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; exit 1; }
grep -q "weft: hwloc .* (API of .*hwloc.h) found" "$work/configure.log" \
  || { echo "hwloc did not come from the fallback finder:"; grep "weft:" "$work/configure.log"; exit 1; }
grep -q "weft: GoogleTest built from $gtest_src" "$work/configure.log" \
  || { echo "GoogleTest was not taken from its sources"; exit 1; }
cmake --build "$work/b" -j2 --target gtest_main >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log"; exit 1; }
# What the finder found is what weft's targets link: a program built from it
# must load a topology. (Building all of libweft again would add a minute to CI.)
cached() { sed -n "s/^$1:[A-Z]*=//p" "$work/b/CMakeCache.txt"; }
inc=$(cached WEFT_HWLOC_INCLUDE_DIR)
config_inc=$(cached WEFT_HWLOC_CONFIG_INCLUDE_DIR)
lib=$(cached WEFT_HWLOC_LIBRARY)
if [ ${#prefix_args[@]} -gt 0 ] && [[ "$inc" != "$work"/* || "$config_inc" != "$work"/* ]]; then
  echo "the finder did not take hwloc from the prefix $work/prefix/usr: $inc, $config_inc"
  exit 1
fi
cat >"$work/probe.c" <<'C'
#include <hwloc.h>
#include <stdio.h>
int main(void) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) return 1;
  printf("hwloc probe: %d PU(s)\n", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
  hwloc_topology_destroy(t);
  return 0;
}
C
cc -Wall -Werror -I"$inc" -I"$config_inc" -o "$work/probe" "$work/probe.c" "$lib"
"$work/probe"
echo "bare_finders_test: hwloc without pkg-config ($lib), GoogleTest from sources: configured, built, ran"
