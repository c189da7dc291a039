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

# Sanitizer tiers, on by default: weft rebuilt with ASan+UBSan, then with
# TSan, each in a build directory of its own and lean (no CUDA, torch or MPI;
# only libweft, weft-run and the unit and mp-san test programs), then the unit
# tests and the mp-san subset of the multi-process tests
# (tests/mp/sanitizer_tests.cmake). Each adds about 5-6 minutes on a 2-core
# machine. WEFT_TEST_SANITIZERS=0 skips the ASan+UBSan tier, WEFT_TEST_TSAN=0
# the TSan one. Suppressions, each with its reason: tools/sanitizers/.
SAN_TARGETS=(weft weft_static weft-run weft_logic_tests weft_api_tests weft_rendezvous_tests
             mp_soak mp_mismatch mp_fault mp_kill)
sanitizer_tier() {  # NAME DIR SANITIZERS
  local t0=$SECONDS
  echo "== $1 tier: build in $2"
  cmake -S . -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_SANITIZE="$3" \
    -DWEFT_WITH_CUDA=OFF -DWEFT_WITH_TORCH=OFF -DWEFT_WITH_MPI=OFF ${WEFT_SAN_CMAKE_ARGS:-} >/dev/null
  cmake --build "$2" -j2 --target "${SAN_TARGETS[@]}"
  local t1=$SECONDS
  local supp=$PWD/tools/sanitizers
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
    LSAN_OPTIONS=suppressions=$supp/lsan.supp \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp \
    ctest --test-dir "$2" --output-on-failure -j1 --timeout 900 -L '^(unit|mp-san)$'
  echo "== $1 tier ran the unit and mp-san tests: build $((t1 - t0)) s, tests $((SECONDS - t1)) s"
}
if [ "${WEFT_TEST_SANITIZERS:-1}" != 0 ]; then
  sanitizer_tier ASan+UBSan "${WEFT_ASAN_BUILD_DIR:-build-asan}" address,undefined
else
  echo "SKIPPED: ASan+UBSan tier (WEFT_TEST_SANITIZERS=0)"
fi
if [ "${WEFT_TEST_TSAN:-1}" != 0 ]; then
  sanitizer_tier TSan "${WEFT_TSAN_BUILD_DIR:-build-tsan}" thread
else
  echo "SKIPPED: TSan tier (WEFT_TEST_TSAN=0)"
fi
