#!/bin/sh
# Which way replica commits move the copies (core/replica_commit.cc): on one
# node whose ranks map each other's memory, every owner writes straight into
# its holder's slot; with WEFT_SHM_MAP=0, or over TCP, it sends them. Each
# case also runs a death and a restore, which must end bitwise equal to a run
# without it (mp_replica checks), and checks every rank's INFO line.
#   replica_path_test.sh WEFT_RUN MP_REPLICA
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN MP_REPLICA" >&2
  exit 2
fi
weft_run=$1
mp=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
export WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=COLL

# expect NAME PATTERN: the job passed and all 4 ranks' first commits said PATTERN
# (the standby joins after a death and commits the same way: 5 lines).
expect() {
  got=$(grep -c "$2" "$out")
  if [ "$rc" -ne 0 ] || [ "$got" -lt 4 ]; then
    cat "$out"
    echo "FAIL: $1: exit $rc, $got line(s) matching '$2', expected 4 or more"
    fail=1
  else
    echo "ok: $1 ($got ranks)"
  fi
}

run() {
  "$weft_run" -n 4 --standby 1 --timeout 120 "$mp" --kill 2 --bytes 4194304 >"$out" 2>&1
  rc=$?
}

run
expect "shared memory, mapped" "replica commits write 1 of 1 holder slot(s) in place (shared memory), 0 with RDMA"
WEFT_SHM_MAP=0 run
expect "shared memory, WEFT_SHM_MAP=0" "replica commits send to 1 holder(s)"
WEFT_SHM_DISABLE=1 run
expect "TCP" "replica commits send to 1 holder(s)"
exit $fail
