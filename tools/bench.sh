#!/usr/bin/env bash
# The main job: sets up and builds weft, then runs the allreduce benchmark
# across 4 local ranks (weft-run, no MPI or cluster needed). Extra arguments go
# to all_reduce_perf (nccl-tests flags), e.g. tools/bench.sh -b 1M -e 1G.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
BUILD=${WEFT_BUILD_DIR:-build}
args=("$@")
((${#args[@]})) || args=(-b 8 -e 64M -f 2)
exec "$BUILD/tools/weft-run" -n "${WEFT_BENCH_RANKS:-4}" "$BUILD/perf/all_reduce_perf" "${args[@]}"
