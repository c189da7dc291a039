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

# The sanitizer tiers (ASan+UBSan, TSan), on by default; see test_sanitizers.sh.
tools/test_sanitizers.sh
