#!/bin/sh
# Builds one libFuzzer target of fuzz_parsers.cc with clang (ASan + UBSan,
# linked against the gcc-built libweft.a) and runs it for a bounded time.
#   run_fuzz.sh SOURCE_DIR BUILD_DIR unique_id|wire SECONDS
# Prints the executions libFuzzer ran; fails on any crash or sanitizer
# report; prints "SKIPPED: why" (exit 77) when clang or libFuzzer is missing.
set -u
src=$1
build=$2
target=$3
seconds=$4
cxx=${WEFT_FUZZ_CXX:-}
if [ -z "$cxx" ]; then
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
  done
fi
if [ -z "$cxx" ]; then
  echo "SKIPPED: no clang++ on PATH (libFuzzer needs clang; set WEFT_FUZZ_CXX)"
  exit 77
fi
out=$build/tests/fuzz
mkdir -p "$out"
probe=$out/probe_$target
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  >"$probe.cc"
if ! "$cxx" -fsanitize=fuzzer "$probe.cc" -o "$probe" >"$probe.log" 2>&1; then
  echo "SKIPPED: $cxx cannot link -fsanitize=fuzzer (install libclang-rt-14-dev):"
  head -3 "$probe.log"
  exit 77
fi
lib=$build/src/libweft.a
if [ ! -f "$lib" ]; then
  echo "FAIL: $lib is missing (build weft first)"
  exit 1
fi
macro=$(echo "WEFT_FUZZ_$target" | tr '[:lower:]' '[:upper:]')
bin=$out/fuzz_$target
sources="$src/tests/fuzz/fuzz_parsers.cc $src/src/bootstrap/wire.cc $src/src/base/call_header.cc"
# A library built with the verbs transport needs libibverbs too ...
verbs=""
if nm "$lib" 2>/dev/null | grep -q " U ibv_get_device_list"; then verbs=-libverbs; fi
# ... and librdmacm, for the WEFT_IB_RDMACM connection setup.
if nm "$lib" 2>/dev/null | grep -q " U rdma_get_devices"; then verbs="-lrdmacm $verbs"; fi
# ... and a CUDA build's the static CUDA runtime (its stream path and GPU ring).
cuda=""
if nm "$lib" 2>/dev/null | grep -q " U cudaGetDeviceCount"; then
  cudart=$(sed -n 's/^CUDA_cudart_static_LIBRARY:FILEPATH=//p' "$build/CMakeCache.txt")
  cuda="${cudart:-/usr/local/cuda/lib64/libcudart_static.a} -ldl -lrt"
fi
stale=0
for f in $sources "$lib"; do
  [ "$f" -nt "$bin" ] && stale=1
done
if [ ! -x "$bin" ] || [ "$stale" -eq 1 ]; then
  echo "building $bin with $cxx"
  # shellcheck disable=SC2086
  if ! "$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
      -D"$macro" -I"$src/include" -I"$src/src" -I"$src" $sources "$lib" \
      $(pkg-config --libs hwloc) $verbs $cuda -lpthread -o "$bin" >"$bin.log" 2>&1; then
    echo "FAIL: building the fuzz target failed:"
    tail -20 "$bin.log"
    exit 1
  fi
fi
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
# Seeds: an all-zero id in text form, and a byte of each wire case.
printf '%0256d' 0 >"$corpus/zero_id"
for k in 0 1 2 3; do printf "\\$(printf '%03o' "$k")WEFT" >"$corpus/case$k"; done
log=$out/fuzz_$target.log
WEFT_DEBUG=NONE "$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
  -rss_limit_mb=2048 "$corpus" >"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
if [ "$rc" -ne 0 ]; then
  tail -40 "$log"
  echo "FAIL: fuzz target $target crashed or reported an error after ${execs:-?} executions"
  exit 1
fi
echo "PASS: fuzz target $target: ${execs:-?} executions in $seconds s, no crash"
exit 0
