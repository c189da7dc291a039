#!/bin/sh
# A rail-optimised fabric (WEFT_FABRIC "rails"): 9 ranks posing as 3 nodes of
# 3 (WEFT_HOSTID) under one leaf of 3 rail switches. The ring must change node
# only between ranks of equal local index (one rail): with an odd number of
# nodes, 1 0 2 | 5 4 3 | 6 8 7. mp_collectives checks every collective over
# it (WEFT_ALGO=ring), and rank 0's INIT line must give that order.
#   rails_test.sh WEFT_RUN MP_COLLECTIVES
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN MP_COLLECTIVES" >&2
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
[ "$rc" -eq 0 ] && [ "$orders" -ge 1 ]
