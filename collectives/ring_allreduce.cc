// Ring allreduce (see coll_context.h). Steps 0..n-2 are the reduce-scatter:
// rank r sends segment r-k and receives segment r-k-1, which it reduces with
// its own input into recvbuff; after step n-2 it owns segment r+1 fully
// reduced. Steps n-1..2n-3 are the allgather of the owned segments. A chunk is
// forwarded only after the same chunk of the previous step arrived (and was
// reduced), which is what pipelines the ring; items go in RingOrder, so a
// reduced chunk is forwarded while it is still cached. The hierarchical allreduce runs
// the two halves apart (RingPhase), with other work in between.
#include <cstring>

#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

class RingAllReducePlan : public FlowPlan {
 public:
  RingAllReducePlan(CollContext& ctx, const CollArgs& a, RingPhase phase)
      : ctx_(ctx), args_(a), n_(ctx.nranks), r_(ctx.rank), S_(ctx.channels->nstreams()) {
    esize_ = datatypeSize(a.datatype);
    maxSeg_ = segmentOf(a.count, n_, 0).count;
    C_ = chunksPerSegment(maxSeg_, esize_, ctx.chunkBytes);
    const bool both = phase == RingPhase::kBoth;
    offerStable_ = both && a.count * esize_ <= ctx.stableCallMax;
    int steps = both ? 2 * (n_ - 1) : n_ - 1;
    firstStep_ = phase == RingPhase::kAllGather ? n_ - 1 : 0;
    order_ = ringOrder(steps, C_, ctx.chunkBytes);
    total_ = static_cast<int64_t>(steps) * C_;
    next_ = (r_ + 1) % n_;
    prev_ = (r_ + n_ - 1) % n_;
    direct_ = a.sendbuff != a.recvbuff;
  }
  // Flows 0..S-1 send to the next rank, S..2S-1 receive from the previous one.
  int numFlows() const override { return 2 * S_; }
  bool isSend(int f) const override { return f < S_; }
  Channel* channel(int f) const override {
    return f < S_ ? ctx_.channels->sendChannel(next_, f)
                  : ctx_.channels->recvChannel(prev_, f - S_);
  }
  int64_t numItems(int f) const override { return itemsOnStream(total_, S_, f % S_); }

  FlowItem item(int f, int64_t k) const override {
    int stream = f % S_;
    int64_t i = stream + k * S_;
    int64_t local = 0, c = 0;
    order_.at(i, &local, &c);
    int64_t step = firstStep_ + local;
    FlowItem it;
    if (isSend(f)) {
      int seg = step < n_ - 1 ? mod(r_ - step, n_) : mod(r_ + 1 - (step - (n_ - 1)), n_);
      Span sp = chunkOf(segmentOf(args_.count, n_, seg), C_, c);
      const char* base = step == 0 ? static_cast<const char*>(args_.sendbuff)
                                   : static_cast<const char*>(args_.recvbuff);
      it.data = const_cast<char*>(base) + sp.offset * esize_;
      it.bytes = sp.count * esize_;
      // A reduce-scatter send of chunk c comes back to this rank, reduced by
      // the ranks downstream, in the allgather half of this same call: every
      // receive of chunk c there follows the next rank's read of our send,
      // and nothing writes these bytes before that receive (in place, only the
      // allgather writes the segments this rank sent). So the call cannot end,
      // nor the bytes change, before the next rank has read them. Allgather
      // sends have no such return and stay copied.
      it.stable = offerStable_ && step < n_ - 1;
      if (local > 0) {  // not the phase's first step: wait for this chunk's last arrival
        int64_t dep = order_.index(local - 1, c);
        it.depFlow = S_ + static_cast<int>(dep % S_);
        it.depItem = dep / S_;
      }
    } else {
      int seg = step < n_ - 1 ? mod(r_ - step - 1, n_) : mod(r_ - (step - (n_ - 1)), n_);
      Span sp = chunkOf(segmentOf(args_.count, n_, seg), C_, c);
      it.bytes = sp.count * esize_;
      it.data = step < n_ - 1 && !direct_ ? ctx_.staging + stream * ctx_.slotBytes
                                          : static_cast<char*>(args_.recvbuff) + sp.offset * esize_;
    }
    return it;
  }

  void onReceived(int f, int64_t k) override {
    int stream = f % S_;
    int64_t i = stream + k * S_;
    int64_t local = 0, c = 0;
    order_.at(i, &local, &c);
    int64_t step = firstStep_ + local;
    if (step >= n_ - 1) return;  // allgather: landed in place
    Span sp = chunkOf(segmentOf(args_.count, n_, mod(r_ - step - 1, n_)), C_, c);
    size_t off = sp.offset * esize_;
    // Partial sum from upstream, combined with our own input, into recvbuff.
    reduceElements(
        args_.datatype, args_.op, static_cast<char*>(args_.recvbuff) + off,
        direct_ ? static_cast<char*>(args_.recvbuff) + off : ctx_.staging + stream * ctx_.slotBytes,
        static_cast<const char*>(args_.sendbuff) + off, sp.count);
  }

 private:
  CollContext& ctx_;
  CollArgs args_;
  int n_, r_, S_;
  int next_, prev_;
  size_t esize_ = 0, maxSeg_ = 0;
  int64_t C_ = 1, total_ = 0;
  int64_t firstStep_ = 0;     // the phase's first step (n - 1 for the allgather half)
  bool offerStable_ = false;  // both halves in this call, no larger than ctx.stableCallMax
  // Out of place, the reduce-scatter's partial sums land in recvbuff, where
  // their reduce writes, not in staging: the reduce then reads and writes
  // lines the receive just brought into the cache, where from staging its
  // stores first had to read the output's lines from memory (faster out of
  // place at 1-16 MiB: docs/performance-history.md, "partial sums land in
  // the output"; in place is untouched, since there recvbuff still holds this
  // rank's own input).
  // Nothing else touches a segment's bytes between their receive and reduce.
  bool direct_ = false;
  RingOrder order_;
};

}  // namespace

weftResult_t ringAllReducePhase(CollContext& ctx, const CollArgs& args, RingPhase phase) {
  size_t bytes = args.count * datatypeSize(args.datatype);
  if (ctx.nranks == 1) {
    if (args.recvbuff != args.sendbuff) std::memcpy(args.recvbuff, args.sendbuff, bytes);
    return weftSuccess;
  }
  RingAllReducePlan plan(ctx, args, phase);
  return runFlows(plan, ctx.run);
}

weftResult_t ringAllReduce(CollContext& ctx, const CollArgs& args) {
  WEFT_CHECK(ringAllReducePhase(ctx, args, RingPhase::kBoth));
  if (args.op == weftAvg) finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

}  // namespace weft
