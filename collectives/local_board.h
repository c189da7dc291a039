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
#include "transports/shm/shm_transport.h"

namespace weft {

class LocalBoard {
 public:
  LocalBoard(ShmTransport* shm, int rank, int nranks) : shm_(shm), rank_(rank), nranks_(nranks) {}
  static constexpr size_t kMaxBytes = kBoardSlotBytes;

  weftResult_t allReduce(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t allGather(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t broadcast(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t reduce(const CollArgs& a, const FlowRunOptions& run);
  weftResult_t barrier(const FlowRunOptions& run);

  // Publishes `bytes` of `data` (may be 0) as our next call and waits until every
  // rank published it too; also the barrier the single-copy collectives use.
  // Returns the call's slot index, valid until our next publishAndWait.
  weftResult_t publishAndWait(const void* data, size_t bytes, const FlowRunOptions& run, int* slot);
  const char* slotOf(int rank, int slot) const { return shm_->board(rank)->slot[slot]; }
  // Publishes `mine` and sets *all to whether every rank published true: how
  // ranks agree on a choice that each tested for itself.
  weftResult_t agree(bool mine, const FlowRunOptions& run, bool* all);
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

 private:
  ShmTransport* shm_;
  int rank_, nranks_;
  uint64_t seq_ = 0;  // calls published on this board
};

}  // namespace weft
