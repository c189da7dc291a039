// What every rank learns about every other one at communicator init, in one
// bootstrap allgather that the transports and the tuner share (one ring of n
// hops, where each gathering its own would take three).
#pragma once

#include <cstdint>
#include <vector>

#include "base/cpu_share.h"
#include "weft/weft.h"

namespace weft {

class Bootstrap;

struct RankPlace {
  uint64_t node;    // topo/node_id.h: which ranks share a machine
  int64_t pid;      // shared-memory segments and cross-memory attach name the process
  int64_t ringKey;  // the rank's GPU in the topology's ring order (WEFT_RANK_GPU), -1: none
  CpuShare cpu;     // the CPUs it may run on: is its node oversubscribed?
};

// Fills places[r] for every rank r (ours from this process, the rest gathered).
weftResult_t gatherRankPlaces(Bootstrap& bs, std::vector<RankPlace>* places);

// Our index among the ranks of our node, and how many ranks the node has.
void localIndexOf(const std::vector<RankPlace>& places, int rank, int* index, int* count);

// How many ranks our node has in this communicator and how many CPUs they share.
NodeCpus nodeCpusOf(const std::vector<RankPlace>& places, int rank);

}  // namespace weft
