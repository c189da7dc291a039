// Recursive halving-doubling allreduce (Rabenseifner): a reduce-scatter by
// recursive halving, then an allgather by recursive doubling, over the same
// partners in reverse. At halving step k a rank splits the segment it still
// reduces, keeps one half, sends the other to the rank whose index differs
// in bit k and reduces the partner's copy of the kept half; after log2(n)
// steps it holds 1/n of the sum, and the doubling steps hand the pieces back.
// Each rank sends 2(n-1)/n of the buffer, as in the ring, over 2 log2(n) hops
// instead of 2(n-1): the form for sizes where the ring's hops and recursive
// doubling's log2(n) copies both cost. Across nodes it runs between the ranks
// of equal local index after the node's reduce-scatter (hier.cc); with one
// rank per node, or on one node, over all ranks.
//
// n not a power of two: ranks fold in pairs first (power_of_two_fold.h, which also
// gives the partners and the flow layout).
//
// Every element is reduced by one rank (its owner after the halving), always
// as op(lower index's value, higher index's), and copied to all: every rank
// gets the same bits.
//
// Each step's flow to the partner carries the halving's chunks and then the
// doubling's (and the flow from it likewise): one flow per direction keeps
// the two phases' bytes on that channel in order. The halving never writes what it
// sends (the kept half and the sent half are disjoint), so no scratch.

#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/power_of_two_fold.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

using Role = PairFold::Role;

class HalvingDoublingPlan : public FlowPlan {
 public:
  HalvingDoublingPlan(CollContext& ctx, const CollArgs& a, const PairFold& fold, size_t chunkBytes)
      : ctx_(ctx), args_(a), fold_(fold), m_(fold.steps), chunk_(chunkBytes) {
    esize_ = datatypeSize(a.datatype);
    // The halving: before step k we reduce a segment; we keep one half of it
    // (the lower one where our bit k is 0) and give the other away.
    Span seg{0, a.count};
    for (int k = 0; k < m_; ++k) {
      const size_t lower = seg.count / 2;
      Span low{seg.offset, lower}, high{seg.offset + lower, seg.count - lower};
      const bool lowOurs = fold.lowerAt(k);
      keep_[k] = lowOurs ? low : high;
      give_[k] = lowOurs ? high : low;
      seg = keep_[k];
    }
    foldChunks_ = chunks(Span{0, a.count});
  }

  int numFlows() const override { return fold_.numFlows(); }
  bool isSend(int f) const override { return fold_.isSend(f); }
  Channel* channel(int f) const override { return fold_.channel(ctx_.channels, f); }
  int64_t numItems(int f) const override {
    if (f < 2) return fold_.role == Role::kPlain ? 0 : foldChunks_;
    if (fold_.role == Role::kFoldedOut) return 0;
    return chunks(give_[(f - 2) / 2]) + chunks(keep_[(f - 2) / 2]);
  }

  FlowItem item(int f, int64_t c) const override {
    FlowItem it;
    if (f < 2) {
      Span sp = chunkOf(Span{0, args_.count}, foldChunks_, c);
      set(&it, sp, recv());
      if (f == 0 && fold_.role == Role::kFoldedOut) set(&it, sp, input());
      if (f == 0 && fold_.role == Role::kFoldIn) it.data = slot(0);
      if (f == 1 && fold_.role == Role::kFoldIn) {
        // The whole result: the last doubling received, and sent, everything else.
        it.waitFor(PairFold::recvFlow(0), numItems(PairFold::recvFlow(0)) - 1);
        it.waitFor(PairFold::sendFlow(0), numItems(PairFold::sendFlow(0)) - 1);
      }
      if (f == 1 && fold_.role == Role::kFoldedOut) it.waitFor(0, c);  // in place: input left first
      return it;
    }
    const int k = (f - 2) / 2;
    const bool send = f % 2 == 0;
    // Sends: the halving gives give_[k], the doubling gives keep_[k] (ours by
    // then); receives: the halving brings keep_[k], the doubling give_[k].
    const Span first = send ? give_[k] : keep_[k], second = send ? keep_[k] : give_[k];
    const int64_t n1 = chunks(first);
    if (c < n1) {  // halving
      Span sp = chunkOf(first, n1, c);
      if (send) {
        set(&it, sp, source(k));
      } else {
        set(&it, sp, nullptr);
        it.data = slot(1 + k);
      }
      // What we reduce or send at step k was reduced at step k-1 (or folded).
      if (k > 0)
        it.waitFor(PairFold::recvFlow(k - 1), chunks(keep_[k - 1]) - 1);
      else if (fold_.role == Role::kFoldIn)
        it.waitFor(0, foldChunks_ - 1);
      return it;
    }
    Span sp = chunkOf(second, chunks(second), c - n1);
    set(&it, sp, recv());
    if (send) {
      // keep_[k] is whole once step k+1's doubling arrived and our own send
      // of step k+1 (which waited for everything beyond) is done; at the
      // last step, once its halving was reduced.
      if (k == m_ - 1) {
        it.waitFor(f + 1, chunks(keep_[k]) - 1);
      } else {
        it.waitFor(PairFold::recvFlow(k + 1), numItems(PairFold::recvFlow(k + 1)) - 1);
        it.waitFor(PairFold::sendFlow(k + 1), numItems(PairFold::sendFlow(k + 1)) - 1);
      }
    } else {
      it.waitFor(f - 1, chunks(give_[k]) - 1);  // our halving send left that place
    }
    return it;
  }

  void onReceived(int f, int64_t c) override {
    if (f == 0) {
      Span sp = chunkOf(Span{0, args_.count}, foldChunks_, c);
      const size_t off = sp.offset * esize_;  // rank-1 holds the lower index
      reduceElements(args_.datatype, args_.op, recv() + off, slot(0), input() + off, sp.count);
      return;
    }
    if (f < 3 || f % 2 == 0) return;
    const int k = (f - 3) / 2;
    const int64_t n1 = chunks(keep_[k]);
    if (c >= n1) return;  // a doubling chunk: it landed in place
    Span sp = chunkOf(keep_[k], n1, c);
    const size_t off = sp.offset * esize_;
    const char* mine = source(k) + off;
    const char* theirs = slot(1 + k);
    const bool lower = fold_.lowerAt(k);
    reduceElements(args_.datatype, args_.op, recv() + off, lower ? mine : theirs,
                   lower ? theirs : mine, sp.count);
  }

 private:
  int64_t chunks(Span s) const { return chunksPerSegment(s.count, esize_, chunk_); }
  char* recv() const { return static_cast<char*>(args_.recvbuff); }
  const char* input() const { return static_cast<const char*>(args_.sendbuff); }
  // Our values before step k: the input at step 0 (unless folded into recvbuff).
  const char* source(int k) const {
    return k == 0 && fold_.role == Role::kPlain ? input() : recv();
  }
  char* slot(int i) const { return pairFoldSlot(ctx_, chunk_, i); }
  void set(FlowItem* it, Span sp, const char* base) const {
    it->bytes = sp.count * esize_;
    if (base != nullptr) it->data = const_cast<char*>(base) + sp.offset * esize_;
  }

  static constexpr int kMaxSteps = 31;
  CollContext& ctx_;
  CollArgs args_;
  PairFold fold_;
  int m_;
  size_t chunk_, esize_ = 0;
  Span keep_[kMaxSteps] = {}, give_[kMaxSteps] = {};
  int64_t foldChunks_ = 1;
};

}  // namespace

weftResult_t halvingDoublingAllReduceNoAvg(CollContext& ctx, const CollArgs& args) {
  if (pairFoldTrivial(ctx, args)) return weftSuccess;
  const PairFold fold(ctx.rank, ctx.nranks);
  HalvingDoublingPlan plan(ctx, args, fold, pairFoldChunk(ctx, fold.steps));
  return runFlows(plan, ctx.run);
}

weftResult_t halvingDoublingAllReduce(CollContext& ctx, const CollArgs& args) {
  WEFT_CHECK(halvingDoublingAllReduceNoAvg(ctx, args));
  if (args.op == weftAvg) finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

}  // namespace weft
