#!/usr/bin/env bash
# The NCCL drop-in on a lent GPU machine: builds libnccl.so.2 for this GPU's
# architecture, builds NVIDIA's nccl-tests against it, and runs
# all_reduce_perf, all_gather_perf, reduce_scatter_perf and sendrecv_perf
# through it (one rank per GPU: the machines lent have one), each checking its
# results (the "#wrong" columns). Prints each run's rows and a verdict.
#   perf/nccl_gpu_check.sh   (WEFT_NCCL_TESTS_SRC: nccl-tests' source, default
#                             ../shared/peers/nccl-tests or shared/peers/nccl-tests)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${WEFT_GPU_BUILD_DIR:-build-gpu}
src=${WEFT_NCCL_TESTS_SRC:-}
for guess in ../shared/peers/nccl-tests shared/peers/nccl-tests; do
  [ -z "$src" ] && [ -f "$guess/src/Makefile" ] && src=$guess
done
[ -n "$src" ] || { echo "SKIPPED: no nccl-tests source (set WEFT_NCCL_TESTS_SRC)"; exit 77; }
nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader || { echo "SKIPPED: no GPU"; exit 77; }
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWEFT_WITH_CUDA=ON -DWEFT_WITH_TORCH=OFF \
  -DWEFT_WITH_MPI=OFF -DWEFT_BUILD_TESTS=OFF "-DCMAKE_CUDA_ARCHITECTURES=${cap}-real" >/dev/null \
  && cmake --build "$BUILD" -j"$(nproc)" --target weft_nccl >"$BUILD/nccl-build.log" 2>&1 \
  || { tail -20 "$BUILD/nccl-build.log"; exit 1; }
out=$BUILD/nccl-tests
mkdir -p "$out/prefix/include" "$out/prefix/lib" "$out/cudalib"
cp /usr/local/cuda/include/nccl.h "$out/prefix/include/"
ln -sf "$PWD/$BUILD"/weft-nccl/libnccl.so* "$out/prefix/lib/"
for lib in /usr/local/cuda/lib64/libcudart*; do ln -sf "$lib" "$out/cudalib/"; done
make -C "$src/src" -j"$(nproc)" MPI=0 CUDA_HOME=/usr/local/cuda CUDA_LIB="$PWD/$out/cudalib" \
  NCCL_HOME="$PWD/$out/prefix" NVCC_GENCODE="-gencode=arch=compute_${cap},code=sm_${cap}" \
  BUILDDIR="$PWD/$out/build" >"$out/make.log" 2>&1 || { tail -20 "$out/make.log"; exit 1; }
export LD_LIBRARY_PATH=$PWD/$BUILD/weft-nccl${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WEFT_TIMEOUT=${WEFT_TIMEOUT:-20}
status=0
for test in all_reduce all_gather reduce_scatter sendrecv; do
  echo "== ${test}_perf through weft's libnccl.so.2"
  log=$out/$test.log
  timeout 60 "$out/build/${test}_perf" -b 8 -e 128M -f 8 -g 1 -c 1 >"$log" 2>&1
  rc=$?
  grep -E "^ +[0-9]+ |Avg bus|Using devices|nccl" "$log" | head -20
  # Rows whose "#wrong" columns (out of place, in place) are not 0.
  bad=$(awk '$1 ~ /^[0-9]+$/ && NF >= 12 {if ($9 != 0 && $9 != "N/A" || $NF != 0 && $NF != "N/A") n++} END {print n+0}' "$log")
  echo "   rc=$rc, rows with wrong elements: $bad"
  [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] || status=1
done
exit $status
