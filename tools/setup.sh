#!/usr/bin/env bash
# Installs what weft needs on Debian 12 (only the packages that are missing),
# then configures and builds into ${WEFT_BUILD_DIR:-build}. Used by bench.sh
# and test.sh, so a fresh machine needs nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake pkg-config libhwloc-dev libgtest-dev googletest
      openmpi-bin libopenmpi-dev libibverbs-dev librdmacm-dev clang-format iproute2
      python3-torch libtorch-dev pybind11-dev python3-dev
      qemu-system-x86 ibverbs-utils kmod cpio clang-14 libclang-rt-14-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD=${WEFT_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON ${WEFT_CMAKE_ARGS:-}
cmake --build "$BUILD" -j2
