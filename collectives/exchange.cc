// All-to-all and point-to-point. Both are sets of independent transfers, one
// flow per (peer, direction); the engine moves them all at once, so the order
// in which ranks post them cannot deadlock. Transfers to one peer in one
// direction share a flow, which keeps them in call order on the wire.
#include <cstring>
#include <vector>

#include "collectives/call_header.h"
#include "collectives/coll_context.h"
#include "collectives/p2p_header.h"
#include "collectives/reduce.h"
#include "core/error.h"

namespace weft {
namespace {

struct P2PFlow {
  bool send;
  int peer;
  std::vector<const P2POp*> ops;
};

// With size headers, op k of a flow is items 2k (its header) and 2k+1 (its
// data); without, op k is item k.
class P2PPlan : public FlowPlan {
 public:
  P2PPlan(CollContext& ctx, std::vector<P2PFlow> flows, bool sized)
      : ctx_(ctx), flows_(std::move(flows)), sized_(sized) {
    if (!sized_) return;
    for (const P2PFlow& fl : flows_) {
      firstHeader_.push_back(headers_.size());
      for (const P2POp* op : fl.ops)
        headers_.push_back(fl.send ? makeP2PHeader(op->count, op->datatype) : P2PHeader{});
    }
  }
  int numFlows() const override { return static_cast<int>(flows_.size()); }
  bool isSend(int f) const override { return flows_[f].send; }
  Channel* channel(int f) const override {
    const P2PFlow& fl = flows_[f];
    return fl.send ? ctx_.channels->sendChannel(fl.peer, 0)
                   : ctx_.channels->recvChannel(fl.peer, 0);
  }
  int64_t numItems(int f) const override {
    return static_cast<int64_t>(flows_[f].ops.size()) * (sized_ ? 2 : 1);
  }
  FlowItem item(int f, int64_t k) const override {
    FlowItem it;
    if (sized_ && k % 2 == 0) {
      it.data = const_cast<char*>(reinterpret_cast<const char*>(&header(f, k / 2)));
      it.bytes = sizeof(P2PHeader);
      return it;
    }
    const P2POp* op = flows_[f].ops[sized_ ? k / 2 : k];
    it.data = op->buf;
    it.bytes = op->bytes;
    return it;
  }
  // A receive's header landed: check it before any of its data is read.
  void onReceived(int f, int64_t k) override {
    if (!sized_ || k % 2 != 0 || failure_ != weftSuccess) return;
    const P2POp* op = flows_[f].ops[k / 2];
    failure_ = compareP2PHeader(header(f, k / 2), op->peer, ctx_.rank, op->count, op->datatype);
  }
  weftResult_t failure() const override { return failure_; }

 private:
  CollContext& ctx_;
  std::vector<P2PFlow> flows_;
  bool sized_;
  const P2PHeader& header(int f, int64_t op) const { return headers_[firstHeader_[f] + op]; }
  std::vector<P2PHeader> headers_;   // one per op: sent, or received into
  std::vector<size_t> firstHeader_;  // [flow]: where its ops' headers start in headers_
  weftResult_t failure_ = weftSuccess;
};

}  // namespace

weftResult_t runP2P(CollContext& ctx, const P2POp* ops, size_t nops, bool checkSizes) {
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
    if (selfSends[i]->bytes > 0)  // empty ones may have NULL buffers
      std::memmove(selfRecvs[i]->buf, selfSends[i]->buf, selfSends[i]->bytes);
  }
  if (flows.empty()) return weftSuccess;
  if (static_cast<int>(flows.size()) > kMaxFlows)
    return setError(weftInvalidUsage, "a group may address at most %d peer/direction pairs",
                    kMaxFlows);
  P2PPlan plan(ctx, std::move(flows), checkSizes);
  weftResult_t r = runFlows(plan, ctx.run);
  // A size mismatch leaves the byte stream out of step: the communicator is broken.
  if (plan.failure() != weftSuccess && ctx.run.check != nullptr) ctx.run.check->mismatch = true;
  return r;
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
