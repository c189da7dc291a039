// Recursive-doubling allreduce: log2(n) steps; at step k a rank swaps its
// whole (partly reduced) buffer with the rank whose index differs in bit k and
// reduces the two. The ring needs 2(n-1) hops and the tree 2 log2(n), so on
// slow-latency links this is the fastest form for messages too large for the
// one round (whose node link carries L(n-L) copies) and too small for the
// ring's bandwidth; a node link carries log2(n) copies instead of 2(n-1)/n.
//
// n not a power of two: with P the largest power of two below n and e = n - P,
// ranks 0..2e-1 fold in pairs first: even rank 2i sends its input to 2i+1,
// which reduces the two and takes part in the doubling; at the end 2i+1 sends
// the result back. The doubling runs over "new" indices: 2i+1 -> i for i < e,
// rank r -> r - e above.
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

#include "collectives/coll_context.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"
#include "core/error.h"

namespace weft {
namespace {

enum class Role { kPlain, kFoldIn, kFoldedOut };

// Flows: 0 the fold (kFoldIn receives from rank-1, kFoldedOut sends to
// rank+1), 1 the unfold (the other way), then per step k: 2+2k sends to the
// step's partner, 3+2k receives from it.
class RecursiveDoublingPlan : public FlowPlan {
 public:
  RecursiveDoublingPlan(CollContext& ctx, const CollArgs& a, const char* input, char* scratch,
                        int steps, size_t chunkBytes)
      : ctx_(ctx), args_(a), input_(input), scratch_(scratch), m_(steps) {
    const int n = ctx.nranks, r = ctx.rank;
    p2_ = 1 << steps;
    extra_ = n - p2_;
    esize_ = datatypeSize(a.datatype);
    if (r < 2 * extra_) {
      role_ = r % 2 == 0 ? Role::kFoldedOut : Role::kFoldIn;
      index_ = r / 2;
    } else {
      index_ = r - extra_;
    }
    C_ = chunksPerSegment(a.count, esize_, chunkBytes);
    slotStride_ = chunkBytes + 64;
    writes_ = m_ + (role_ == Role::kFoldIn ? 1 : 0);
  }

  int numFlows() const override { return 2 + 2 * m_; }
  bool isSend(int f) const override {
    if (f >= 2) return f % 2 == 0;
    return (f == 0) == (role_ == Role::kFoldedOut);
  }
  Channel* channel(int f) const override {
    int peer =
        f >= 2 ? partner((f - 2) / 2) : (role_ == Role::kFoldIn ? ctx_.rank - 1 : ctx_.rank + 1);
    return isSend(f) ? ctx_.channels->sendChannel(peer, 0) : ctx_.channels->recvChannel(peer, 0);
  }
  int64_t numItems(int f) const override {
    if (f < 2) return role_ == Role::kPlain ? 0 : C_;
    return role_ == Role::kFoldedOut ? 0 : C_;
  }

  FlowItem item(int f, int64_t c) const override {
    Span sp = chunkOf(Span{0, args_.count}, C_, c);
    const size_t off = sp.offset * esize_;
    FlowItem it;
    it.bytes = sp.count * esize_;
    char* recv = static_cast<char*>(args_.recvbuff) + off;
    if (f == 0) {  // the fold: our input to rank+1, or rank-1's into a slot
      it.data = role_ == Role::kFoldedOut ? const_cast<char*>(input_) + off : slot(0);
    } else if (f == 1) {  // the result back to rank-1, or from rank+1
      it.data = recv;
      if (role_ == Role::kFoldIn)
        dependOn(&it, 3 + 2 * (m_ - 1), c);
      else
        dependOn(&it, 0, c);  // in place, our input must have left first
    } else if (f % 2 == 0) {  // step k: our value so far
      const int k = (f - 2) / 2;
      it.data = const_cast<char*>(source(k)) + off;
      if (k > 0) dependOn(&it, 3 + 2 * (k - 1), c);
      if (k == 0 && role_ == Role::kFoldIn) dependOn(&it, 0, c);
    } else {  // step k: the partner's value
      const int k = (f - 3) / 2;
      it.data = slot(1 + k);
      if (k > 0) {
        dependOn(&it, 3 + 2 * (k - 1), c);  // src_k is reduced
        it.depFlow2 = 2 + 2 * (k - 1);      // and no longer sent from dst_k
        it.depItem2 = c;
      } else if (role_ == Role::kFoldIn) {
        dependOn(&it, 0, c);
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
      const bool lower = (index_ & (1 << k)) == 0;
      reduceElements(args_.datatype, args_.op, destination(k) + off, lower ? mine : theirs,
                     lower ? theirs : mine, sp.count);
    }
  }

 private:
  // Rank of new index i.
  int rankOf(int i) const { return i < extra_ ? 2 * i + 1 : i + extra_; }
  int partner(int k) const { return rankOf(index_ ^ (1 << k)); }
  // The j-th buffer this rank writes: recvbuff for the last, alternating back.
  char* written(int j) const {
    return (writes_ - 1 - j) % 2 == 0 ? static_cast<char*>(args_.recvbuff) : scratch_;
  }
  char* destination(int k) const { return written(k + (role_ == Role::kFoldIn ? 1 : 0)); }
  const char* source(int k) const {
    if (k > 0) return destination(k - 1);
    return role_ == Role::kFoldIn ? written(0) : input_;
  }
  char* slot(int i) const { return ctx_.staging + static_cast<size_t>(i) * slotStride_; }
  static void dependOn(FlowItem* it, int flow, int64_t item) {
    it->depFlow = flow;
    it->depItem = item;
  }

  CollContext& ctx_;
  CollArgs args_;
  const char* input_;
  char* scratch_;
  int m_, p2_ = 1, extra_ = 0, index_ = 0, writes_ = 0;
  Role role_ = Role::kPlain;
  size_t esize_ = 0, slotStride_ = 0;
  int64_t C_ = 1;
};

int log2Floor(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

}  // namespace

weftResult_t recursiveDoublingAllReduceNoAvg(CollContext& ctx, const CollArgs& args) {
  const size_t bytes = args.count * datatypeSize(args.datatype);
  if (ctx.nranks == 1 || bytes == 0) {
    if (args.recvbuff != args.sendbuff && bytes > 0)
      std::memcpy(args.recvbuff, args.sendbuff, bytes);
    return weftSuccess;
  }
  const int steps = log2Floor(ctx.nranks);
  const int extra = ctx.nranks - (1 << steps);
  const bool foldIn = ctx.rank < 2 * extra && ctx.rank % 2 == 1;
  const bool foldedOut = ctx.rank < 2 * extra && ctx.rank % 2 == 0;
  const int writes = foldedOut ? 0 : steps + (foldIn ? 1 : 0);
  // One slot per receiving flow (the fold and each step), each a chunk.
  size_t chunk = ctx.stagingBytes / static_cast<size_t>(steps + 1) / 64 * 64 - 64;
  if (ctx.chunkBytes < chunk) chunk = ctx.chunkBytes;
  const char* input = static_cast<const char*>(args.sendbuff);
  char* scratch = nullptr;
  // The first write lands in recvbuff when `writes` is odd; in place, a
  // plain rank would then overwrite the input its step-0 send still reads,
  // so that input moves to scratch first (the next write goes there too,
  // once the step-0 send is done: the plan's second dependency).
  const bool inPlaceClash = !foldIn && !foldedOut && writes % 2 == 1 && input == args.recvbuff;
  if (writes > 1 || inPlaceClash) {
    scratch = ctx.scratch != nullptr ? ctx.scratch->get(bytes) : nullptr;
    if (scratch == nullptr)
      return setError(weftSystemError, "cannot allocate %zu bytes of allreduce scratch", bytes);
  }
  if (inPlaceClash) {
    std::memcpy(scratch, input, bytes);
    input = scratch;
  }
  RecursiveDoublingPlan plan(ctx, args, input, scratch, steps, chunk);
  return runFlows(plan, ctx.run);
}

weftResult_t recursiveDoublingAllReduce(CollContext& ctx, const CollArgs& args) {
  WEFT_CHECK(recursiveDoublingAllReduceNoAvg(ctx, args));
  if (args.op == weftAvg) finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

}  // namespace weft
