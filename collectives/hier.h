// Hierarchical allreduce and allgather (hier.cc): inside each node over shared
// memory, across nodes between ranks of equal local index.
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

}  // namespace weft
