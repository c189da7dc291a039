// One-round allreduce for small messages: every rank sends its input to every
// peer over stream 0 and reduces the n inputs itself, always in rank order
// 0,1,...,n-1, so that every rank computes bitwise the same result.
#include <cstring>

#include "collectives/coll_context.h"
#include "collectives/reduce.h"

namespace weft {
namespace {

// Flows 0..n-1 send to rank f, n..2n-1 receive from rank f-n (own rank: no items).
class OneshotPlan : public FlowPlan {
 public:
  OneshotPlan(CollContext& ctx, const CollArgs& a, size_t bytes)
      : ctx_(ctx), args_(a), bytes_(bytes) {}
  int numFlows() const override { return 2 * ctx_.nranks; }
  bool isSend(int f) const override { return f < ctx_.nranks; }
  Channel* channel(int f) const override {
    int peer = f % ctx_.nranks;
    return isSend(f) ? ctx_.channels->sendChannel(peer, 0) : ctx_.channels->recvChannel(peer, 0);
  }
  int64_t numItems(int f) const override { return f % ctx_.nranks == ctx_.rank ? 0 : 1; }
  FlowItem item(int f, int64_t) const override {
    FlowItem it;
    it.bytes = bytes_;
    it.data = isSend(f) ? const_cast<char*>(static_cast<const char*>(args_.sendbuff))
                        : ctx_.staging + (f - ctx_.nranks) * bytes_;
    return it;
  }

 private:
  CollContext& ctx_;
  CollArgs args_;
  size_t bytes_;
};

}  // namespace

weftResult_t oneshotAllReduce(CollContext& ctx, const CollArgs& args) {
  const size_t bytes = args.count * datatypeSize(args.datatype);
  const int n = ctx.nranks;
  if (n > 1) {
    OneshotPlan plan(ctx, args, bytes);
    WideChannels wide(ctx);
    weftResult_t r = runFlows(plan, ctx.run);
    if (r != weftSuccess) return r;
  }
  reduceStagedInRankOrder(ctx, args);
  return weftSuccess;
}

void reduceStagedInRankOrder(CollContext& ctx, const CollArgs& args) {
  const size_t bytes = args.count * datatypeSize(args.datatype);
  const int n = ctx.nranks;
  // Our own input joins the others in staging when the output would overwrite it.
  const char* own = static_cast<const char*>(args.sendbuff);
  if (args.sendbuff == args.recvbuff && n > 1) {
    std::memcpy(ctx.staging + ctx.rank * bytes, own, bytes);
    own = ctx.staging + ctx.rank * bytes;
  }
  auto input = [&](int p) -> const char* { return p == ctx.rank ? own : ctx.staging + p * bytes; };
  char* out = static_cast<char*>(args.recvbuff);
  if (n == 1) {
    if (out != own) std::memcpy(out, own, bytes);
  } else {
    reduceInRankOrder(args.datatype, args.op, out, n, args.count, input);
  }
  if (args.op == weftAvg) finishAverage(args.datatype, out, args.count, n);
}

}  // namespace weft
