// Single-copy collectives for communicators whose ranks all share a node:
// ranks publish their buffer addresses on the shared-memory boards and read
// each other's user buffers directly with process_vm_readv (cross-memory
// attach), so large data crosses between processes exactly once and no FIFO
// or staging copy is involved. Allreduce and reduce-scatter reduce each rank's
// block straight from every peer's input, in rank order (bitwise equal on all
// ranks); allgather, broadcast and all-to-all are one read per block.
//
// Every collective is three board barriers apart: (1) addresses published,
// (2) results ready, (3) everyone done reading, after which a rank may return
// and let its caller reuse the buffers.
#pragma once

#include <sys/types.h>

#include <vector>

#include "collectives/coll_context.h"
#include "collectives/local_board.h"

namespace weft {

class LocalCopy {
 public:
  // Checks that this process may read its peers' memory (same user, ptrace
  // policy); `usable()` is false otherwise and the FIFO algorithms are used.
  weftResult_t init(LocalBoard* board, const FlowRunOptions& run);
  bool usable() const { return usable_; }

  weftResult_t allReduce(CollContext& ctx, const CollArgs& a);
  weftResult_t reduceScatter(CollContext& ctx, const CollArgs& a);
  weftResult_t allGather(CollContext& ctx, const CollArgs& a);
  weftResult_t broadcast(CollContext& ctx, const CollArgs& a);
  weftResult_t allToAll(CollContext& ctx, const CollArgs& a);

 private:
  struct Published {
    uint64_t send;
    uint64_t recv;
  };
  // Barrier (1): publish our buffers, learn everyone's.
  weftResult_t exchange(const CollArgs& a, const FlowRunOptions& run);
  // Reads `bytes` at `remote` in rank `peer`'s memory into `local`.
  weftResult_t readPeer(int peer, void* local, uint64_t remote, size_t bytes);
  // out[0..count) = reduction, in rank order, of every rank's input at element `offset`.
  weftResult_t reduceBlock(CollContext& ctx, const CollArgs& a, size_t offset, size_t count,
                           char* out);

  LocalBoard* board_ = nullptr;
  bool usable_ = false;
  std::vector<pid_t> pids_;
  std::vector<Published> peers_;
};

}  // namespace weft
