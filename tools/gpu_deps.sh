#!/usr/bin/env bash
# Unpacks the build dependencies that a bare GPU machine may lack into
# .gpu-deps/root (ignored by git), for perf/gpu_check.sh to use there. A lent GPU
# machine has CUDA, a compiler and CMake but no package registry, and hwloc and
# GoogleTest (both required by weft's build) are not part of a CUDA image. So
# run this where apt works, then copy .gpu-deps along with the source tree.
#   tools/gpu_deps.sh    # Debian 12's libhwloc15, libhwloc-dev, libudev1 and googletest (sources)
# The packages are unpacked, not installed (dpkg -x): nothing on this machine
# changes. gpu_check.sh adds .gpu-deps/root/usr to CMAKE_PREFIX_PATH, builds
# GoogleTest from the copied sources (WEFT_GTEST_SOURCE_DIR: compiled there by
# the compiler of the tests), and puts libraries on LD_LIBRARY_PATH only where
# the machine lacks them.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.gpu-deps
PACKAGES=(libhwloc15 libhwloc-dev libudev1 googletest)
rm -rf "$DEST"
mkdir -p "$DEST/debs" "$DEST/root"
if ! (cd "$DEST/debs" && apt-get download "${PACKAGES[@]}" >/dev/null 2>&1); then
  apt-get update -qq
  (cd "$DEST/debs" && apt-get download "${PACKAGES[@]}")
fi
for deb in "$DEST"/debs/*.deb; do dpkg-deb -x "$deb" "$DEST/root"; done
rm -rf "$DEST/root/usr/share/doc" "$DEST/root/usr/share/man" "$DEST/root/usr/share/hwloc" \
  "$DEST/root/usr/share/bash-completion" "$DEST/root/etc" "$DEST/root/lib/systemd"
LIB="$DEST/root/usr/lib/x86_64-linux-gnu"
# libudev.so.1 (libhwloc's one dependency beyond libc) goes in a folder of its
# own: gpu_check.sh puts it on LD_LIBRARY_PATH only where the machine lacks it.
mkdir -p "$DEST/udev"
mv "$DEST"/root/lib/x86_64-linux-gnu/libudev.so.1* "$DEST/root/usr/lib/x86_64-linux-gnu/libudev.so.1"* \
  "$DEST/udev/" 2>/dev/null || true
rm -rf "$DEST/root/lib" "$LIB/libhwloc.a"  # weft links the shared library
# The .pc files name prefix=/usr, which is wrong once unpacked elsewhere, and
# CMake would find them on CMAKE_PREFIX_PATH: weft's finder falls back to
# hwloc.h and libhwloc on the prefix path instead (cmake/WeftHwloc.cmake).
rm -rf "$LIB/pkgconfig"
ls "$DEST/udev"/libudev.so.1 "$LIB"/libhwloc.so "$DEST"/root/usr/include/hwloc.h \
  "$DEST"/root/usr/src/googletest/CMakeLists.txt >/dev/null
echo "$(du -sh "$DEST/root" "$DEST/udev" | cut -f1 | tr '\n' ' ')in $DEST: $(cd "$DEST/debs" && ls | tr '\n' ' ')"
rm -rf "$DEST/debs"
