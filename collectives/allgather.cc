// Allgather: a pipelined ring for large pieces and a one-round direct
// exchange for small ones. Received pieces land in recvbuff in place; the
// ring forwards chunk c of step k only after chunk c of step k-1 arrived
// (items in RingOrder, so a piece is forwarded while it is still cached).
#include <cstring>

#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/comm_topo.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

// Positions are ctx's (a view's, where `view` is given); piece p of the
// output belongs to the rank at position p, and lands at that rank's offset.
class RingAllGatherPlan : public FlowPlan {
 public:
  RingAllGatherPlan(CollContext& ctx, const CollArgs& a, const RankView* view)
      : ctx_(ctx), view_(view), n_(ctx.nranks), r_(ctx.rank), S_(ctx.channels->nstreams()) {
    piece_ = a.count * datatypeSize(a.datatype);
    send_ = static_cast<const char*>(a.sendbuff);
    recv_ = static_cast<char*>(a.recvbuff);
    C_ = chunksPerSegment(piece_, 1, ctx.chunkBytes);
    total_ = static_cast<int64_t>(n_ - 1) * C_;
    order_ = ringOrder(n_ - 1, C_, ctx.chunkBytes);
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
    int64_t step = 0, c = 0;
    order_.at(i, &step, &c);
    Span sp = chunkOf(Span{0, piece_}, C_, c);  // byte offsets within a piece
    FlowItem it;
    it.bytes = sp.count;
    if (isSend(f)) {
      int seg = rankAt(mod(r_ - step, n_));
      it.data = step == 0 ? const_cast<char*>(send_) + sp.offset : recv_ + seg * piece_ + sp.offset;
      if (step > 0) {
        int64_t dep = order_.index(step - 1, c);
        it.depFlow = S_ + static_cast<int>(dep % S_);
        it.depItem = dep / S_;
      }
    } else {
      it.data = recv_ + rankAt(mod(r_ - step - 1, n_)) * piece_ + sp.offset;
    }
    return it;
  }

 private:
  int rankAt(int pos) const { return view_ != nullptr ? view_->member(pos) : pos; }
  CollContext& ctx_;
  const RankView* view_;
  int n_, r_, S_;
  size_t piece_ = 0;
  const char* send_;
  char* recv_;
  int64_t C_ = 1, total_ = 0;
  RingOrder order_;
};

class DirectAllGatherPlan : public FlowPlan {
 public:
  DirectAllGatherPlan(CollContext& ctx, const CollArgs& a) : ctx_(ctx) {
    piece_ = a.count * datatypeSize(a.datatype);
    send_ = static_cast<const char*>(a.sendbuff);
    recv_ = static_cast<char*>(a.recvbuff);
  }
  int numFlows() const override { return 2 * ctx_.nranks; }
  bool isSend(int f) const override { return f < ctx_.nranks; }
  Channel* channel(int f) const override {
    int peer = f % ctx_.nranks;
    return isSend(f) ? ctx_.channels->sendChannel(peer, 0) : ctx_.channels->recvChannel(peer, 0);
  }
  int64_t numItems(int f) const override { return f % ctx_.nranks == ctx_.rank ? 0 : 1; }
  FlowItem item(int f, int64_t) const override {
    FlowItem it;
    it.bytes = piece_;
    it.data = isSend(f) ? const_cast<char*>(send_) : recv_ + (f - ctx_.nranks) * piece_;
    return it;
  }

 private:
  CollContext& ctx_;
  size_t piece_ = 0;
  const char* send_;
  char* recv_;
};

void copyOwnPiece(int rank, const CollArgs& a) {
  size_t piece = a.count * datatypeSize(a.datatype);
  char* dst = static_cast<char*>(a.recvbuff) + rank * piece;
  if (dst != a.sendbuff) std::memmove(dst, a.sendbuff, piece);
}

}  // namespace

weftResult_t ringAllGather(CollContext& ctx, const CollArgs& args) {
  return ringAllGatherOn(ctx, nullptr, args);
}

weftResult_t ringAllGatherOn(CollContext& ctx, const RankView* view, const CollArgs& args) {
  if (ctx.nranks > 1) {
    RingAllGatherPlan plan(ctx, args, view);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  copyOwnPiece(view != nullptr ? view->member(ctx.rank) : ctx.rank, args);
  return weftSuccess;
}

weftResult_t directAllGather(CollContext& ctx, const CollArgs& args) {
  if (ctx.nranks > 1) {
    DirectAllGatherPlan plan(ctx, args);
    WideChannels wide(ctx);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  copyOwnPiece(ctx.rank, args);
  return weftSuccess;
}

}  // namespace weft
