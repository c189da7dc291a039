// Hierarchical allreduce and allgather (hier.cc) and all-to-all
// (hier_alltoall.cc): inside each node over shared memory, across nodes
// between ranks of equal local index.
#pragma once

#include "collectives/coll_context.h"
#include "collectives/comm_topo.h"

namespace weft {

// True when the hierarchical forms apply and differ from the flat ones: equal
// ranks on every node, more than one node, more than one rank per node.
bool hierUsable(const CommTopo& topo);
// True when the two levels across nodes exist (CommTopo::leafNodes); one
// rank per node is enough: the levels are then all of the hierarchy.
bool hierLeafUsable(const CommTopo& topo);
// How the ranks of equal local index allreduce their pieces across nodes
// (kLeafRings: a reduce-scatter ring inside the leaf, a ring allreduce of
// the piece across leaves, an allgather ring inside the leaf).
enum class Across { kRing, kTree, kRecursiveDoubling, kHalvingDoubling, kLeafRings };
weftResult_t hierAllReduce(CollContext& ctx, const CommTopo& topo, const CollArgs& args,
                           Across across);
weftResult_t hierAllGather(CollContext& ctx, const CommTopo& topo, const CollArgs& args);
// All-to-all through the node, then between ranks of equal local index
// (hier_alltoall.cc): where hierUsable. Uses scratch of the output's size.
weftResult_t hierAllToAll(CollContext& ctx, const CommTopo& topo, const CollArgs& args);
// Whether the selection table runs all-to-all through the node when nothing
// is forced: where it applies on a rail-optimised fabric (WEFT_FABRIC's
// "rails") whose oversubscribed uplinks it spares enough rail changes to pay
// for its first phase (few leaves; hier_alltoall.cc has the rule).
bool hierAllToAllPreferred(const CommTopo& topo);

}  // namespace weft
