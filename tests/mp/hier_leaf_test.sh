#!/bin/sh
# The leaf-level allreduce (WEFT_ALGO=hier-leaf, collectives/hier.cc) on 8
# ranks posing as 4 nodes of 2 ranks (WEFT_HOSTID), 2 nodes on each of 2
# leaves (WEFT_FABRIC): mp_collectives checks every allreduce's result (every
# type and op, in and out of place), and every rank's TUNING lines must show
# that its allreduces across nodes ran hier-leaf.
#   hier_leaf_test.sh WEFT_RUN MP_COLLECTIVES
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN MP_COLLECTIVES" >&2
  exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/fabric.json" <<'JSON'
{"node_gbit": 100,
 "leaves": [{"name": "a", "uplink_gbit": 100, "nodes": ["n0", "n1"]},
            {"name": "b", "uplink_gbit": 100, "nodes": ["n2", "n3"]}]}
JSON
WEFT_FABRIC=$dir/fabric.json WEFT_ALGO=hier-leaf WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=TUNING \
  WEFT_TIMEOUT=120 "$1" -n 8 --timeout 300 sh -c \
  'node=$((WEFT_RANK / 2)); WEFT_HOSTID=fake-$node WEFT_FABRIC_NODE=n$node exec "$0" --large-count 10003 --huge-mib 1' \
  "$2" >"$dir/out" 2>&1
rc=$?
ranks=$(grep "allreduce of .* B: hier-leaf (WEFT_ALGO)" "$dir/out" | sed 's/.*rank \([0-9]*\):.*/\1/' |
  sort -u | wc -l)
other=$(grep -c "allreduce of .* B: [a-z-]* (WEFT_ALGO)" "$dir/out")
leaf=$(grep -c "allreduce of .* B: hier-leaf (WEFT_ALGO)" "$dir/out")
grep -v "WEFT INFO" "$dir/out" | tail -12
echo "hier_leaf_test: exit $rc; $ranks ranks ran hier-leaf ($leaf of $other forced allreduces)"
[ "$rc" -eq 0 ] && [ "$ranks" -eq 8 ] && [ "$leaf" -eq "$other" ]
