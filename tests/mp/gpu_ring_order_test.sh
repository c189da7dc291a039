#!/bin/sh
# Ranks that name their GPU (WEFT_RANK_GPU) on a known machine (WEFT_TOPO_FILE:
# JUWELS Booster, 4 GPUs) get a ring in the topology's GPU order, not rank
# order, and every collective still matches the reference over it.
#   gpu_ring_order_test.sh WEFT_RUN MP_COLLECTIVES TOPO_FILE
run=$1 coll=$2 topo=$3
log=/tmp/weft_gpu_ring.$$
# Rank r drives GPU r of this list (bus order reversed: ring order differs).
WEFT_TOPO_FILE=$topo WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=INIT "$run" -n 4 --timeout 110 sh -c '
  set -- 0000:c4:00.0 0000:84:00.0 0000:44:00.0 0000:03:00.0
  shift "$WEFT_RANK"
  WEFT_RANK_GPU=$1 exec "$0" --large-count 10003' "$coll" >"$log" 2>&1
rc=$?
grep -v "WEFT INFO" "$log"
order=$(grep -m1 "ring order:" "$log" | sed 's/.*ring order: //')
rm -f "$log"
# ringOrder sorts GPUs by CPU locality: 44 (NUMA 1), 03 (3), c4 (5), 84 (7)
# = ranks 2 3 0 1 (see docs/topology.md for the file).
echo "gpu_ring_order: exit $rc, ring order \"$order\" (expected \"2 3 0 1\")"
[ "$rc" -eq 0 ] && [ "$order" = "2 3 0 1" ]
