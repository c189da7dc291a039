#!/bin/sh
# The leaf-level allreduce (WEFT_ALGO=hier-leaf, collectives/hier.cc) on 8
# ranks posing as nodes (WEFT_HOSTID) under leaves (WEFT_FABRIC):
#   leaves: 4 nodes of 2 ranks, 2 nodes on each of 2 leaves;
#   pods:   8 nodes of 1 rank, 2 on each of 4 leaves, 2 leaves in each of
#           2 pods, so the ring across leaves runs as a ring in the pod
#           around a ring across pods.
# mp_collectives checks every allreduce's result (every type and op, in and
# out of place); every rank's TUNING lines must show that its allreduces
# across nodes ran hier-leaf, and rank 0's model table must name the levels.
#   hier_leaf_test.sh WEFT_RUN MP_COLLECTIVES leaves|pods
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 WEFT_RUN MP_COLLECTIVES leaves|pods" >&2
  exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
case "$3" in
leaves)
  per=2
  levels="hier-leaf levels: 2 nodes per leaf, 2 leaves"
  cat >"$dir/fabric.json" <<'JSON'
{"node_gbit": 100,
 "leaves": [{"name": "a", "uplink_gbit": 100, "nodes": ["n0", "n1"]},
            {"name": "b", "uplink_gbit": 100, "nodes": ["n2", "n3"]}]}
JSON
  ;;
pods)
  per=1
  levels="hier-leaf levels: 2 nodes per leaf, 4 leaves in 2 pods of 2"
  # Rank order crosses every level: node n sits on leaf n % 4.
  cat >"$dir/fabric.json" <<'JSON'
{"node_gbit": 100,
 "pods": [{"name": "p", "uplink_gbit": 100}, {"name": "q", "uplink_gbit": 100}],
 "leaves": [{"name": "a", "pod": "p", "uplink_gbit": 100, "nodes": ["n0", "n4"]},
            {"name": "b", "pod": "p", "uplink_gbit": 100, "nodes": ["n1", "n5"]},
            {"name": "c", "pod": "q", "uplink_gbit": 100, "nodes": ["n2", "n6"]},
            {"name": "d", "pod": "q", "uplink_gbit": 100, "nodes": ["n3", "n7"]}]}
JSON
  ;;
*)
  echo "$0: no fabric named $3 (leaves or pods)" >&2
  exit 2
  ;;
esac
WEFT_FABRIC=$dir/fabric.json WEFT_ALGO=hier-leaf WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=TUNING \
  WEFT_TIMEOUT=120 PER=$per "$1" -n 8 --timeout 300 sh -c \
  'node=$((WEFT_RANK / PER)); WEFT_HOSTID=fake-$node WEFT_FABRIC_NODE=n$node exec "$0" --large-count 10003 --huge-mib 1' \
  "$2" >"$dir/out" 2>&1
rc=$?
ranks=$(grep "allreduce of .* B: hier-leaf (WEFT_ALGO)" "$dir/out" | sed 's/.*rank \([0-9]*\):.*/\1/' |
  sort -u | wc -l)
other=$(grep -c "allreduce of .* B: [a-z-]* (WEFT_ALGO)" "$dir/out")
leaf=$(grep -c "allreduce of .* B: hier-leaf (WEFT_ALGO)" "$dir/out")
with_levels=$(grep -c "$levels\$" "$dir/out")
grep -v "WEFT INFO" "$dir/out" | tail -12
echo "hier_leaf_test $3: exit $rc; $ranks ranks ran hier-leaf ($leaf of $other forced" \
  "allreduces); $with_levels model table(s) with '$levels'"
[ "$rc" -eq 0 ] && [ "$ranks" -eq 8 ] && [ "$leaf" -eq "$other" ] && [ "$with_levels" -ge 1 ]
