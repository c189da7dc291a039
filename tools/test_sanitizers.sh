#!/usr/bin/env bash
# The sanitizer tiers of tools/test.sh, on by default: weft rebuilt with
# ASan+UBSan, then with TSan, each in a build directory of its own and lean
# (no CUDA, torch or MPI; only libweft, weft-run and the test programs, at
# -O1 -g1), then the unit tests and the mp-san subset of the multi-process
# tests (tests/mp/sanitizer_tests.cmake) under each. Measured on 2 shared
# cores: ASan+UBSan 5.4 min build + 0.6 min tests, TSan 2.8 + 2.0. WEFT_TEST_SANITIZERS=0 skips the ASan+UBSan tier,
# WEFT_TEST_TSAN=0 the TSan one. Suppressions, each with its reason, are in
# tools/sanitizers/ (a real finding is fixed, not suppressed).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(weft weft_static weft-run weft_logic_tests weft_api_tests weft_rendezvous_tests
         weft_device_tests mp_soak mp_mismatch mp_fault mp_kill mp_collectives mp_coll_full
         mp_device)
SUPP=$PWD/tools/sanitizers

tier() {  # NAME DIR SANITIZERS
  local t0=$SECONDS
  echo "== $1 tier: building in $2"
  # -O1 -g1 (line tables): the lean TSan build took 2 CPU-minutes this way
  # against about 5 at -O2 -g, and reports still carry file:line.
  cmake -S . -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_SANITIZE="$3" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DWEFT_WITH_CUDA=OFF \
    -DWEFT_WITH_TORCH=OFF -DWEFT_WITH_MPI=OFF ${WEFT_SAN_CMAKE_ARGS:-} >/dev/null
  cmake --build "$2" -j2 --target "${TARGETS[@]}"
  local t1=$SECONDS
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
    LSAN_OPTIONS=suppressions=$SUPP/lsan.supp \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$SUPP/tsan.supp \
    ctest --test-dir "$2" --output-on-failure -j1 --timeout 900 -L '^(unit|mp-san)$'
  echo "== $1 tier ran the unit and mp-san tests: build $((t1 - t0)) s, tests $((SECONDS - t1)) s"
}

if [ "${WEFT_TEST_SANITIZERS:-1}" != 0 ]; then
  tier ASan+UBSan "${WEFT_ASAN_BUILD_DIR:-build-asan}" address,undefined
else
  echo "SKIPPED: ASan+UBSan tier (WEFT_TEST_SANITIZERS=0)"
fi
if [ "${WEFT_TEST_TSAN:-1}" != 0 ]; then
  tier TSan "${WEFT_TSAN_BUILD_DIR:-build-tsan}" thread
else
  echo "SKIPPED: TSan tier (WEFT_TEST_TSAN=0)"
fi
