// One-round collectives for communicators whose ranks all share one node:
// each rank publishes its (small) input on its shared-memory board and reads
// the peers' boards in place. No FIFO, no copy through a channel, one cache
// line hand-off per peer: this is the latency path (docs/performance.md has
// its figures against the FIFOs). Every call waits until all ranks
// published it, which is also what makes the boards' slots safe to reuse (see
// ShmBoard in transports/shm/shm_transport.h).
#pragma once

#include <cstdint>

#include "collectives/coll_context.h"
#include "transports/shm/node_memory.h"

namespace weft {

class LocalBoard {
 public:
  explicit LocalBoard(NodeMemory* node)
      : node_(node), rank_(node->rank()), nranks_(node->nranks()) {}
  static constexpr size_t kMaxBytes = NodeMemory::kBoardBytes;

  weftResult_t allReduce(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t allGather(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t broadcast(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t reduce(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t barrier(const FlowRunOptions& run);

  // NodeMemory::publishAndWait with the call's wait policy and header check:
  // also the barrier the single-copy collectives use.
  weftResult_t publishAndWait(const void* data, size_t bytes, const FlowRunOptions& run,
                              int* slot) {
    return node_->publishAndWait(data, bytes, run, run.check, slot);
  }
  const char* slotOf(int rank, int slot) const { return node_->slotOf(rank, slot); }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

 private:
  NodeMemory* node_;
  int rank_, nranks_;
};

}  // namespace weft
