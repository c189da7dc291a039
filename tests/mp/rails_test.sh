#!/bin/sh
# A rail-optimised fabric (WEFT_FABRIC "rails"): 9 ranks posing as 3 nodes of
# 3 (WEFT_HOSTID) under one leaf of 3 rail switches. The ring must change node
# only between ranks of equal local index (one rail): with an odd number of
# nodes, 1 0 2 | 5 4 3 | 6 8 7. mp_collectives checks every collective over
# it (WEFT_ALGO=ring), and rank 0's INIT line must give that order. Then
# all-to-all, nothing forced, with the nodes' ranks placed cyclically
# (rank r on node r % 3): the table must run it through the node (hier,
# the uplinks being oversubscribed), and mp_coll_full checks every block.
#   rails_test.sh WEFT_RUN MP_COLLECTIVES MP_COLL_FULL
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 WEFT_RUN MP_COLLECTIVES MP_COLL_FULL" >&2
  exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/fabric.json" <<'JSON'
{"node_gbit": 100, "rails": 3,
 "leaves": [{"name": "a", "oversubscription": 2, "nodes": ["n0", "n1", "n2"]}]}
JSON
WEFT_FABRIC=$dir/fabric.json WEFT_ALGO=ring WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=INIT \
  WEFT_TIMEOUT=120 "$1" -n 9 --timeout 300 sh -c \
  'node=$((WEFT_RANK / 3)); WEFT_HOSTID=fake-$node WEFT_FABRIC_NODE=n$node exec "$0" --large-count 10003 --huge-mib 1' \
  "$2" >"$dir/out" 2>&1
rc=$?
expected="ring order: 1 0 2 5 4 3 6 8 7"
orders=$(grep -c "$expected\$" "$dir/out")
grep -v "WEFT INFO" "$dir/out" | tail -10
grep "ring order" "$dir/out" | head -2
echo "rails_test: exit $rc; $orders communicator(s) with '$expected'"
WEFT_FABRIC=$dir/fabric.json WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=TUNING WEFT_TIMEOUT=120 \
  "$1" -n 9 --timeout 300 sh -c \
  'node=$((WEFT_RANK % 3)); WEFT_HOSTID=fake-$node WEFT_FABRIC_NODE=n$node exec "$0" --only alltoall' \
  "$3" >"$dir/a2a" 2>&1
rc2=$?
through=$(grep -c "alltoall of [0-9]* B: hier" "$dir/a2a")
direct=$(grep -c "alltoall of [0-9]* B: direct" "$dir/a2a")
grep -v "WEFT INFO" "$dir/a2a" | tail -4
echo "rails_test: alltoall exit $rc2; $through call(s) through the node, $direct direct"
[ "$rc" -eq 0 ] && [ "$orders" -ge 1 ] && [ "$rc2" -eq 0 ] && [ "$through" -ge 1 ] &&
  [ "$direct" -eq 0 ]
