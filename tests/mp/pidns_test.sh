#!/bin/sh
# Ranks of one machine in different PID namespaces (containers with host
# networking but their own PIDs: `docker run --net=host`, a Kubernetes pod's
# containers). Shared memory finds a peer through /proc/<its pid>, which in
# another PID namespace names another process or none, so weft must count
# such ranks as separate nodes (topo/node_id.h) and still give right answers.
#   pidns_test.sh WEFT_RUN MP_COLLECTIVES
# Cases, each a weft-run job with WEFT_DEBUG=INFO (the "shared memory with N
# local peer(s)" lines say what each rank chose):
#   split    3 ranks, ranks 1 and 2 each in a PID namespace of its own (own
#            /proc): mp_collectives passes, no rank has a local peer;
#   shared   2 ranks in one new PID namespace with its /proc: passes, and they
#            do share memory (one namespace is still one node);
#   hostproc 2 ranks in one new PID namespace under the host's /proc (whose
#            pids are not theirs): passes, no local peer;
#   forged   as split, 2 ranks, with WEFT_HOSTID forced equal: must fail at
#            init within seconds, naming the PID namespace (it used to hang
#            until WEFT_TIMEOUT, each rank mapping its own segment).
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN MP_COLLECTIVES" >&2
  exit 2
fi
weft_run=$1
mp=$2
if ! unshare -p -f --mount-proc true 2>/dev/null; then
  echo "SKIPPED: cannot create PID namespaces here (unshare -p needs root or user namespaces)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
export WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=NET WEFT_TIMEOUT=30

# run NAME EXPECT_RC_ZERO(1/0) LOCAL_PEERS_EXPECTED  -- weft-run args...
run() {
  name=$1 want_ok=$2 peers=$3
  shift 3
  start=$(date +%s)
  "$@" >"$out" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  echo "--- $name: exit $rc in ${took} s"
  grep -E 'shared memory with|FAIL|error|cannot' "$out" | cut -c1-300
  if [ "$want_ok" = 1 ] && [ "$rc" -ne 0 ]; then
    cat "$out"
    echo "FAIL: $name: the job failed"
    fail=1
  fi
  if [ "$want_ok" = 0 ] && [ "$rc" -eq 0 ]; then
    echo "FAIL: $name: the job succeeded although its ranks cannot share memory"
    fail=1
  fi
  if [ -n "$peers" ] && grep 'shared memory with' "$out" | grep -qv "with $peers local peer"; then
    echo "FAIL: $name: a rank did not see $peers local peer(s)"
    fail=1
  fi
}

own_ns='if [ "$WEFT_RANK" = 0 ]; then exec "$0" "$@"; else exec unshare -p -f --mount-proc "$0" "$@"; fi'
run split 1 0 "$weft_run" -n 3 --timeout 120 sh -c "$own_ns" "$mp"
run shared 1 1 unshare -p -f --mount-proc "$weft_run" -n 2 --timeout 120 "$mp"
run hostproc 1 0 unshare -p -f "$weft_run" -n 2 --timeout 120 "$mp"
WEFT_HOSTID=one-machine run forged 0 "" "$weft_run" -n 2 --timeout 60 \
  unshare -p -f --mount-proc "$mp"
if [ "$took" -gt 20 ]; then
  echo "FAIL: forged: took ${took} s to fail (a hang until WEFT_TIMEOUT?)"
  fail=1
fi
if ! grep -q 'PID namespace' "$out"; then
  echo "FAIL: forged: no error names the PID namespace"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
