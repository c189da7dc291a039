// Ring reduce-scatter. At step k (0..n-2) rank r sends block r-k-1 and
// receives block r-k-2, reducing the incoming partial sum with its own input;
// after the last step it holds block r fully reduced, straight in recvbuff.
// Intermediate partial sums live in the communicator's scratch until the next
// step forwards them; incoming ones land where their reduce writes. Chunks
// pipeline (in RingOrder) exactly as in ring_allreduce.cc.
#include <cstring>

#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

class RingReduceScatterPlan : public FlowPlan {
 public:
  RingReduceScatterPlan(CollContext& ctx, const CollArgs& a, char* scratch)
      : ctx_(ctx),
        args_(a),
        n_(ctx.nranks),
        r_(ctx.rank),
        S_(ctx.channels->nstreams()),
        scratch_(scratch) {
    esize_ = datatypeSize(a.datatype);
    C_ = chunksPerSegment(a.count, esize_, ctx.chunkBytes);
    total_ = static_cast<int64_t>(n_ - 1) * C_;
    order_ = ringOrder(n_ - 1, C_, ctx.chunkBytes);
    inPlace_ = a.recvbuff == static_cast<const char*>(a.sendbuff) + r_ * a.count * esize_;
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
    FlowItem it;
    if (isSend(f)) {
      int seg = mod(r_ - step - 1, n_);
      Span sp = chunkOf(Span{static_cast<size_t>(seg) * args_.count, args_.count}, C_, c);
      const char* base = step == 0 ? static_cast<const char*>(args_.sendbuff) : scratch_;
      it.data = const_cast<char*>(base) + sp.offset * esize_;
      it.bytes = sp.count * esize_;
      if (step > 0) {
        int64_t dep = order_.index(step - 1, c);
        it.depFlow = S_ + static_cast<int>(dep % S_);
        it.depItem = dep / S_;
      }
    } else {
      int seg = mod(r_ - step - 2, n_);
      Span sp = chunkOf(Span{static_cast<size_t>(seg) * args_.count, args_.count}, C_, c);
      it.data =
          landsAtOutput(step) ? output(step, seg, sp) : ctx_.staging + (f - S_) * ctx_.slotBytes;
      it.bytes = sp.count * esize_;
    }
    return it;
  }

  void onReceived(int f, int64_t k) override {
    int64_t i = f % S_ + k * S_;
    int64_t step = 0, c = 0;
    order_.at(i, &step, &c);
    int seg = mod(r_ - step - 2, n_);
    Span sp = chunkOf(Span{static_cast<size_t>(seg) * args_.count, args_.count}, C_, c);
    char* out = output(step, seg, sp);
    const char* in = landsAtOutput(step) ? out : ctx_.staging + (f - S_) * ctx_.slotBytes;
    reduceElements(args_.datatype, args_.op, out, in,
                   static_cast<const char*>(args_.sendbuff) + sp.offset * esize_, sp.count);
  }

 private:
  // Where step's reduced chunk `sp` of block `seg` goes: the last step's
  // result is ours to keep, in recvbuff; earlier ones wait in scratch for the
  // next step to forward them.
  char* output(int64_t step, int seg, Span sp) const {
    if (step == n_ - 2)
      return static_cast<char*>(args_.recvbuff) + (sp.offset - seg * args_.count) * esize_;
    return scratch_ + sp.offset * esize_;
  }
  // Whether step's incoming partial sums land where their reduce writes
  // rather than in staging: then the reduce reads and writes lines the
  // receive just cached, where its stores would first read the output's
  // lines from memory (see ring_allreduce.cc). Scratch always can; recvbuff
  // only out of place, since in place it is this rank's own input block.
  bool landsAtOutput(int64_t step) const { return step < n_ - 2 || !inPlace_; }

  CollContext& ctx_;
  CollArgs args_;
  int n_, r_, S_;
  char* scratch_;
  size_t esize_ = 0;
  int64_t C_ = 1, total_ = 0;
  bool inPlace_ = false;  // recvbuff is sendbuff's block r_
  RingOrder order_;
};

}  // namespace

weftResult_t ringReduceScatter(CollContext& ctx, const CollArgs& args) {
  const size_t bytes = args.count * datatypeSize(args.datatype);
  if (ctx.nranks == 1) {
    if (args.recvbuff != args.sendbuff) std::memcpy(args.recvbuff, args.sendbuff, bytes);
  } else {
    char* scratch = ctx.scratch->get(bytes * ctx.nranks);
    if (scratch == nullptr)
      return setError(weftSystemError, "cannot allocate %zu bytes of reduce-scatter scratch",
                      bytes * ctx.nranks);
    RingReduceScatterPlan plan(ctx, args, scratch);
    WEFT_CHECK(runFlows(plan, ctx.run));
  }
  if (args.op == weftAvg) finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

}  // namespace weft
