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
//
// Ready marks: a rank sends a phase's data to its step-k partner one chunk
// ahead at most until the partner says it is ready for it (an 8-byte mark the
// partner sends once it finished the step before). Without them a rank that
// ran ahead fed a partner still in the step before, whose link then carried
// both steps' bytes at once: the late step's, on the critical path, got half
// of it. Over TCP, whose kernel buffers take megabytes nobody asked for yet,
// 16 MiB on 8 hosts took 1.3-1.6x the ring's time so (docs/scale.md). A
// flow's layout, for its first span F and second span S (send: give_k then
// keep_k; receive: keep_k then give_k):
//   [mark if S has 2+ chunks] [F's chunks] [mark if F has 2+ chunks] [S's chunks]
// which both partners derive alike: one's give_k is the other's keep_k. A
// mark leaves as soon as its sender could take the partner's chunks of that
// phase, ahead of the sender's own; the partner's second chunk waits for it.
// In lockstep a mark costs one small message per phase and step; one chunk
// in flight before it keeps the link busy meanwhile.

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
    return layout(f).total();
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
    const Layout l = layout(f);
    const int64_t peerMarkHalving = 0;  // on our receiving flow of step k
    const int64_t peerMarkDoubling = layout(PairFold::recvFlow(k)).markDoubling();
    if (c == 0 && l.halvingMark) {  // a mark: 8 bytes, read into the step's slot
      if (send) {
        it.data = const_cast<char*>(kMark);
        waitForHalvingInput(k, &it);
      } else {
        it.data = slot(1 + k);
      }
      it.bytes = sizeof(kMark);
      return it;
    }
    if (c == l.markDoubling() && l.doublingMark) {
      if (send) {
        it.data = const_cast<char*>(kMark);
        waitForDoublingInput(k, f, &it);
      } else {
        it.data = slot(1 + k);
      }
      it.bytes = sizeof(kMark);
      return it;
    }
    // Sends: the halving gives give_[k], the doubling gives keep_[k] (ours by
    // then); receives: the halving brings keep_[k], the doubling give_[k].
    const Span first = send ? give_[k] : keep_[k], second = send ? keep_[k] : give_[k];
    if (c < l.firstEnd()) {  // halving
      const int64_t i = c - l.halvingMark;
      Span sp = chunkOf(first, l.n1, i);
      if (send) {
        set(&it, sp, source(k));
      } else {
        set(&it, sp, nullptr);
        it.data = slot(1 + k);
      }
      if (send && i == 1) {
        // Past one chunk only once the partner is ready (the first chunk,
        // before us in this flow, waited for our own input).
        it.waitFor(PairFold::recvFlow(k), peerMarkHalving);
      } else {
        waitForHalvingInput(k, &it);
      }
      return it;
    }
    const int64_t i = c - l.markDoubling() - l.doublingMark;
    Span sp = chunkOf(second, l.n2, i);
    set(&it, sp, recv());
    if (send) {
      if (i == 1)
        it.waitFor(PairFold::recvFlow(k), peerMarkDoubling);  // as in the halving
      else
        waitForDoublingInput(k, f, &it);
    } else {
      // Our halving send left that place.
      it.waitFor(f - 1, layout(f - 1).firstEnd() - 1);
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
    const Layout l = layout(f);
    // A mark, or a doubling chunk (it landed in place): nothing to do.
    if (c < l.halvingMark || c >= l.firstEnd()) return;
    Span sp = chunkOf(keep_[k], l.n1, c - l.halvingMark);
    const size_t off = sp.offset * esize_;
    const char* mine = source(k) + off;
    const char* theirs = slot(1 + k);
    const bool lower = fold_.lowerAt(k);
    reduceElements(args_.datatype, args_.op, recv() + off, lower ? mine : theirs,
                   lower ? theirs : mine, sp.count);
  }

 private:
  // A step flow's items (see the layout above): [mark] first span [mark] second span.
  struct Layout {
    int64_t halvingMark = 0, n1 = 0, doublingMark = 0, n2 = 0;
    int64_t firstEnd() const { return halvingMark + n1; }  // one past the halving's last
    int64_t markDoubling() const { return firstEnd(); }
    int64_t total() const { return halvingMark + n1 + doublingMark + n2; }
  };
  Layout layout(int f) const {
    const int k = (f - 2) / 2;
    const bool send = f % 2 == 0;
    Layout l;
    l.n1 = chunks(send ? give_[k] : keep_[k]);
    l.n2 = chunks(send ? keep_[k] : give_[k]);
    l.halvingMark = l.n2 >= 2 ? 1 : 0;
    l.doublingMark = l.n1 >= 2 ? 1 : 0;
    return l;
  }
  // What we reduce or send at step k was reduced at step k-1 (or folded).
  void waitForHalvingInput(int k, FlowItem* it) const {
    if (k > 0)
      it->waitFor(PairFold::recvFlow(k - 1), layout(PairFold::recvFlow(k - 1)).firstEnd() - 1);
    else if (fold_.role == Role::kFoldIn)
      it->waitFor(0, foldChunks_ - 1);
  }
  // keep_[k] is whole once step k+1's doubling arrived and our own send of
  // step k+1 (which waited for everything beyond) is done; at the last step,
  // once its halving was reduced. f: our sending flow of step k.
  void waitForDoublingInput(int k, int f, FlowItem* it) const {
    if (k == m_ - 1) {
      it->waitFor(f + 1, layout(f + 1).firstEnd() - 1);
    } else {
      it->waitFor(PairFold::recvFlow(k + 1), numItems(PairFold::recvFlow(k + 1)) - 1);
      it->waitFor(PairFold::sendFlow(k + 1), numItems(PairFold::sendFlow(k + 1)) - 1);
    }
  }
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
  // A ready mark's bytes: their value carries nothing.
  static constexpr char kMark[8] = {'r', 'e', 'a', 'd', 'y', 0, 0, 0};
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
