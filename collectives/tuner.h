// The tuner: an alpha-beta cost model of each allreduce and allgather
// algorithm, fed by the communicator's topology (ranks per node, nodes) and by
// two links, inside a node and between nodes, each a latency (alpha, us) and a
// bandwidth (GB/s) measured at init (link_probe.cc) or declared with
// WEFT_TUNE_NET / WEFT_TUNE_SHM. For a call it predicts every algorithm's
// time and picks the fastest, with its chunk size and stream count. Every
// rank holds the same model (rank 0's measurement), so every rank picks the
// same algorithm for the same call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "collectives/algo_id.h"
#include "collectives/comm_topo.h"

namespace weft {

struct LinkModel {
  double alphaUs = 0;  // one-way latency of a small message, software included
  double gbps = 1;     // GB/s (1e9 bytes per second)
  double usPerByte() const { return 1e-3 / gbps; }
};

// The model covers kOneshot, kRing, kTree, kHierRing, kHierTree, kHierLeaf,
// kRd and kRhd for allreduce, and kDirect, kRing and kHierRing for allgather. kRd:
// recursive doubling, over the nodes after the node's reduce-scatter where
// hier applies, else over every rank. kRhd: recursive halving-doubling over
// every rank in the ring view's (node-grouped) order.

struct AlgoChoice {
  AlgoId algo = AlgoId::kRing;
  size_t chunkBytes = 0;
  int streams = 1;
  double predictedUs = 0;
};

class Tuner {
 public:
  // Constants of the model that the links do not give.
  static constexpr double kPerMessageUs = 3.0;  // engine + syscall cost of one chunk
  static constexpr double kReduceGBps = 3.0;    // host reduction, bytes of input per second
  static constexpr size_t kMinChunk = 16 << 10;
  static constexpr double kSharedLinkPenalty = 1.25;         // L flows on one link (tuner.cc)
  static constexpr double kSharedLinkFullBytes = 512 << 10;  // step size where it is all paid
  // The penalty for `stepBytes` per ring step (tuner.cc says why it grows).
  static double sharedLinkPenalty(double stepBytes);

  void setup(const CommTopo* topo, LinkModel intra, LinkModel inter, size_t maxChunk,
             int maxStreams, size_t oneshotStaging);
  bool ready() const { return topo_ != nullptr; }
  const LinkModel& intra() const { return intra_; }
  const LinkModel& inter() const { return inter_; }

  // Predicted time of `algo` for an allreduce of `bytes` per rank (or an
  // allgather of `bytes` per rank), infinite where it does not apply.
  double allReduceUs(AlgoId algo, size_t bytes, size_t* chunk) const;
  double allGatherUs(AlgoId algo, size_t bytes, size_t* chunk) const;
  AlgoChoice pickAllReduce(size_t bytes) const;
  // TCP streams for a ring of `segmentBytes` segments cut in `chunk`s.
  int streamsFor(size_t segmentBytes, size_t chunk) const;
  AlgoChoice pickAllGather(size_t bytes) const;
  // The model's table for sizes 8 B .. 256 MiB (one line per size), for WEFT_DEBUG TUNING.
  std::string table() const;

 private:
  // The node's ranks per link to its leaf: they all share one, or on a
  // rail-optimised fabric each NIC serves L / rails of them.
  double nodeShare() const {
    return std::max(1.0, static_cast<double>(topo_->localRanks) / topo_->fabric.nics);
  }
  size_t chunkFor(size_t segmentBytes) const;
  double insideNodeUs(size_t bytes, size_t chunk) const;
  double hierAllReduceUs(AlgoId algo, size_t bytes, size_t* chunk) const;
  double hierLeafAllReduceUs(size_t bytes, size_t* chunk) const;
  double doublingAllReduceUs(AlgoId algo, size_t bytes, size_t* chunk) const;
  const CommTopo* topo_ = nullptr;
  LinkModel intra_, inter_;
  size_t maxChunk_ = 512 << 10;
  int maxStreams_ = 1;
  size_t oneshotStaging_ = 0;
};

}  // namespace weft
