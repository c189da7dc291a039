// What an algorithm needs to run on one communicator: who we are, the
// channels to every peer, the communicator's preallocated staging memory, and
// how to wait. Built by the communicator; algorithms never allocate.
#pragma once

#include <cstddef>

#include "collectives/flow_engine.h"
#include "transports/channel.h"
#include "weft/weft.h"

namespace weft {

struct CollContext {
  int rank = 0;
  int nranks = 1;
  ChannelTable* channels = nullptr;
  char* staging = nullptr;  // touched once at init: no page faults in the steady state
  size_t stagingBytes = 0;
  size_t chunkBytes = 256 << 10;  // ring pipeline chunk
  size_t slotBytes = 0;           // one staging slot per stream (chunkBytes + slack)
  FlowRunOptions run;
};

struct CollArgs {
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // allreduce: elements per rank; allgather: elements each rank sends
  weftDataType_t datatype = weftFloat32;
  weftRedOp_t op = weftSum;
};

// Ring allreduce: reduce-scatter then allgather, chunked and pipelined, striped
// over the channel streams. Bandwidth-optimal: each rank sends 2(n-1)/n of the buffer.
weftResult_t ringAllReduce(CollContext& ctx, const CollArgs& args);
// One round: every rank sends its whole buffer to every peer and reduces the n
// inputs in rank order. Latency-optimal for small messages; needs
// nranks * bytes of staging.
weftResult_t oneshotAllReduce(CollContext& ctx, const CollArgs& args);
// Ring allgather, chunked and pipelined; received pieces land in recvbuff directly.
weftResult_t ringAllGather(CollContext& ctx, const CollArgs& args);
// One round: every rank sends its piece straight to every peer.
weftResult_t directAllGather(CollContext& ctx, const CollArgs& args);

// Staging bytes oneshotAllReduce needs for `bytes` per rank.
inline size_t oneshotStagingBytes(int nranks, size_t bytes) { return static_cast<size_t>(nranks) * bytes; }

}  // namespace weft
