#!/bin/sh
# Allreduce on one node without shared memory (WEFT_SHM_DISABLE=1), auto
# mode: the one-round algorithm while a rank receives at most 96 KiB in all
# ((n-1) x the message), on more than 8 ranks recursive doubling there
# instead, then the double binary tree up to 64 KiB, then the ring
# (core/algo_table.h). The selection logs each choice at WEFT_DEBUG=INFO
# (TUNING), which the checks read. Every datatype and op is checked.
#   single_node_algo_test.sh WEFT_RUN ALL_REDUCE_PERF
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN ALL_REDUCE_PERF" >&2
  exit 2
fi
weft_run=$1
perf=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
export WEFT_SHM_DISABLE=1 WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=TUNING

# check NAME EXPECTATIONS...: +PATTERN must appear in the last run's output, -PATTERN must not.
check() {
  name=$1
  shift
  for want in "$@"; do
    pattern=${want#?}
    if [ "${want%"$pattern"}" = "+" ]; then
      grep -q "$pattern" "$out" || { echo "FAIL: $name: no line matching '$pattern'"; fail=1; }
    else
      ! grep -q "$pattern" "$out" || { echo "FAIL: $name: a line matches '$pattern'"; fail=1; }
    fi
  done
  if [ "$rc" -ne 0 ] || ! grep -q "Out of bounds values : 0 OK" "$out"; then
    echo "FAIL: $name: exit $rc or wrong values"
    fail=1
  fi
  [ "$fail" -eq 0 ] && echo "ok: $name"
  [ "$fail" -eq 0 ] || cat "$out"
}

run() {  # run NRANKS MINBYTES MAXBYTES
  "$weft_run" -n "$1" --timeout 120 "$perf" -b "$2" -e "$3" -f 4 -w 1 -n 2 -d all -o all \
    >"$out" 2>&1
  rc=$?
}

run 4 16K 64K
check "4 ranks" "+rank 0: allreduce of 65536 B: tree" "+rank 0: allreduce of 16384 B: oneshot"
run 8 4K 16K
check "8 ranks" "+rank 0: allreduce of 16384 B: tree" "+rank 0: allreduce of 4096 B: oneshot"
run 12 16 16K
check "12 ranks" "+rank 0: allreduce of 16 B: rd" "+rank 0: allreduce of 4096 B: rd" \
  "+rank 0: allreduce of 16384 B: tree" "-B: oneshot"
run 2 64K 256K
# 2 ranks: one round at 64 KiB, and the ring at 256 KiB (never the tree: it needs 3 ranks).
check "2 ranks" "+rank 0: allreduce of 65536 B: oneshot" "+rank 0: allreduce of 262144 B: ring" "-B: tree"
# With shared memory: the boards for small calls, single copy for large ones,
# and WEFT_ALGO=ring filtering both out.
unset WEFT_SHM_DISABLE
run 2 16 1M
check "2 ranks, shm" "+rank 0: allreduce of 16 B: board" "+rank 0: allreduce of 1048576 B: single-copy"
export WEFT_ALGO=ring
run 2 16 1M
check "2 ranks, shm, WEFT_ALGO=ring" "+rank 0: allreduce of 16 B: ring" "-B: board" "-B: single-copy"
unset WEFT_ALGO
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
