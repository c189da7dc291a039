// Runs an allreduce or allgather with the algorithm, chunk and streams the
// tuner chose (AlgoChoice), over the communicator's views. The one place that
// maps a modelled AlgoId to its code: the selection table calls it for real
// calls, and the simulator (tools/weft_sim) for recorded ones.
#pragma once

#include "collectives/coll_context.h"
#include "collectives/comm_topo.h"
#include "collectives/tuner.h"

namespace weft {

// Sets ctx.chunkBytes and the ring view's streams from `plan` (the caller
// restores its defaults). Rings and trees run on the ring view.
weftResult_t runModelled(CollContext& ctx, const CommTopo& topo, bool allReduce,
                         const CollArgs& args, const AlgoChoice& plan);

}  // namespace weft
