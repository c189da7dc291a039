#!/usr/bin/env bash
# The Debian packages as a user gets them: `cpack -G DEB` on the build, then
# libweft0, libweft-dev and weft-tools unpacked into a clean root (dpkg-deb
# -x: nothing of the build tree or of an earlier install on any path), their
# dependencies checked, the unpacked weft-run and all_reduce_perf run on 2
# ranks without LD_LIBRARY_PATH, and a C program built against the unpacked
# libweft-dev with pkg-config.
#   deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
for tool in cpack dpkg-deb dpkg-shlibdeps pkg-config; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed (dpkg-dev)"; exit 77; }
done
work=$(mktemp -d /tmp/weft-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out") >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; echo "FAIL: cpack -G DEB"; exit 1; }
fail=0
debs=("$work"/out/*.deb)
echo "deb_test: ${#debs[@]} packages"
for deb in "${debs[@]}"; do
  echo "  $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version): Depends: $(dpkg-deb -f "$deb" Depends)"
done
depends_of() { dpkg-deb -f "$work"/out/"$1"_*.deb Depends; }
for want in "libweft0 libhwloc" "libweft-dev libweft0" "libweft-dev libhwloc-dev" \
            "weft-tools libweft0" "weft-tools libc6"; do
  set -- $want
  if ! depends_of "$1" | grep -q "$2"; then
    echo "FAIL: $1 does not depend on $2"
    fail=1
  fi
done
if grep -q "WEFT_HAVE_VERBS:INTERNAL=1\|WEFT_HAVE_VERBS:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null ||
   ldd "$build/src/libweft.so" | grep -q libibverbs; then
  depends_of libweft0 | grep -q libibverbs || { echo "FAIL: libweft0 does not depend on libibverbs"; fail=1; }
  depends_of libweft0 | grep -q librdmacm || { echo "FAIL: libweft0 does not depend on librdmacm"; fail=1; }
fi
mkdir "$work/root"
for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$work/root"; done
bin=$work/root/usr/bin
env -u LD_LIBRARY_PATH ldd "$bin/all_reduce_perf" | grep libweft
if ! env -u LD_LIBRARY_PATH ldd "$bin/all_reduce_perf" | grep "libweft" | grep -q "$work/root/usr/"; then
  echo "FAIL: the unpacked all_reduce_perf does not load the unpacked libweft"
  fail=1
fi
env -u LD_LIBRARY_PATH "$bin/weft-run" -n 2 --timeout 120 "$bin/all_reduce_perf" -b 8 -e 64K -f 8 \
  -w 1 -n 2 >"$work/run.log" 2>&1 || { cat "$work/run.log"; echo "FAIL: weft-run from the package"; fail=1; }
tail -3 "$work/run.log"
pc=$(find "$work/root" -name weft.pc | head -1)
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs weft)
cc -std=c11 -Wall -Werror -o "$work/consumer" "$src/tests/install/consumer/main.c" $flags
LD_LIBRARY_PATH="$work/root/usr/lib" "$work/consumer" || { echo "FAIL: consumer of libweft-dev"; fail=1; }
[ "$fail" -eq 0 ] && echo "deb_test: packages built, unpacked into a clean root, and ran from it"
exit "$fail"
