// What an algorithm needs to run on one communicator: who we are, the
// channels to every peer, the communicator's preallocated staging memory, and
// how to wait. Built by the communicator; algorithms never allocate.
#pragma once

#include <cstddef>

#include "collectives/flow_engine.h"
#include "collectives/tree_schedule.h"
#include "transports/channel.h"
#include "weft/weft.h"

namespace weft {

// Grow-only scratch memory owned by a communicator: the algorithms that must
// keep partial results (reduce-scatter, reduce) use it. It grows to the
// largest size asked for and is touched once when it grows, so a steady
// stream of calls neither allocates nor page-faults.
class Scratch {
 public:
  ~Scratch();
  char* get(size_t bytes);  // nullptr when the memory cannot be had

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
};

struct P2PWorkspace;

struct CollContext {
  int rank = 0;
  int nranks = 1;
  ChannelTable* channels = nullptr;
  char* staging = nullptr;  // touched once at init: no page faults in the steady state
  size_t stagingBytes = 0;
  size_t chunkBytes = 512 << 10;  // ring pipeline chunk
  size_t slotBytes = 0;           // one staging slot per stream (chunkBytes + slack)
  // Largest call whose provably stable sends are offered for sending by
  // reference (FlowItem::stable; WEFT_SOCKET_SPLICE_MAX, 0: never).
  size_t stableCallMax = 0;
  Scratch* scratch = nullptr;
  P2PWorkspace* p2p = nullptr;  // send/recv and all-to-all planning (p2p_workspace.h)
  FlowRunOptions run;
};

// Marks ctx's channel table wide (ChannelTable::setWide) for its lifetime: a
// plan that moves data with two or more peers at once holds one while it
// runs. With one peer, lanes are what moves bytes side by side, so they stay.
class WideChannels {
 public:
  explicit WideChannels(const CollContext& ctx) : table_(ctx.nranks > 2 ? ctx.channels : nullptr) {
    if (table_ != nullptr) table_->setWide(true);
  }
  ~WideChannels() {
    if (table_ != nullptr) table_->setWide(false);
  }
  WideChannels(const WideChannels&) = delete;
  WideChannels& operator=(const WideChannels&) = delete;

 private:
  ChannelTable* table_;
};

struct CollArgs {
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // allreduce: elements per rank; allgather: elements each rank sends
  weftDataType_t datatype = weftFloat32;
  weftRedOp_t op = weftSum;
  int root = 0;  // broadcast, reduce
};

// One send or receive of a (possibly fused) group of point-to-point calls.
struct P2POp {
  bool send = false;
  int peer = -1;
  char* buf = nullptr;
  size_t bytes = 0;
  // weftSend/weftRecv: what the size header carries and is checked against
  // (collectives/p2p_header.h); all-to-all's blocks carry none.
  uint64_t count = 0;
  int datatype = 0;
};

// Ring allreduce: reduce-scatter then allgather, chunked and pipelined, striped
// over the channel streams. Bandwidth-optimal: each rank sends 2(n-1)/n of the buffer.
weftResult_t ringAllReduce(CollContext& ctx, const CollArgs& args);
// The ring allreduce's halves apart: after kReduceScatter rank r holds segment
// (r+1) % n of the sum in recvbuff (segmentOf's cut); kAllGather sends those
// segments around. Neither finishes weftAvg (the caller divides once).
enum class RingPhase { kBoth, kReduceScatter, kAllGather };
weftResult_t ringAllReducePhase(CollContext& ctx, const CollArgs& args, RingPhase phase);
// Double binary tree allreduce (tree_allreduce.cc); `links` are this rank's
// links in both trees, positions being ctx ranks. NoAvg leaves weftAvg a sum.
weftResult_t treeAllReduce(CollContext& ctx, const TreeLinks links[2], const CollArgs& args);
weftResult_t treeAllReduceNoAvg(CollContext& ctx, const TreeLinks links[2], const CollArgs& args);
// Recursive doubling (rd_allreduce.cc): log2(n) steps, each swapping the whole
// buffer with one peer; n need not be a power of two. Uses scratch. NoAvg
// leaves weftAvg a sum.
weftResult_t recursiveDoublingAllReduce(CollContext& ctx, const CollArgs& args);
weftResult_t recursiveDoublingAllReduceNoAvg(CollContext& ctx, const CollArgs& args);
// Recursive halving-doubling (rhd_allreduce.cc): a halving reduce-scatter and
// a doubling allgather, 2 log2(n) steps moving 2(n-1)/n of the buffer.
weftResult_t halvingDoublingAllReduce(CollContext& ctx, const CollArgs& args);
weftResult_t halvingDoublingAllReduceNoAvg(CollContext& ctx, const CollArgs& args);
// One round: every rank sends its whole buffer to every peer and reduces the n
// inputs in rank order. Latency-optimal for small messages; needs
// nranks * bytes of staging.
weftResult_t oneshotAllReduce(CollContext& ctx, const CollArgs& args);
// Once every peer's input sits in ctx.staging (peer p's at p * bytes):
// reduces them with this rank's own input, in rank order, into recvbuff and
// finishes an average. The last step of oneshotAllReduce and of the star reduce.
void reduceStagedInRankOrder(CollContext& ctx, const CollArgs& args);
// Ring allgather, chunked and pipelined; received pieces land in recvbuff directly.
weftResult_t ringAllGather(CollContext& ctx, const CollArgs& args);
// The same over a view (ctx on it, comm_topo.h): the ring follows the view's
// order (nodes together, leaf by leaf), pieces land at their ranks' offsets.
class RankView;
weftResult_t ringAllGatherOn(CollContext& ctx, const RankView* view, const CollArgs& args);
// One round: every rank sends its piece straight to every peer.
weftResult_t directAllGather(CollContext& ctx, const CollArgs& args);

// Ring reduce-scatter (count = elements each rank receives): the reduce-scatter
// half of the ring allreduce, with partial sums kept in scratch.
weftResult_t ringReduceScatter(CollContext& ctx, const CollArgs& args);
// Broadcast as a pipelined chain root -> root+1 -> ... (bandwidth), or straight
// from the root to everyone (latency).
weftResult_t chainBroadcast(CollContext& ctx, const CollArgs& args);
weftResult_t directBroadcast(CollContext& ctx, const CollArgs& args);
// Broadcast down a binomial tree from the root: ceil(log2 n) rounds, one send
// per rank and round (small calls on many ranks).
weftResult_t binomialBroadcast(CollContext& ctx, const CollArgs& args);
// Reduce as a pipelined chain ending at the root, or every rank sending to the
// root, which reduces in rank order.
weftResult_t chainReduce(CollContext& ctx, const CollArgs& args);
weftResult_t directReduce(CollContext& ctx, const CollArgs& args);
// Every rank exchanges one block with every other rank, all at once.
weftResult_t directAllToAll(CollContext& ctx, const CollArgs& args);
// Runs sends and receives together; those to one peer travel in the given order.
// With checkSizes each send carries a size header that its receive checks.
weftResult_t runP2P(CollContext& ctx, const P2POp* ops, size_t nops, bool checkSizes = false);

// Staging bytes oneshotAllReduce needs for `bytes` per rank.
inline size_t oneshotStagingBytes(int nranks, size_t bytes) {
  return static_cast<size_t>(nranks) * bytes;
}

}  // namespace weft
