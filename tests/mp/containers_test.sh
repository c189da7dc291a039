#!/bin/sh
# Ranks of one machine in containers: other PID namespaces (host networking
# but their own PIDs: `docker run --net=host`, a Kubernetes pod's containers)
# and other user namespaces (rootless containers). Shared memory finds a peer
# through /proc/<its pid>/fd, which in another PID namespace names another
# process or none, and which another user namespace may not open. weft must
# count ranks in other PID namespaces as separate nodes (topo/node_id.h), and
# fall back to the network when a local peer's segment cannot be mapped
# (transports/shm/shm_transport.h); every job must still give right answers.
#   containers_test.sh WEFT_RUN MP_COLLECTIVES
# Cases, each a weft-run job of mp_collectives with WEFT_DEBUG=INFO (the
# "shared memory with N local peer(s)" / "shared memory off" lines say what
# each rank chose):
#   split    3 ranks, ranks 1 and 2 each in a PID namespace of its own (own
#            /proc): no rank has a local peer;
#   shared   2 ranks in one new PID namespace with its /proc: they do share
#            memory (one namespace is still one node);
#   hostproc 2 ranks in one new PID namespace under the host's /proc (whose
#            pids are not theirs): no local peer;
#   forged   as split, 2 ranks, with WEFT_HOSTID forced equal: shared memory
#            off, with a warning naming the PID namespace (this once hung
#            until WEFT_TIMEOUT, each rank mapping its own segment);
#   userns   3 ranks, rank 1 in a user namespace of its own: it may not open
#            rank 0's /proc/<pid>/fd, so shared memory is off for all (init
#            used to fail).
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN MP_COLLECTIVES" >&2
  exit 2
fi
weft_run=$1
mp=$2
# Smaller than mp_collectives' defaults (a 64 MiB call): set-up is what is tested here.
small="--large-count 100003 --huge-mib 8"
if ! unshare -p -f --mount-proc true 2>/dev/null; then
  echo "SKIPPED: cannot create PID namespaces here (unshare -p needs root or user namespaces)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
export WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=NET WEFT_TIMEOUT=30

# run NAME LOCAL_PEERS_EXPECTED|off -- COMMAND...: the job must pass, and
# every rank must report that many local peers, or shared memory off.
run() {
  name=$1 peers=$2
  shift 2
  start=$(date +%s)
  "$@" >"$out" 2>&1
  rc=$?
  echo "--- $name: exit $rc in $(($(date +%s) - start)) s"
  grep -E 'shared memory|FAIL|error|cannot join' "$out" | cut -c1-300
  if [ "$rc" -ne 0 ]; then
    cat "$out"
    echo "FAIL: $name: the job failed"
    fail=1
  fi
  if [ "$peers" = off ]; then
    if grep -q 'shared memory with' "$out" || [ "$(grep -c 'shared memory off' "$out")" -eq 0 ]; then
      echo "FAIL: $name: shared memory was not turned off on every rank"
      fail=1
    fi
  elif grep 'shared memory' "$out" | grep -qv "with $peers local peer"; then
    echo "FAIL: $name: a rank did not see $peers local peer(s)"
    fail=1
  fi
}

own_ns='if [ "$WEFT_RANK" = 0 ]; then exec "$0" "$@"; else exec unshare -p -f --mount-proc "$0" "$@"; fi'
run split 0 "$weft_run" -n 3 --timeout 120 sh -c "$own_ns" "$mp" $small
run shared 1 unshare -p -f --mount-proc "$weft_run" -n 2 --timeout 120 "$mp" $small
run hostproc 0 unshare -p -f "$weft_run" -n 2 --timeout 120 "$mp" $small
WEFT_HOSTID=one-machine run forged off "$weft_run" -n 2 --timeout 120 \
  unshare -p -f --mount-proc "$mp" $small
if ! grep -q 'shared memory off.*PID namespace' "$out"; then
  echo "FAIL: forged: no warning names the PID namespace"
  fail=1
fi
if unshare -U -r true 2>/dev/null; then
  user_ns='if [ "$WEFT_RANK" = 1 ]; then exec unshare -U -r "$0" "$@"; else exec "$0" "$@"; fi'
  run userns off "$weft_run" -n 3 --timeout 120 sh -c "$user_ns" "$mp" $small
else
  echo "--- userns: SKIPPED: cannot create user namespaces here"
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
