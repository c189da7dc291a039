// Every rank's plans, asked of weft's own code: for each simulated rank the
// real CommTopo is built (with the fabric, so the ring and trees are placed
// as weft would place them), the real tuner picks (or --algo forces) the
// algorithm, and the real algorithm runs with a FlowRecorder in place of the
// engine (collectives/flow_engine.h), over channels that only name their peer.
// Buffers are address space that is never touched, so sizes are not bounded
// by this machine's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algo_id.h"
#include "collectives/tuner.h"
#include "sim_network.h"

namespace weft {
namespace sim {

struct SimItem {
  uint64_t bytes = 0;
  int32_t depFlow = -1, depFlow2 = -1;  // flows of the same phase
  int64_t depItem = -1, depItem2 = -1;
};

struct SimFlow {
  bool send = false;
  int peer = -1, stream = 0;  // a communicator rank (-1: the flow moves no items)
  std::vector<SimItem> items;
};

using SimPhase = std::vector<SimFlow>;  // one runFlows call

struct RankPlans {
  std::vector<SimPhase> phases;
};

struct SimCall {
  bool allReduce = true;
  bool allToAll = false;    // then allReduce is false
  size_t bytesPerRank = 0;  // allreduce: the buffer; allgather: each rank's piece;
                            // alltoall: the block for each peer
  AlgoId forced = AlgoId::kAuto;
  int streams = 0;  // 0: the tuner's
};

// The tuner's link models for the cluster (what a real job would measure).
void clusterLinks(const Cluster& c, LinkModel* intra, LinkModel* inter);

// The tuner weft builds for `rank` and its choice (or the forced algorithm
// with the tuner's chunk). False with *why when the algorithm does not apply.
bool chooseAlgo(const Cluster& c, const SimCall& call, AlgoChoice* choice, std::string* why);

// Records `rank`'s plans for `call` with `choice`. False with *why on failure.
bool recordRank(const Cluster& c, const SimCall& call, const AlgoChoice& choice, int rank,
                RankPlans* out, std::string* why);

// The ring view's order (ranks by position), as weft builds it.
std::vector<int> ringOrder(const Cluster& c);

}  // namespace sim
}  // namespace weft
