#!/usr/bin/env bash
# Installs the build into a fresh prefix and builds a user's program against
# it the ways the README promises: CMake's find_package(weft) (weft::weft;
# also once without pkg-config), pkg-config (`pkg-config --cflags --libs
# weft`) and, against libweft.a, `pkg-config --static`; runs each. Then moves
# the prefix and runs the installed weft-run and all_reduce_perf from it
# without LD_LIBRARY_PATH.
# Catches packaging faults that an in-tree build never sees (a dependency the
# exported targets name but the package file does not find, a wrong prefix in
# the .pc file, a header that is not installed).
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d /tmp/weft-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
# find_package, with nothing of weft's build tree on the path: once as is, and
# once where the consumer has no pkg-config (the installed package's hwloc
# finder then falls back to hwloc.h and libhwloc on the default paths)
find_package_consumer() {  # find_package_consumer DIR [cmake args...]
  local dir=$work/$1
  shift
  cmake -S "$src/tests/install/consumer" -B "$dir" -DCMAKE_PREFIX_PATH="$work/prefix" "$@" \
    >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
  LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$dir/consumer_shared"
}
find_package_consumer cmake
find_package_consumer cmake-nopc -DPKG_CONFIG_EXECUTABLE=/nonexistent/pkg-config
# pkg-config
pcdir=$(dirname "$(find "$work/prefix" -name weft.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs weft)
cc -std=c11 -Wall -Werror -o "$work/consumer_pc" "$src/tests/install/consumer/main.c" $flags
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/consumer_pc"
# Static: libweft.a alone in the library folder, so that -lweft is the
# archive; --static adds what it needs (Libs.private).
mkdir -p "$work/static/lib/pkgconfig"
cp -a "$work/prefix/include" "$work/static/"
cp "$work/prefix/lib/libweft.a" "$work/static/lib/"
cp "$pcdir/weft.pc" "$work/static/lib/pkgconfig/"
sflags=$(PKG_CONFIG_PATH="$work/static/lib/pkgconfig" pkg-config --static --cflags --libs weft)
echo "install_test: pkg-config --static --libs weft: $sflags"
cc -std=c11 -Wall -Werror -o "$work/consumer_static" "$src/tests/install/consumer/main.c" $sflags
if ldd "$work/consumer_static" | grep -q libweft; then
  echo "FAIL: the static consumer still loads libweft.so"
  exit 1
fi
"$work/consumer_static"
# Installed programs run from any prefix without LD_LIBRARY_PATH (RUNPATH
# $ORIGIN/../lib): here from a copy of the prefix moved elsewhere.
cp -a "$work/prefix" "$work/moved"
rm -rf "$work/prefix"
for prog in "$work"/moved/bin/*; do
  env -u LD_LIBRARY_PATH ldd "$prog" | grep -q "not found" || continue
  echo "FAIL: $prog does not find its libraries from a moved prefix:"
  env -u LD_LIBRARY_PATH ldd "$prog" | grep "not found"
  exit 1
done
env -u LD_LIBRARY_PATH "$work/moved/bin/weft-run" -n 2 --timeout 120 \
  "$work/moved/bin/all_reduce_perf" -b 8 -e 64K -f 8 -w 1 -n 2 >"$work/run.log" 2>&1 ||
  { cat "$work/run.log"; echo "FAIL: the installed weft-run and all_reduce_perf did not run"; exit 1; }
tail -3 "$work/run.log"
# The NCCL drop-in (CUDA builds): installed off the default library path, and
# the installed weft-run runs NCCL's allreduce through it.
if [ -e "$build/weft-nccl/libnccl.so.2" ]; then
  lib=$(dirname "$(find "$work/moved" -name libweft.so.0 | head -1)")
  if ls "$lib"/libnccl.so* >/dev/null 2>&1 || [ ! -e "$lib/weft-nccl/libnccl.so.2" ]; then
    echo "FAIL: the drop-in is not (only) in $lib/weft-nccl:"; ls "$lib" "$lib/weft-nccl" || true
    exit 1
  fi
  if [ -x "$build/tests/nccl/nccl_api_test" ]; then
    cp "$build/tests/nccl/nccl_api_test" "$work/nccl_api_test"
    env LD_LIBRARY_PATH="$lib/weft-nccl" "$work/moved/bin/weft-run" -n 2 --timeout 120 \
      "$work/nccl_api_test" >"$work/nccl.log" 2>&1 ||
      { cat "$work/nccl.log"; echo "FAIL: the NCCL API test on the installed drop-in"; exit 1; }
    LD_LIBRARY_PATH="$lib/weft-nccl" ldd "$work/nccl_api_test" | grep -q "libnccl.so.2 => $lib/weft-nccl" ||
      { echo "FAIL: the test did not load the installed drop-in"; exit 1; }
    echo "install_test: the NCCL API test ran on the installed drop-in ($lib/weft-nccl)"
  fi
fi
echo "install_test: find_package (with and without pkg-config) and pkg-config (shared and"
echo "install_test: --static) consumers built and ran; installed programs ran from a moved prefix"
