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
// data); without, op k is item k. A send's item 2k is a copy of its header
// and the first (up to 32 KiB) of its data, item 2k+1 the rest: over TCP a
// header item of its own cost ~10 us per small send (a segment and a
// receiver wake-up of its own).
class P2PPlan : public FlowPlan {
 public:
  P2PPlan(CollContext& ctx, std::vector<P2PFlow> flows, bool sized)
      : ctx_(ctx), flows_(std::move(flows)), sized_(sized) {
    if (!sized_) return;
    for (const P2PFlow& fl : flows_) {
      firstHeader_.push_back(headers_.size());
      for (const P2POp* op : fl.ops) {
        headers_.push_back(fl.send ? makeP2PHeader(op->count, op->datatype) : P2PHeader{});
        packedAt_.push_back(kNotPacked);
        if (!fl.send) continue;
        packedAt_.back() = packed_.size();
        packed_.resize(packed_.size() + sizeof(P2PHeader) + packedData(*op));
      }
    }
    for (size_t h = 0; h < headers_.size(); ++h) {  // after the last resize: stable addresses
      if (packedAt_[h] == kNotPacked) continue;
      std::memcpy(&packed_[packedAt_[h]], &headers_[h], sizeof(P2PHeader));
    }
    for (size_t f = 0; f < flows_.size(); ++f)
      for (size_t k = 0; k < flows_[f].ops.size(); ++k) {
        size_t at = packedAt_[firstHeader_[f] + k];
        if (at != kNotPacked && flows_[f].ops[k]->bytes > 0)
          std::memcpy(&packed_[at + sizeof(P2PHeader)], flows_[f].ops[k]->buf,
                      packedData(*flows_[f].ops[k]));
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
    const size_t packed = sized_ ? packedAt_[firstHeader_[f] + k / 2] : kNotPacked;
    if (packed != kNotPacked) {  // header + data head in item 2k, the rest in 2k+1
      const P2POp& op = *flows_[f].ops[k / 2];
      const size_t head = packedData(op);
      it.data = k % 2 == 0 ? const_cast<char*>(&packed_[packed]) : op.buf + head;
      it.bytes = k % 2 == 0 ? sizeof(P2PHeader) + head : op.bytes - head;
      return it;
    }
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
  static constexpr size_t kPackBytes = 32 << 10;  // data bytes packed with a header
  static size_t packedData(const P2POp& op) {
    return op.bytes < kPackBytes ? op.bytes : kPackBytes;
  }
  static constexpr size_t kNotPacked = ~size_t{0};
  std::vector<char> packed_;      // per send: header then its data's head, back to back
  std::vector<size_t> packedAt_;  // [header index]: offset in packed_, or kNotPacked
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
