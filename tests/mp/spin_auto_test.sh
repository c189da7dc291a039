#!/bin/sh
# WEFT_SPIN_US=auto (base/cpu_share.h): ranks that outnumber the CPUs they may
# run on stop spinning; ranks with a CPU each keep the 2 us spin; and a
# communicator split from an oversubscribed one keeps the verdict, though it
# has fewer ranks than CPUs. taskset sets the CPUs, so the answer does not
# depend on the machine's size. Each case checks every rank's INIT line.
#   spin_auto_test.sh WEFT_RUN MP_COLL_FULL
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN MP_COLL_FULL" >&2
  exit 2
fi
weft_run=$1
mp=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
export WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=INIT

# The CPUs this process may use, one per line ("0-2,5" -> 0 1 2 5).
cpus=$(awk '/^Cpus_allowed_list/ {
  n = split($2, parts, ",")
  for (i = 1; i <= n; i++) {
    m = split(parts[i], r, "-")
    for (c = r[1]; c <= (m == 2 ? r[2] : r[1]); c++) print c
  }
}' /proc/self/status)
first=$(echo "$cpus" | sed -n 1p)
second=$(echo "$cpus" | sed -n 2p)

# expect NAME COUNT PATTERN: the last job printed PATTERN COUNT times and passed.
expect() {
  got=$(grep -c "$3" "$out")
  if [ "$rc" -ne 0 ] || [ "$got" -ne "$2" ]; then
    cat "$out"
    echo "FAIL: $1: exit $rc, $got line(s) matching '$3', expected $2"
    fail=1
  else
    echo "ok: $1"
  fi
}

run() {  # run CPUS NRANKS [ONLY]
  taskset -c "$1" "$weft_run" -n "$2" --timeout 120 "$mp" --only "${3:-broadcast}" \
    --large-count 1003 >"$out" 2>&1
  rc=$?
}

run "$first" 2
expect "2 ranks on 1 CPU" 2 "2 rank(s) of this node on 1 CPU(s), oversubscribed: waiters spin 0 us"
WEFT_SPIN_US=5 run "$first" 2
expect "2 ranks on 1 CPU, WEFT_SPIN_US=5 kept" 0 "waiters spin"
if [ -z "$second" ]; then
  echo "SKIPPED: the cases with 2 CPUs (this process may run on one CPU only)"
else
  run "$first,$second" 2
  expect "2 ranks on 2 CPUs" 2 "2 rank(s) of this node on 2 CPU(s): waiters spin 2 us"
  # mp_coll_full's split group: parity and reversed keys give 2-rank
  # communicators (2 x 2 ranks each), the third split 3 ranks (rank 1 has no color).
  run "$first,$second" 4 split
  expect "4 ranks on 2 CPUs" 4 "4 rank(s) of this node on 2 CPU(s), oversubscribed: waiters spin 0 us"
  expect "split from 4 ranks on 2 CPUs" 8 "2 rank(s) of this node on 2 CPU(s), oversubscribed"
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
