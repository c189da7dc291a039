#!/usr/bin/env bash
# The sanitizer tiers of tools/test.sh, on by default: weft rebuilt with
# ASan+UBSan, then with TSan, each in a build directory of its own and lean
# (no CUDA, torch or MPI; only libweft, weft-run and the test programs, at
# -O0 for ASan+UBSan and -O1 for TSan, -g1), then the unit tests and the
# mp-san subset of the multi-process tests (tests/mp/sanitizer_tests.cmake)
# under each, two at a time; TSan leaves out the mp-san tests labelled
# asan-only (plain variants that a sibling covers). Measured in CI runs on 2
# shared cores (2026-12-04): ASan+UBSan 2.9-3.4 min build + 1.7-1.9 min tests,
# TSan 2.5-3.1 min build + 4.3 min tests before the asan-only cut.
# WEFT_TEST_SANITIZERS=0 skips the ASan+UBSan tier, WEFT_TEST_TSAN=0 the TSan
# one. Suppressions, each with its reason, are in tools/sanitizers/ (a real
# finding is fixed, not suppressed).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(weft weft_static weft-run weft_logic_tests weft_api_tests weft_rendezvous_tests
         weft_device_tests mp_soak mp_mismatch mp_fault mp_kill mp_collectives mp_coll_full
         mp_device all_reduce_perf mp_init_probe mp_create_refuse mp_grow mp_standby
         mp_replica)
# The NCCL drop-in's code, on the fake CUDA, where the toolkit's nccl.h is.
[ -f "${CUDA_HOME:-/usr/local/cuda}/include/nccl.h" ] && TARGETS+=(nccl_api_test_fake)
SUPP=$PWD/tools/sanitizers

tier() {  # NAME DIR SANITIZERS OPTIMIZATION [CTEST ARGS...]
  local t0=$SECONDS
  echo "== $1 tier: building in $2"
  # -g1 (line tables): reports still carry file:line. TSan at -O1: the lean
  # build took 2 CPU-minutes against about 5 at -O2 -g, and -O0 would slow
  # its tests several times. ASan+UBSan at -O0: 192 s to build against 326 s
  # at -O1 on 2 cores, with tests about as fast (45 s).
  cmake -S . -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_SANITIZE="$3" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$4 -g1 -DNDEBUG" -DWEFT_WITH_CUDA=OFF \
    -DWEFT_WITH_TORCH=OFF -DWEFT_WITH_MPI=OFF ${WEFT_SAN_CMAKE_ARGS:-} >/dev/null
  cmake --build "$2" -j2 --target "${TARGETS[@]}"
  local t1=$SECONDS
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
    LSAN_OPTIONS=suppressions=$SUPP/lsan.supp \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$SUPP/tsan.supp \
    ctest --test-dir "$2" --output-on-failure -j2 --timeout 900 -L '^(unit|mp-san)$' "${@:5}"
  echo "== $1 tier ran the unit and mp-san tests: build $((t1 - t0)) s, tests $((SECONDS - t1)) s"
}

if [ "${WEFT_TEST_SANITIZERS:-1}" != 0 ]; then
  tier ASan+UBSan "${WEFT_ASAN_BUILD_DIR:-build-asan}" address,undefined -O0
else
  echo "SKIPPED: ASan+UBSan tier (WEFT_TEST_SANITIZERS=0)"
fi
if [ "${WEFT_TEST_TSAN:-1}" != 0 ]; then
  tier TSan "${WEFT_TSAN_BUILD_DIR:-build-tsan}" thread -O1 -LE '^asan-only$'
else
  echo "SKIPPED: TSan tier (WEFT_TEST_TSAN=0)"
fi
