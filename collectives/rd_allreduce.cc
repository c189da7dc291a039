// Recursive-doubling allreduce: log2(n) steps; at step k a rank swaps its
// whole (partly reduced) buffer with the rank whose index differs in bit k and
// reduces the two. The ring needs 2(n-1) hops and the tree 2 log2(n), so on
// slow-latency links this is the fastest form for messages too large for the
// one round (whose node link carries L(n-L) copies) and too small for the
// ring's bandwidth; a node link carries log2(n) copies instead of 2(n-1)/n.
//
// n not a power of two: ranks fold in pairs first (power_of_two_fold.h), which also
// gives the flow layout and the partners.
//
// Every rank gets the same bits: in each pair both sides compute
// op(value of the lower new index, value of the higher), so after step k the
// 2^(k+1) ranks of a block hold identical values.
//
// Buffers: step k sends src_k and reduces src_k with the partner's chunk into
// dst_k = src_(k+1). Sends of step k may still read src_k while the partner's
// step-k chunk arrives, so dst_k must differ from src_k, and a receive of step
// k (which writes dst_k = src_(k-1)) also waits for our step-(k-1) send of
// that chunk to be done: dst alternates between recvbuff and scratch, ending
// in recvbuff. A receive never waits for a send of its own step to the same
// peer: over TCP (full socket buffers) or verbs' zero-copy rendezvous both
// sides would wait for each other.
#include <cstring>

#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/power_of_two_fold.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

using Role = PairFold::Role;

class RecursiveDoublingPlan : public FlowPlan {
 public:
  RecursiveDoublingPlan(CollContext& ctx, const CollArgs& a, const PairFold& fold,
                        const char* input, char* scratch, size_t chunkBytes)
      : ctx_(ctx), args_(a), fold_(fold), input_(input), scratch_(scratch), chunk_(chunkBytes) {
    esize_ = datatypeSize(a.datatype);
    C_ = chunksPerSegment(a.count, esize_, chunkBytes);
    writes_ = fold.steps + (fold.role == Role::kFoldIn ? 1 : 0);
  }

  int numFlows() const override { return fold_.numFlows(); }
  bool isSend(int f) const override { return fold_.isSend(f); }
  Channel* channel(int f) const override { return fold_.channel(ctx_.channels, f); }
  int64_t numItems(int f) const override {
    if (f < 2) return fold_.role == Role::kPlain ? 0 : C_;
    return fold_.takesPart() ? C_ : 0;
  }

  FlowItem item(int f, int64_t c) const override {
    Span sp = chunkOf(Span{0, args_.count}, C_, c);
    const size_t off = sp.offset * esize_;
    const bool foldIn = fold_.role == Role::kFoldIn;
    FlowItem it;
    it.bytes = sp.count * esize_;
    char* recv = static_cast<char*>(args_.recvbuff) + off;
    if (f == 0) {  // the fold: our input to rank+1, or rank-1's into a slot
      it.data = foldIn ? slot(0) : const_cast<char*>(input_) + off;
    } else if (f == 1) {  // the result back to rank-1, or from rank+1
      it.data = recv;
      if (foldIn)
        it.waitFor(PairFold::recvFlow(fold_.steps - 1), c);
      else
        it.waitFor(0, c);     // in place, our input must have left first
    } else if (f % 2 == 0) {  // step k: our value so far
      const int k = (f - 2) / 2;
      it.data = const_cast<char*>(source(k)) + off;
      if (k > 0) it.waitFor(PairFold::recvFlow(k - 1), c);
      if (k == 0 && foldIn) it.waitFor(0, c);
    } else {  // step k: the partner's value
      const int k = (f - 3) / 2;
      it.data = slot(1 + k);
      if (k > 0) {
        it.waitFor(PairFold::recvFlow(k - 1), c);  // src_k is reduced
        it.waitFor(PairFold::sendFlow(k - 1), c);  // and no longer sent from dst_k
      } else if (foldIn) {
        it.waitFor(0, c);
      }
    }
    return it;
  }

  void onReceived(int f, int64_t c) override {
    Span sp = chunkOf(Span{0, args_.count}, C_, c);
    const size_t off = sp.offset * esize_;
    if (f == 0) {  // rank-1 holds the lower index
      reduceElements(args_.datatype, args_.op, written(0) + off, slot(0), input_ + off, sp.count);
    } else if (f >= 3) {
      const int k = (f - 3) / 2;
      const char* mine = source(k) + off;
      const char* theirs = slot(1 + k);
      const bool lower = fold_.lowerAt(k);
      reduceElements(args_.datatype, args_.op, destination(k) + off, lower ? mine : theirs,
                     lower ? theirs : mine, sp.count);
    }
  }

 private:
  // The j-th buffer this rank writes: recvbuff for the last, alternating back.
  char* written(int j) const {
    return (writes_ - 1 - j) % 2 == 0 ? static_cast<char*>(args_.recvbuff) : scratch_;
  }
  char* destination(int k) const { return written(k + (fold_.role == Role::kFoldIn ? 1 : 0)); }
  const char* source(int k) const {
    if (k > 0) return destination(k - 1);
    return fold_.role == Role::kFoldIn ? written(0) : input_;
  }
  char* slot(int i) const { return pairFoldSlot(ctx_, chunk_, i); }

  CollContext& ctx_;
  CollArgs args_;
  PairFold fold_;
  const char* input_;
  char* scratch_;
  size_t chunk_, esize_ = 0;
  int writes_ = 0;
  int64_t C_ = 1;
};

}  // namespace

weftResult_t recursiveDoublingAllReduceNoAvg(CollContext& ctx, const CollArgs& args) {
  if (pairFoldTrivial(ctx, args)) return weftSuccess;
  const size_t bytes = args.count * datatypeSize(args.datatype);
  const PairFold fold(ctx.rank, ctx.nranks);
  const bool plain = fold.role == Role::kPlain;
  const int writes = !fold.takesPart() ? 0 : fold.steps + (plain ? 0 : 1);
  const char* input = static_cast<const char*>(args.sendbuff);
  char* scratch = nullptr;
  // The first write lands in recvbuff when `writes` is odd; in place, a
  // plain rank would then overwrite the input its step-0 send still reads,
  // so that input moves to scratch first (the next write goes there too,
  // once the step-0 send is done: the plan's second dependency).
  const bool inPlaceClash = plain && writes % 2 == 1 && input == args.recvbuff;
  if (writes > 1 || inPlaceClash) {
    scratch = ctx.scratch != nullptr ? ctx.scratch->get(bytes) : nullptr;
    if (scratch == nullptr)
      return setError(weftSystemError, "cannot allocate %zu bytes of allreduce scratch", bytes);
  }
  if (inPlaceClash) {
    // A recorded run (the simulator's) moves no bytes, this copy included.
    if (ctx.run.recorder == nullptr) std::memcpy(scratch, input, bytes);
    input = scratch;
  }
  RecursiveDoublingPlan plan(ctx, args, fold, input, scratch, pairFoldChunk(ctx, fold.steps));
  return runFlows(plan, ctx.run);
}

weftResult_t recursiveDoublingAllReduce(CollContext& ctx, const CollArgs& args) {
  WEFT_CHECK(recursiveDoublingAllReduceNoAvg(ctx, args));
  if (args.op == weftAvg) finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

}  // namespace weft
