#!/bin/sh
# Builds NVIDIA's nccl-tests (unmodified) against the drop-in libnccl.so.2:
# compiled with nvcc against the real nccl.h, linked where the only
# libnccl.so is weft's. Then checks that every NCCL function the binaries
# need is one the drop-in exports (the device API, which they reference
# weakly, may be absent). No GPU is needed; running them needs one.
# Usage: build_nccl_tests.sh <nccl-tests source> <drop-in dir> <nccl.h dir> <cuda home> <out>
set -eu
src=$1 dropin=$2 header=$3 cuda=$4 out=$5
if [ ! -f "$src/src/Makefile" ]; then
  echo "SKIPPED: no nccl-tests source at $src"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out/prefix/include" "$out/prefix/lib" "$out/cudalib"
cp "$header/nccl.h" "$out/prefix/include/"
ln -s "$dropin"/libnccl.so* "$out/prefix/lib/"
# nccl-tests puts CUDA's library folder first on the link line, and the CUDA
# toolkit may hold NVIDIA's libnccl.so: link from a folder with cudart only.
for lib in "$cuda"/lib64/libcudart*; do ln -s "$lib" "$out/cudalib/"; done
cp -r "$src" "$out/src"
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 2 ] && jobs=2
make -C "$out/src" -j"$jobs" MPI=0 CUDA_HOME="$cuda" CUDA_LIB="$out/cudalib" \
  NCCL_HOME="$out/prefix" NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
  BUILDDIR="$out/build" > "$out/make.log" 2>&1 || { tail -40 "$out/make.log"; exit 1; }
nm -D --defined-only "$dropin/libnccl.so.2" | awk '{print $3}' | sort -u > "$out/exported"
status=0
count=0
for bin in "$out"/build/*_perf; do
  count=$((count + 1))
  nm -u "$bin" | awk '$1 == "U" && $2 ~ /^nccl/ {print $2}' | sort -u > "$out/needed"
  missing=$(comm -23 "$out/needed" "$out/exported")
  if [ -n "$missing" ]; then
    echo "FAIL: $(basename "$bin") needs what the drop-in lacks: $missing"
    status=1
  fi
  if ! LD_LIBRARY_PATH="$dropin" ldd "$bin" | grep -q "$dropin/libnccl.so.2"; then
    echo "FAIL: $(basename "$bin") does not load the drop-in's libnccl.so.2"
    status=1
  fi
done
[ "$count" -gt 0 ] || { echo "FAIL: no *_perf binary was built"; exit 1; }
[ "$status" -eq 0 ] && echo "nccl-tests: $count binaries built and linked against the drop-in"
exit $status
