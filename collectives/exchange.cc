// All-to-all and point-to-point. Both are sets of independent transfers, one
// flow per (peer, direction); the engine moves them all at once, so the order
// in which ranks post them cannot deadlock. Transfers to one peer in one
// direction share a flow, which keeps them in call order on the wire.
#include <cstring>
#include <vector>

#include "collectives/coll_context.h"
#include "collectives/reduce.h"
#include "core/error.h"

namespace weft {
namespace {

struct P2PFlow {
  bool send;
  int peer;
  std::vector<const P2POp*> ops;
};

class P2PPlan : public FlowPlan {
 public:
  P2PPlan(CollContext& ctx, std::vector<P2PFlow> flows) : ctx_(ctx), flows_(std::move(flows)) {}
  int numFlows() const override { return static_cast<int>(flows_.size()); }
  bool isSend(int f) const override { return flows_[f].send; }
  Channel* channel(int f) const override {
    const P2PFlow& fl = flows_[f];
    return fl.send ? ctx_.channels->sendChannel(fl.peer, 0)
                   : ctx_.channels->recvChannel(fl.peer, 0);
  }
  int64_t numItems(int f) const override { return static_cast<int64_t>(flows_[f].ops.size()); }
  FlowItem item(int f, int64_t k) const override {
    FlowItem it;
    it.data = flows_[f].ops[k]->buf;
    it.bytes = flows_[f].ops[k]->bytes;
    return it;
  }

 private:
  CollContext& ctx_;
  std::vector<P2PFlow> flows_;
};

}  // namespace

weftResult_t runP2P(CollContext& ctx, const P2POp* ops, size_t nops) {
  std::vector<P2PFlow> flows;
  std::vector<const P2POp*> selfSends, selfRecvs;
  for (size_t i = 0; i < nops; ++i) {
    const P2POp& op = ops[i];
    if (op.peer == ctx.rank) {
      (op.send ? selfSends : selfRecvs).push_back(&op);
      continue;
    }
    P2PFlow* flow = nullptr;
    for (P2PFlow& f : flows)
      if (f.send == op.send && f.peer == op.peer) flow = &f;
    if (flow == nullptr) {
      flows.push_back(P2PFlow{op.send, op.peer, {}});
      flow = &flows.back();
    }
    flow->ops.push_back(&op);
  }
  // Sends to ourselves match our receives from ourselves in order.
  if (selfSends.size() != selfRecvs.size())
    return setError(weftInvalidUsage,
                    "%zu send(s) to self but %zu receive(s) from self in one group",
                    selfSends.size(), selfRecvs.size());
  for (size_t i = 0; i < selfSends.size(); ++i) {
    if (selfSends[i]->bytes != selfRecvs[i]->bytes)
      return setError(weftInvalidUsage,
                      "send to self of %zu bytes meets a receive from self of %zu bytes",
                      selfSends[i]->bytes, selfRecvs[i]->bytes);
    std::memmove(selfRecvs[i]->buf, selfSends[i]->buf, selfSends[i]->bytes);
  }
  if (flows.empty()) return weftSuccess;
  if (static_cast<int>(flows.size()) > kMaxFlows)
    return setError(weftInvalidUsage, "a group may address at most %d peer/direction pairs",
                    kMaxFlows);
  P2PPlan plan(ctx, std::move(flows));
  return runFlows(plan, ctx.run);
}

weftResult_t directAllToAll(CollContext& ctx, const CollArgs& args) {
  const size_t block = args.count * datatypeSize(args.datatype);
  const int n = ctx.nranks;
  std::vector<P2POp> ops;
  ops.reserve(2 * n);
  for (int p = 0; p < n; ++p) {
    // Post receives and sends interleaved by distance so large exchanges spread over peers.
    int to = (ctx.rank + p) % n, from = (ctx.rank - p + n) % n;
    ops.push_back(P2POp{
        true, to, const_cast<char*>(static_cast<const char*>(args.sendbuff)) + to * block, block});
    ops.push_back(P2POp{false, from, static_cast<char*>(args.recvbuff) + from * block, block});
  }
  return runP2P(ctx, ops.data(), ops.size());
}

}  // namespace weft
