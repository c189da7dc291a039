// The modelled algorithms' dispatch (see modelled_run.h).
#include "collectives/modelled_run.h"

#include "collectives/hier.h"

namespace weft {

weftResult_t runModelled(CollContext& ctx, const CommTopo& topo, bool allReduce, const CollArgs& a,
                         const AlgoChoice& plan) {
  ctx.chunkBytes = plan.chunkBytes;
  topo.ring->setStreams(plan.streams);
  CollContext ringCtx = CommTopo::on(ctx, topo.ring.get(), topo.ringPos);
  const bool hier = hierUsable(topo);
  switch (plan.algo) {
    case AlgoId::kOneshot:
      return oneshotAllReduce(ctx, a);
    case AlgoId::kRing:
      return allReduce ? ringAllReduce(ringCtx, a) : ringAllGatherOn(ringCtx, topo.ring.get(), a);
    case AlgoId::kTree:
      return treeAllReduce(ringCtx, topo.ringTree, a);
    case AlgoId::kHierRing:
      return allReduce ? hierAllReduce(ctx, topo, a, Across::kRing) : hierAllGather(ctx, topo, a);
    case AlgoId::kHierTree:
      return allReduce ? hierAllReduce(ctx, topo, a, Across::kTree) : hierAllGather(ctx, topo, a);
    case AlgoId::kHierLeaf:
      return allReduce ? hierAllReduce(ctx, topo, a, Across::kLeafRings)
                       : hierAllGather(ctx, topo, a);
    case AlgoId::kRd:
      return hier ? hierAllReduce(ctx, topo, a, Across::kRecursiveDoubling)
                  : recursiveDoublingAllReduce(ringCtx, a);
    case AlgoId::kRhd:
      return hier ? hierAllReduce(ctx, topo, a, Across::kHalvingDoubling)
                  : halvingDoublingAllReduce(ringCtx, a);
    case AlgoId::kDirect:
      return directAllGather(ctx, a);
    default:
      return ringAllReduce(ringCtx, a);
  }
}

}  // namespace weft
