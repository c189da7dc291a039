#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (one GPU, no network; it keeps
# under WEFT_GPU_BUDGET_S, default 300 s, build included): configures with CUDA
# required for this GPU's architecture, builds only what the GPU checks need,
# runs the kernel bandwidth check, the GPU tests and the overlap check, and
# prints a summary. Every step's whole output goes to a log of its own in
# WEFT_GPU_LOG_DIR (default $BUILD/gpu-logs), written as it runs, so a step
# stopped by its time cap (or the machine taken back) still leaves its log.
#   perf/gpu_check.sh     (WEFT_GPU_BUILD_DIR, default build-gpu)
# A lent machine has no package registry and its CUDA image may lack hwloc and
# GoogleTest: run tools/gpu_deps.sh where apt works and send .gpu-deps along
# with the tree; this script uses it for what the machine lacks.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${WEFT_GPU_BUILD_DIR:-build-gpu}
LOGS=${WEFT_GPU_LOG_DIR:-$BUILD/gpu-logs}
mkdir -p "$LOGS"
JOBS=$(nproc)
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader || true
echo "== $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(c++ --version 2>&1 | head -1)," \
  "$(cmake --version | head -1), nvcc $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | grep -o 'release [0-9.]*')"
# Only this GPU's architecture (CI compiles all of them): half the nvcc time.
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
archs=${WEFT_GPU_ARCHS:-${cap:+${cap}-real}}
# -g (host code only; the kernels are optimised as ever): a stopped step's
# thread stacks get function names (perf/name_stacks.sh).
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DWEFT_WITH_CUDA=ON -DWEFT_WITH_TORCH=OFF -DWEFT_WITH_MPI=OFF
  -DCMAKE_CXX_FLAGS=-g -DCMAKE_CUDA_FLAGS=-g)
[ -n "$archs" ] && cmake_args+=("-DCMAKE_CUDA_ARCHITECTURES=$archs")
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
cmake -S . -B "$BUILD" "${cmake_args[@]}" >"$LOGS/build.log" 2>&1 \
  || { tail -20 "$LOGS/build.log"; exit 1; }
grep -E "weft: " "$LOGS/build.log"
# Every step runs under what is left of one budget, so a hang still leaves a
# summary; a stuck collective fails in WEFT_TIMEOUT=10 s with its diagnosis.
BUDGET=${WEFT_GPU_BUDGET_S:-300}
export WEFT_TIMEOUT=${WEFT_TIMEOUT:-10}
# At its cap a step gets SIGUSR1, on which the GPU tests and tools write every
# thread's stack (tests/gpu/thread_stacks.h), then SIGKILL 5 s later; the
# stacks, named, go to the summary: they say where a stop waited.
step() {  # step CAP LOG cmd...: at most CAP seconds, never past the budget; output to LOG
  local cap=$1 log=$2 left=$((BUDGET - ($(date +%s) - start)))
  shift 2
  if [ "$left" -le 10 ]; then
    echo "   (not run: the ${BUDGET} s budget is spent)"
    return 124
  fi
  [ "$cap" -gt "$((left - 5))" ] && cap=$((left - 5))
  timeout -s USR1 -k 5 "$cap" "$@" >>"$log" 2>&1
  local rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "   (stopped after ${cap} s)" | tee -a "$log"
    perf/name_stacks.sh "$log" | head -150
    rc=124
  fi
  return "$rc"
}
gtest_summary() {  # LOG [LINES]: the verdicts, then the first failures' messages
  grep -E "^\[ +(OK|FAILED|SKIPPED) +\] .*\([0-9]+ ms\)$|^\[  PASSED  \]" "$1"
  grep -E -A7 "Failure$|WEFT WARN" "$1" | head -"${2:-40}"
}
step "$BUDGET" "$LOGS/build.log" cmake --build "$BUILD" -j"$JOBS" --target weft_gpu_tests \
  weft_gpu_stream_tests gpu_kernel_perf all_reduce_perf weft-run \
  || { tail -30 "$LOGS/build.log"; exit 1; }
# The GEMM check needs cuBLAS (CUDA::cublas); without it the rest still runs.
step "$BUDGET" "$LOGS/build.log" cmake --build "$BUILD" -j"$JOBS" --target gpu_overlap_perf \
  || echo "== gpu_overlap_perf not built (no cuBLAS in this CUDA toolkit?): the GEMM check is skipped"
echo "== built in $(($(date +%s) - start)) s"

echo "== kernel bandwidth, the local ring and the channel round trip"
step 25 "$LOGS/kernel_perf.log" "$BUILD/perf/gpu_kernel_perf" 256M 20 4
cat "$LOGS/kernel_perf.log"

echo "== GPU unit tests (reduce kernel, ring kernel of ranks on one GPU)"
step 45 "$LOGS/gpu_tests.log" "$BUILD/tests/gpu/weft_gpu_tests"
unit_rc=$?
gtest_summary "$LOGS/gpu_tests.log"

echo "== weft.h on a stream, 2 ranks of one process on one GPU (the GPU ring: each test checks every rank has it)"
WEFT_DEBUG=WARN step 45 "$LOGS/stream_ring.log" "$BUILD/tests/gpu/weft_gpu_stream_tests"
ring_rc=$?
gtest_summary "$LOGS/stream_ring.log" 60
if [ "$ring_rc" -eq 124 ]; then
  # A stop: once more with every kernel loaded at start-up. If this one runs
  # through, the stop came from CUDA loading a kernel lazily (docs/gpu.md).
  echo "== the same with CUDA_MODULE_LOADING=EAGER (the ring's run stopped)"
  # (Into the same log, after a marker: the device tool returns few files.)
  echo "== CUDA_MODULE_LOADING=EAGER" >"$LOGS/stream_eager.tmp"
  CUDA_MODULE_LOADING=EAGER WEFT_DEBUG=WARN step 30 "$LOGS/stream_eager.tmp" \
    "$BUILD/tests/gpu/weft_gpu_stream_tests"
  gtest_summary "$LOGS/stream_eager.tmp" 20
  cat "$LOGS/stream_eager.tmp" >>"$LOGS/stream_ring.log" && rm -f "$LOGS/stream_eager.tmp"
fi

echo "== the same on the GPU ring with 64 threads per CTA (WEFT_NTHREADS=64; 512 above)"
WEFT_NTHREADS=64 WEFT_DEBUG=WARN step 30 "$LOGS/stream_ring64.log" \
  "$BUILD/tests/gpu/weft_gpu_stream_tests"
ring64_rc=$?
gtest_summary "$LOGS/stream_ring64.log" 20

echo "== the same, host-staged (WEFT_GPU_RING=0)"
WEFT_GPU_RING=0 WEFT_DEBUG=WARN step 40 "$LOGS/stream_staged.log" \
  "$BUILD/tests/gpu/weft_gpu_stream_tests"
staged_rc=$?
gtest_summary "$LOGS/stream_staged.log" 40

# Rows of all_reduce_perf in LOG since its last "== " marker, and how many
# found wrong elements (out of place or in place).
perf_verdict() {
  awk '/^== /{rows=0; bad=0} $1 ~ /^[0-9]+$/ && NF == 13 {rows++; if ($9 != 0 || $13 != 0) bad++}
    END {printf "   %d rows (size x type x op) checked, %d with wrong elements\n", rows, bad}' "$1"
}
# The issue's check: 2 ranks, one process each, sharing the GPU, every type
# and op on device buffers (host-staged: their kernels would take turns).
echo "== all_reduce_perf -D 1, 2 processes on one GPU (host-staged): every type and op, 8 B-1 MiB"
echo "== every type and op" >>"$LOGS/allreduce_perf.log"
step 40 "$LOGS/allreduce_perf.log" "$BUILD/tools/weft-run" -n 2 "$BUILD/perf/all_reduce_perf" \
  -b 8 -e 1M -f 32 -d all -o all -n 2 -w 1 -D 1
perf_verdict "$LOGS/allreduce_perf.log"
echo "== GEMM beside allreduce on the GPU ring (2 and 4 ranks of one process)"
if [ -x "$BUILD/perf/gpu_overlap_perf" ]; then
  # GEMMs per loop sized to the allreduces' time (the third argument, 0). The
  # ranks log which path their stream calls take (INFO, COLL): a figure from
  # host-staged allreduces is no figure of the ring, so each run says which.
  overlap() {  # overlap CAP RANKS
    echo "== $1 s cap, $2 ranks${WEFT_MAX_CTAS:+, WEFT_MAX_CTAS=$WEFT_MAX_CTAS}${WEFT_NTHREADS:+, WEFT_NTHREADS=$WEFT_NTHREADS}" \
      >>"$LOGS/overlap.log"
    WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=COLL step "$1" "$LOGS/overlap.log" \
      "$BUILD/perf/gpu_overlap_perf" 64M 8192 0 10 "$2"
    local run ring staged  # this run: the log from its "== " line on
    run=$(sed -n '/^== /h; /^== /!H; ${x; p}' "$LOGS/overlap.log")
    grep -v "WEFT INFO" <<<"$run"
    ring=$(grep -c "GPU ring kernel" <<<"$run")
    staged=$(grep -m1 "host-staged" <<<"$run")
    echo "   path: $ring of $2 ranks on the GPU ring${staged:+; ${staged#*COLL }}"
  }
  overlap 30 2
  overlap 30 4
  WEFT_MAX_CTAS=2 overlap 20 2
  WEFT_MAX_CTAS=2 overlap 20 4  # fewer CTAs leave more of the GPU to the GEMMs
  WEFT_NTHREADS=256 overlap 20 4  # narrower CTAs may share SMs with the GEMM's
fi
echo "== all_reduce_perf -D 1, 2 processes on one GPU (host-staged), float sum, 4 B-64 MiB (busbw)"
echo "== float sum" >>"$LOGS/allreduce_perf.log"
step 30 "$LOGS/allreduce_perf.log" "$BUILD/tools/weft-run" -n 2 "$BUILD/perf/all_reduce_perf" \
  -b 4 -e 64M -f 16 -D 1
grep -A45 "^== float sum" "$LOGS/allreduce_perf.log" | grep -E "^ +[0-9]+ |Avg bus" | tail -10
perf_verdict "$LOGS/allreduce_perf.log"
echo "== every type and op again on the GPU ring, through CUDA IPC between the 2 processes"
echo "   (WEFT_GPU_RING=shared: their kernels take turns on the GPU, so results, not speed)"
echo "== WEFT_GPU_RING=shared" >>"$LOGS/allreduce_perf.log"
WEFT_GPU_RING=shared WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=COLL step 40 "$LOGS/allreduce_perf.log" \
  "$BUILD/tools/weft-run" -n 2 "$BUILD/perf/all_reduce_perf" -b 8 -e 1M -f 32 -d all -o all \
  -n 2 -w 1 -D 1
sed -n '/^== WEFT_GPU_RING=shared/,$p' "$LOGS/allreduce_perf.log" | grep -E "GPU ring kernel|host-staged" \
  | head -2
perf_verdict "$LOGS/allreduce_perf.log"
echo "== summary: unit rc=$unit_rc, stream (ring) rc=$ring_rc, (ring, 64 threads) rc=$ring64_rc," \
  "stream (host-staged) rc=$staged_rc," \
  "total $(($(date +%s) - start)) s; logs in $LOGS"
echo "   targets: reduce/memcpy >= 0.85 (kernel bandwidth), overlap efficiency >= 0.70"
[ "$unit_rc" -eq 0 ] && [ "$ring_rc" -eq 0 ] && [ "$ring64_rc" -eq 0 ] && [ "$staged_rc" -eq 0 ]
