// Hierarchical allreduce and allgather, for nodes holding the same number of
// ranks L (CommTopo::uniform). Allreduce: a reduce-scatter ring inside the
// node (shared memory) leaves local rank l with 1/L of the node's sum; the L
// ranks of equal local index, one per node, allreduce their pieces across the
// network (a ring, the double binary tree, recursive doubling or
// halving-doubling), L of them side by side; a ring allgather inside the node
// finishes. With the ring across, a node's link carries 2(N-1)/N of the
// buffer instead of the flat ring's 2(n-1)/n, and the network part has N-1
// steps a phase instead of n-1.
// Allgather: the same ranks allgather across nodes first (each gets the
// pieces of its counterparts), then each node allgathers those sets inside,
// every piece landing at its rank's place in recvbuff.
#include <cstring>

#include "base/error.h"
#include "collectives/comm_topo.h"
#include "collectives/hier.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

// A ring allgather over a view in which participant j holds B pieces, piece b
// belonging to global rank rankOf(j, b) and living at recv + rankOf * piece.
// Phase 1 (across nodes): j is a node, B = 1, the rank of local index ours.
// Phase 2 (inside a node): j is a local index, B = nodes, piece b is node b's.
class MappedRingAllGatherPlan : public FlowPlan {
 public:
  MappedRingAllGatherPlan(CollContext& ctx, const CommTopo& topo, bool acrossNodes, char* recv,
                          size_t piece)
      : ctx_(ctx),
        topo_(topo),
        across_(acrossNodes),
        recv_(recv),
        piece_(piece),
        n_(ctx.nranks),
        r_(ctx.rank),
        S_(ctx.channels->nstreams()) {
    B_ = across_ ? 1 : topo.nnodes;
    C_ = chunksPerSegment(piece_, 1, ctx.chunkBytes);
    total_ = static_cast<int64_t>(n_ - 1) * B_ * C_;
  }
  int numFlows() const override { return 2 * S_; }
  bool isSend(int f) const override { return f < S_; }
  Channel* channel(int f) const override {
    return f < S_ ? ctx_.channels->sendChannel((r_ + 1) % n_, f)
                  : ctx_.channels->recvChannel((r_ + n_ - 1) % n_, f - S_);
  }
  int64_t numItems(int f) const override { return itemsOnStream(total_, S_, f % S_); }
  FlowItem item(int f, int64_t k) const override {
    int64_t i = f % S_ + k * S_;
    int64_t perStep = B_ * C_;
    int64_t step = i / perStep, b = (i % perStep) / C_, c = i % C_;
    int part = isSend(f) ? mod(r_ - step, n_) : mod(r_ - step - 1, n_);
    Span sp = chunkOf(Span{0, piece_}, C_, c);
    FlowItem it;
    it.bytes = sp.count;
    it.data = recv_ + static_cast<size_t>(rankOf(part, static_cast<int>(b))) * piece_ + sp.offset;
    if (isSend(f) && step > 0) {
      int64_t dep = i - perStep;
      it.depFlow = S_ + static_cast<int>(dep % S_);
      it.depItem = dep / S_;
    }
    return it;
  }

 private:
  int rankOf(int part, int b) const {
    return across_ ? topo_.nodeRanks[part][topo_.localIndex] : topo_.nodeRanks[b][part];
  }
  CollContext& ctx_;
  const CommTopo& topo_;
  bool across_;
  char* recv_;
  size_t piece_;
  int n_, r_, S_;
  int64_t B_ = 1, C_ = 1, total_ = 0;
};

}  // namespace

bool hierUsable(const CommTopo& topo) {
  return topo.uniform && topo.nnodes > 1 && topo.localRanks > 1 && topo.inter != nullptr;
}

bool hierLeafUsable(const CommTopo& topo) { return topo.uniform && topo.leafNodes != nullptr; }

namespace {

// The piece of `a` that a ring reduce-scatter over `size` ranks leaves at
// position `pos` (it holds segment pos + 1), in place.
CollArgs ringPieceOf(const CollArgs& a, int size, int pos) {
  const Span seg = segmentOf(a.count, size, (pos + 1) % size);
  char* mine = static_cast<char*>(a.recvbuff) + seg.offset * datatypeSize(a.datatype);
  CollArgs piece = a;
  piece.sendbuff = mine;
  piece.recvbuff = mine;
  piece.count = seg.count;
  return piece;
}

// A reduce-scatter ring over `inner`, `outer` on the piece it leaves, then an
// allgather ring over `inner`.
template <typename Outer>
weftResult_t nestedAllReduce(CollContext& inner, const CollArgs& a, Outer outer) {
  WEFT_CHECK(ringAllReducePhase(inner, a, RingPhase::kReduceScatter));
  WEFT_CHECK(outer(ringPieceOf(a, inner.nranks, inner.rank)));
  return ringAllReducePhase(inner, a, RingPhase::kAllGather);
}

// Across nodes by the fabric's levels: a ring among the leaf's K nodes
// around a ring across the M leaves on 1/K of the piece; where the leaves
// sit in P pods of Q, that ring is itself a ring among the pod's Q leaves
// around a ring across the P pods on 1/Q of what it got. Each uplink
// carries what a flat ring's would (K flows of 1/K each per leaf, KQ flows of
// 1/KQ each per pod), in 2(K-1) + 2(M-1) steps, or 2(K-1) + 2(Q-1) + 2(P-1),
// instead of 2(KM-1): fewer hops to pay where there are many nodes.
weftResult_t leafRingsAllReduce(CollContext& ctx, const CommTopo& topo, const CollArgs& a) {
  CollContext leaf = CommTopo::on(ctx, topo.leafNodes.get(), topo.leafNodesPos);
  return nestedAllReduce(leaf, a, [&](const CollArgs& piece) {
    if (topo.crossPods == nullptr) {
      CollContext cross = CommTopo::on(ctx, topo.crossLeaves.get(), topo.crossLeavesPos);
      return ringAllReducePhase(cross, piece, RingPhase::kBoth);
    }
    CollContext pod = CommTopo::on(ctx, topo.podLeaves.get(), topo.podLeavesPos);
    return nestedAllReduce(pod, piece, [&](const CollArgs& part) {
      CollContext pods = CommTopo::on(ctx, topo.crossPods.get(), topo.crossPodsPos);
      return ringAllReducePhase(pods, part, RingPhase::kBoth);
    });
  });
}

}  // namespace

weftResult_t hierAllReduce(CollContext& ctx, const CommTopo& topo, const CollArgs& args,
                           Across how) {
  if (!topo.uniform || topo.inter == nullptr)
    return setError(weftInternalError, "hierarchical allreduce needs equal ranks per node");
  const int L = topo.localRanks;
  const size_t esize = datatypeSize(args.datatype);
  CollContext intra = CommTopo::on(ctx, topo.intra.get(), topo.intraPos);
  CollContext inter = CommTopo::on(ctx, topo.inter.get(), topo.interPos);
  CollArgs across = args;
  if (L > 1) {
    WEFT_CHECK(ringAllReducePhase(intra, args, RingPhase::kReduceScatter));
    Span seg = segmentOf(args.count, L, (topo.localIndex + 1) % L);
    char* mine = static_cast<char*>(args.recvbuff) + seg.offset * esize;
    across.sendbuff = mine;
    across.recvbuff = mine;
    across.count = seg.count;
  }
  if (how == Across::kLeafRings && !hierLeafUsable(topo))
    return setError(weftInternalError, "the leaf-level allreduce needs leaves of equal nodes");
  if (how == Across::kLeafRings)
    WEFT_CHECK(leafRingsAllReduce(ctx, topo, across));
  else if (how == Across::kTree)
    WEFT_CHECK(treeAllReduceNoAvg(inter, topo.interTree, across));
  else if (how == Across::kRecursiveDoubling)
    WEFT_CHECK(recursiveDoublingAllReduceNoAvg(inter, across));
  else if (how == Across::kHalvingDoubling)
    WEFT_CHECK(halvingDoublingAllReduceNoAvg(inter, across));
  else
    WEFT_CHECK(ringAllReducePhase(inter, across, RingPhase::kBoth));
  if (L > 1) WEFT_CHECK(ringAllReducePhase(intra, args, RingPhase::kAllGather));
  if (args.op == weftAvg) finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

weftResult_t hierAllGather(CollContext& ctx, const CommTopo& topo, const CollArgs& args) {
  if (!topo.uniform || topo.inter == nullptr)
    return setError(weftInternalError, "hierarchical allgather needs equal ranks per node");
  const size_t piece = args.count * datatypeSize(args.datatype);
  char* recv = static_cast<char*>(args.recvbuff);
  if (recv + topo.rank * piece != args.sendbuff)
    std::memmove(recv + topo.rank * piece, args.sendbuff, piece);
  if (topo.nnodes > 1) {
    CollContext inter = CommTopo::on(ctx, topo.inter.get(), topo.interPos);
    MappedRingAllGatherPlan plan(inter, topo, true, recv, piece);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  if (topo.localRanks > 1) {
    CollContext intra = CommTopo::on(ctx, topo.intra.get(), topo.intraPos);
    MappedRingAllGatherPlan plan(intra, topo, false, recv, piece);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  return weftSuccess;
}

}  // namespace weft
