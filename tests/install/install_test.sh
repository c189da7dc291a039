#!/usr/bin/env bash
# Installs the build into a fresh prefix and builds a user's program against
# it the two ways the README promises: CMake's find_package(weft) (weft::weft;
# also once without pkg-config) and pkg-config (`pkg-config --cflags --libs
# weft`); runs each.
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
echo "install_test: find_package (with and without pkg-config) and pkg-config consumers built and ran"
