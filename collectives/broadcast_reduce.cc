// Rooted collectives: broadcast and reduce. The chain forms pipeline chunks
// along the ring order starting (broadcast) or ending (reduce) at the root, so
// every link carries the buffer once (bandwidth-optimal for large buffers);
// the direct forms finish in one round (latency-optimal for small ones, until
// the root's n - 1 sends dominate); the binomial broadcast takes ceil(log2 n)
// rounds of at most one send per rank each.
// Direct reduce combines the inputs in rank order, like oneshot allreduce.
#include <cstring>
#include <vector>

#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

// Flows 0..S-1 send to the next rank, S..2S-1 receive from the previous one;
// item i of the buffer travels on stream i % S and is forwarded after it arrived.
class ChainPlan : public FlowPlan {
 public:
  ChainPlan(CollContext& ctx, const CollArgs& a, bool reduce, char* scratch)
      : ctx_(ctx),
        args_(a),
        reduce_(reduce),
        scratch_(scratch),
        n_(ctx.nranks),
        S_(ctx.channels->nstreams()) {
    esize_ = datatypeSize(a.datatype);
    C_ = chunksPerSegment(a.count, esize_, ctx.chunkBytes);
    // Broadcast: the root is position 0. Reduce: the root is the last position.
    pos_ = reduce ? mod(ctx.rank - a.root - 1, n_) : mod(ctx.rank - a.root, n_);
  }
  int numFlows() const override { return 2 * S_; }
  bool isSend(int f) const override { return f < S_; }
  Channel* channel(int f) const override {
    return f < S_ ? ctx_.channels->sendChannel((ctx_.rank + 1) % n_, f)
                  : ctx_.channels->recvChannel((ctx_.rank + n_ - 1) % n_, f - S_);
  }
  int64_t numItems(int f) const override {
    if (isSend(f) ? pos_ == n_ - 1 : pos_ == 0) return 0;
    return itemsOnStream(C_, S_, f % S_);
  }
  FlowItem item(int f, int64_t k) const override {
    int64_t i = f % S_ + k * S_;
    Span sp = chunkOf(Span{0, args_.count}, C_, i);
    FlowItem it;
    it.bytes = sp.count * esize_;
    size_t off = sp.offset * esize_;
    if (isSend(f)) {
      const char* src;
      if (pos_ == 0)
        src = static_cast<const char*>(args_.sendbuff);  // origin of the data
      else
        src = reduce_ ? scratch_ : static_cast<const char*>(args_.recvbuff);
      it.data = const_cast<char*>(src) + off;
      if (pos_ > 0) {
        it.depFlow = S_ + static_cast<int>(i % S_);
        it.depItem = i / S_;
      }
    } else {
      it.data = reduce_ ? ctx_.staging + (f - S_) * ctx_.slotBytes
                        : static_cast<char*>(args_.recvbuff) + off;
    }
    return it;
  }
  void onReceived(int f, int64_t k) override {
    if (!reduce_) return;
    int64_t i = f % S_ + k * S_;
    Span sp = chunkOf(Span{0, args_.count}, C_, i);
    size_t off = sp.offset * esize_;
    char* out = (pos_ == n_ - 1 ? static_cast<char*>(args_.recvbuff) : scratch_) + off;
    reduceElements(args_.datatype, args_.op, out, ctx_.staging + (f - S_) * ctx_.slotBytes,
                   static_cast<const char*>(args_.sendbuff) + off, sp.count);
  }

 private:
  CollContext& ctx_;
  CollArgs args_;
  bool reduce_;
  char* scratch_;
  int n_, S_;
  int pos_ = 0;
  size_t esize_ = 0;
  int64_t C_ = 1;
};

// Root <-> everyone in one round: flows 0..n-1 send to rank f, n..2n-1 receive from f-n.
class StarPlan : public FlowPlan {
 public:
  StarPlan(CollContext& ctx, const CollArgs& a, bool reduce)
      : ctx_(ctx), args_(a), reduce_(reduce) {
    bytes_ = a.count * datatypeSize(a.datatype);
  }
  int numFlows() const override { return 2 * ctx_.nranks; }
  bool isSend(int f) const override { return f < ctx_.nranks; }
  Channel* channel(int f) const override {
    int p = f % ctx_.nranks;
    return isSend(f) ? ctx_.channels->sendChannel(p, 0) : ctx_.channels->recvChannel(p, 0);
  }
  int64_t numItems(int f) const override {
    int p = f % ctx_.nranks;
    bool root = ctx_.rank == args_.root;
    if (p == ctx_.rank) return 0;
    // Broadcast: root sends to all, others receive from root. Reduce: the reverse.
    if (isSend(f)) return (reduce_ ? p == args_.root : root) ? 1 : 0;
    return (reduce_ ? root : p == args_.root) ? 1 : 0;
  }
  FlowItem item(int f, int64_t) const override {
    FlowItem it;
    it.bytes = bytes_;
    if (isSend(f))
      it.data = const_cast<char*>(static_cast<const char*>(args_.sendbuff));
    else
      it.data =
          reduce_ ? ctx_.staging + (f - ctx_.nranks) * bytes_ : static_cast<char*>(args_.recvbuff);
    return it;
  }

 private:
  CollContext& ctx_;
  CollArgs args_;
  bool reduce_;
  size_t bytes_;
};

// Binomial tree over positions v = rank - root (mod n): v receives the whole
// buffer from v minus its lowest set bit, then sends it to v + 2^k for every
// 2^k below that bit (the root: below n). Flow 0 receives, flows 1.. send.
class BinomialPlan : public FlowPlan {
 public:
  BinomialPlan(CollContext& ctx, const CollArgs& a) : ctx_(ctx), args_(a) {
    const int n = ctx.nranks;
    bytes_ = a.count * datatypeSize(a.datatype);
    v_ = mod(ctx.rank - a.root, n);
    const int low = v_ == 0 ? n : (v_ & -v_);
    if (v_ != 0) parent_ = (v_ - low + a.root) % n;
    // Largest subtree first: its leaves are the furthest off.
    for (int step = 1; step < low; step <<= 1)
      if (v_ + step < n) children_.insert(children_.begin(), (v_ + step + a.root) % n);
  }
  int numFlows() const override { return 1 + static_cast<int>(children_.size()); }
  bool isSend(int f) const override { return f > 0; }
  Channel* channel(int f) const override {
    return f == 0 ? ctx_.channels->recvChannel(parent_, 0)
                  : ctx_.channels->sendChannel(children_[f - 1], 0);
  }
  int64_t numItems(int f) const override { return f == 0 && parent_ < 0 ? 0 : 1; }
  FlowItem item(int f, int64_t) const override {
    FlowItem it;
    it.bytes = bytes_;
    if (f == 0) {
      it.data = static_cast<char*>(args_.recvbuff);
    } else if (parent_ < 0) {
      it.data = const_cast<char*>(static_cast<const char*>(args_.sendbuff));
    } else {
      it.data = static_cast<char*>(args_.recvbuff);
      it.waitFor(0, 0);  // forwarded once it arrived
    }
    return it;
  }

 private:
  CollContext& ctx_;
  CollArgs args_;
  size_t bytes_ = 0;
  int v_ = 0;
  int parent_ = -1;
  std::vector<int> children_;
};

void copyIfApart(void* dst, const void* src, size_t bytes) {
  if (dst != src) std::memcpy(dst, src, bytes);
}

}  // namespace

weftResult_t chainBroadcast(CollContext& ctx, const CollArgs& args) {
  if (ctx.nranks > 1) {
    ChainPlan plan(ctx, args, false, nullptr);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  if (ctx.rank == args.root)
    copyIfApart(args.recvbuff, args.sendbuff, args.count * datatypeSize(args.datatype));
  return weftSuccess;
}

weftResult_t directBroadcast(CollContext& ctx, const CollArgs& args) {
  if (ctx.nranks > 1) {
    StarPlan plan(ctx, args, false);
    WideChannels wide(ctx);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  if (ctx.rank == args.root)
    copyIfApart(args.recvbuff, args.sendbuff, args.count * datatypeSize(args.datatype));
  return weftSuccess;
}

weftResult_t binomialBroadcast(CollContext& ctx, const CollArgs& args) {
  if (ctx.nranks > 1) {
    BinomialPlan plan(ctx, args);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  if (ctx.rank == args.root)
    copyIfApart(args.recvbuff, args.sendbuff, args.count * datatypeSize(args.datatype));
  return weftSuccess;
}

weftResult_t chainReduce(CollContext& ctx, const CollArgs& args) {
  const size_t bytes = args.count * datatypeSize(args.datatype);
  if (ctx.nranks == 1) {
    copyIfApart(args.recvbuff, args.sendbuff, bytes);
  } else {
    char* scratch = ctx.rank == args.root ? nullptr : ctx.scratch->get(bytes);
    if (ctx.rank != args.root && scratch == nullptr)
      return setError(weftSystemError, "cannot allocate %zu bytes of reduce scratch", bytes);
    ChainPlan plan(ctx, args, true, scratch);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  if (args.op == weftAvg && ctx.rank == args.root)
    finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

weftResult_t directReduce(CollContext& ctx, const CollArgs& args) {
  if (ctx.nranks > 1) {
    StarPlan plan(ctx, args, true);
    WideChannels wide(ctx);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  if (ctx.rank == args.root) reduceStagedInRankOrder(ctx, args);
  return weftSuccess;
}

}  // namespace weft
