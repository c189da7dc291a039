#!/usr/bin/env bash
# The whole test suite: sets up and builds weft (warnings are errors), checks
# formatting, then runs every ctest tier. A tier that cannot run on this
# machine prints "SKIPPED: why" instead of passing silently.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
BUILD=${WEFT_BUILD_DIR:-build}
tools/check-format.sh
ctest --test-dir "$BUILD" --output-on-failure -j1 --timeout 600

# Sanitizer tiers: weft rebuilt with ASan+UBSan (or TSan) in a directory of
# its own, then the unit and multi-process tests (not the mpirun ones: Open
# MPI's own allocations read as leaks). They take a full rebuild
# plus slow tests (well over 10 minutes on a 2-core machine), so they run on
# request only.
sanitizer_tier() {  # DIR SANITIZERS LABELS
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_SANITIZE="$2" \
    ${WEFT_CMAKE_ARGS:-}
  cmake --build "$1" -j2
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TSAN_OPTIONS=halt_on_error=1 \
    ctest --test-dir "$1" --output-on-failure -j1 --timeout 900 -L "$3"
}
if [ "${WEFT_TEST_SANITIZERS:-0}" = 1 ]; then
  sanitizer_tier "${WEFT_ASAN_BUILD_DIR:-build-asan}" address,undefined '^(unit|mp)$'
else
  echo "SKIPPED: ASan+UBSan tier (set WEFT_TEST_SANITIZERS=1: it rebuilds weft in build-asan)"
fi
if [ "${WEFT_TEST_TSAN:-0}" = 1 ]; then
  sanitizer_tier "${WEFT_TSAN_BUILD_DIR:-build-tsan}" thread '^unit$'
else
  echo "SKIPPED: TSan tier (set WEFT_TEST_TSAN=1: it rebuilds weft in build-tsan)"
fi
