// Hierarchical allreduce and allgather (hier.cc): inside each node over shared
// memory, across nodes between ranks of equal local index.
#pragma once

#include "collectives/coll_context.h"
#include "collectives/comm_topo.h"

namespace weft {

// True when the hierarchical forms apply and differ from the flat ones: equal
// ranks on every node, more than one node, more than one rank per node.
bool hierUsable(const CommTopo& topo);
// treeAcross: the step across nodes is the double binary tree, else a ring.
weftResult_t hierAllReduce(CollContext& ctx, const CommTopo& topo, const CollArgs& args,
                           bool treeAcross);
weftResult_t hierAllGather(CollContext& ctx, const CommTopo& topo, const CollArgs& args);

}  // namespace weft
