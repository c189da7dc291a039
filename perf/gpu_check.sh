#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (one GPU, no network; it keeps
# under 8 minutes: WEFT_GPU_BUDGET_S, default 450 s, build included): configures
# with CUDA required, builds only what the GPU checks need, runs the GPU tests
# and the kernel bandwidth check, and prints a summary.
#   perf/gpu_check.sh     (WEFT_GPU_BUILD_DIR, default build-gpu)
# A lent machine has no package registry and its CUDA image lacks hwloc and
# GoogleTest: run tools/gpu_deps.sh where apt works and send .gpu-deps along
# with the tree; this script uses it for what the machine lacks.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${WEFT_GPU_BUILD_DIR:-build-gpu}
JOBS=$(nproc)
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
echo "== $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(c++ --version 2>&1 | head -1)," \
  "$(cmake --version | head -1), nvcc $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | grep -o 'release [0-9.]*')"
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DWEFT_WITH_CUDA=ON -DWEFT_WITH_TORCH=OFF -DWEFT_WITH_MPI=OFF)
if [ -d .gpu-deps/root ]; then  # tools/gpu_deps.sh: used only for what the system lacks
  cmake_args+=("-DCMAKE_PREFIX_PATH=$PWD/.gpu-deps/root/usr"
    "-DWEFT_GTEST_SOURCE_DIR=$PWD/.gpu-deps/root/usr/src/googletest")
  cache=$(ldconfig -p 2>/dev/null)  # (not piped into grep -q: pipefail would see SIGPIPE)
  lacks() { ! grep -q "$1 " <<<"$cache"; }
  extra=""
  lacks 'libhwloc\.so\.15' && extra="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu"
  lacks 'libudev\.so\.1' && extra="$extra${extra:+:}$PWD/.gpu-deps/udev"
  [ -n "$extra" ] && export LD_LIBRARY_PATH="$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "== .gpu-deps present; libraries added to LD_LIBRARY_PATH: ${extra:-none}"
fi
if ! command -v make >/dev/null && command -v ninja >/dev/null; then cmake_args+=(-G Ninja); fi
cmake -S . -B "$BUILD" "${cmake_args[@]}" >"$BUILD.configure.log" 2>&1 \
  || { tail -20 "$BUILD.configure.log"; exit 1; }
grep -E "weft: " "$BUILD.configure.log"
# Every step runs under what is left of one budget, so a hang (this code has
# never run on a GPU) still leaves a summary and device time for a rerun; a
# stuck collective fails in WEFT_TIMEOUT=30 s with its diagnosis, not in 300.
BUDGET=${WEFT_GPU_BUDGET_S:-450}
export WEFT_TIMEOUT=${WEFT_TIMEOUT:-30}
step() {  # step CAP cmd...: at most CAP seconds, and never past the budget
  local cap=$1 left=$((BUDGET - ($(date +%s) - start)))
  shift
  if [ "$left" -le 5 ]; then
    echo "   (not run: the ${BUDGET} s budget is spent)"
    return 124
  fi
  [ "$cap" -gt "$left" ] && cap=$left
  timeout -k 5 "$cap" "$@"
  local rc=$?
  [ "$rc" -eq 124 ] && echo "   (stopped after ${cap} s)"
  return "$rc"
}
step "$BUDGET" cmake --build "$BUILD" -j"$JOBS" --target weft_gpu_tests weft_gpu_stream_tests \
  gpu_kernel_perf all_reduce_perf weft-run >"$BUILD.build.log" 2>&1 \
  || { tail -30 "$BUILD.build.log"; exit 1; }
# The GEMM check needs cuBLAS (CUDA::cublas); without it the rest still runs.
step "$BUDGET" cmake --build "$BUILD" -j"$JOBS" --target gpu_overlap_perf >>"$BUILD.build.log" 2>&1 \
  || echo "== gpu_overlap_perf not built (no cuBLAS in this CUDA toolkit?): the GEMM check is skipped"
echo "== built in $(( $(date +%s) - start )) s"
step 180 ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 90 2>&1 | tail -15
tests_rc=${PIPESTATUS[0]}
echo "== the GPU ring through weft.h (2 ranks of one process on one GPU): which path ran"
WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=COLL step 60 "$BUILD/tests/gpu/weft_gpu_stream_tests" 2>&1 \
  | grep -E "GPU ring kernel on|host-staged:|PASSED|FAILED|stopped" | sed 's/^.*WEFT INFO COLL //' \
  | sort | uniq -c
echo "== the same tests host-staged (WEFT_GPU_RING=0)"
WEFT_GPU_RING=0 step 60 "$BUILD/tests/gpu/weft_gpu_stream_tests" 2>&1 | grep -E "PASSED|FAILED|stopped" | head -5
echo "== kernel bandwidth"
step 30 "$BUILD/perf/gpu_kernel_perf" 256M 20 4
step 30 "$BUILD/perf/gpu_kernel_perf" 1G 10 8
echo "== GEMM beside allreduce on the GPU ring (2 and 4 ranks of one process)"
if [ -x "$BUILD/perf/gpu_overlap_perf" ]; then
  step 60 "$BUILD/perf/gpu_overlap_perf" 64M 8192 10 10 2
  step 60 "$BUILD/perf/gpu_overlap_perf" 64M 8192 10 10 4
  WEFT_MAX_CTAS=2 step 60 "$BUILD/perf/gpu_overlap_perf" 64M 8192 10 10 2
fi
echo "== all_reduce_perf on device buffers, 2 processes on one GPU (host-staged: one GPU each is"
echo "   what the ring needs between processes)"
step 90 "$BUILD/tools/weft-run" -n 2 "$BUILD/perf/all_reduce_perf" -b 8 -e 256M -f 8 -D 1
echo "== summary: gpu tests rc=$tests_rc, total $(( $(date +%s) - start )) s"
echo "   weft_gpu_stream_tests: weft.h calls on a cudaStream_t (allreduce, allgather,"
echo "   reduce-scatter, broadcast and reduce on the GPU ring, the rest host-staged; docs/cuda.md)"
echo "   not covered yet: the ring between processes on several GPUs (CUDA IPC)."
echo "   targets: reduce/memcpy >= 0.85 (kernel bandwidth), overlap efficiency >= 0.70"
exit "$tests_rc"
