// What every rank learns about every other one at communicator init, in one
// bootstrap allgather that the transports and the tuner share (one ring of n
// hops, where each gathering its own would take three).
#pragma once

#include <cstdint>
#include <vector>

#include "base/cpu_share.h"
#include "topo/fabric.h"
#include "weft/weft.h"

namespace weft {

class Bootstrap;

struct RankPlace {
  uint64_t node;    // topo/node_id.h: which ranks share a machine
  int64_t pid;      // shared-memory segments and cross-memory attach name the process
  int64_t ringKey;  // the rank's GPU in the topology's ring order (WEFT_RANK_GPU), -1: none
  CpuShare cpu;     // the CPUs it may run on: is its node oversubscribed?
  // Its node's leaf in WEFT_FABRIC (topo/fabric.h), or one of kFabric*, and
  // the hash of the description it read: every rank must read the same one.
  int64_t fabricLeaf;
  uint64_t fabricHash;
};

constexpr int64_t kFabricUnset = -1;      // WEFT_FABRIC not set
constexpr int64_t kFabricNotListed = -2;  // set, but this node is in no leaf
constexpr int64_t kFabricUnreadable = -3;

// Fills places[r] for every rank r (ours from this process, the rest
// gathered), and *fabric with WEFT_FABRIC's description when every rank read
// the same one. A rank that could not read it, a node it does not list, or
// ranks that disagree fail init on every rank with the same sentence.
weftResult_t gatherRankPlaces(Bootstrap& bs, std::vector<RankPlace>* places, topo::Fabric* fabric);

// Our index among the ranks of our node, and how many ranks the node has.
void localIndexOf(const std::vector<RankPlace>& places, int rank, int* index, int* count);

// How many ranks our node has in this communicator and how many CPUs they share.
NodeCpus nodeCpusOf(const std::vector<RankPlace>& places, int rank);

}  // namespace weft
