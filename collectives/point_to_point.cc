// All-to-all and point-to-point. Both are sets of independent transfers, one
// flow per (peer, direction); the engine moves them all at once, so the order
// in which ranks post them cannot deadlock. Transfers to one peer in one
// direction share a flow, which keeps them in call order on the wire.
#include <cstring>
#include <vector>

#include "base/call_header.h"
#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/p2p_header.h"
#include "collectives/p2p_workspace.h"
#include "collectives/reduce.h"

namespace weft {
namespace {

constexpr size_t kNotPacked = ~size_t{0};
constexpr size_t kPackBytes = 32 << 10;  // data bytes packed with a header
size_t packedData(const P2POp& op) { return op.bytes < kPackBytes ? op.bytes : kPackBytes; }

// With size headers, a send's op k is items 2k and 2k+1: item 2k is a copy of
// its header, the padding (p2p_header.h) and the first (up to 32 KiB) of its
// data, item 2k+1 the rest (over TCP a header item of its own costs a segment
// and a receiver wake-up of its own). A receive's op k is items 3k (the
// header), 3k+1 (the padding, if any, into a sink) and 3k+2 (the data).
// Without headers, op k is item k. Everything lives in the workspace.
class P2PPlan : public FlowPlan {
 public:
  P2PPlan(CollContext& ctx, P2PWorkspace& ws, bool sized) : ctx_(ctx), ws_(ws), sized_(sized) {
    ws_.headers.clear();
    ws_.firstHeader.clear();
    ws_.packed.clear();
    ws_.packedAt.clear();
    if (!sized_) return;
    for (const P2PFlow& fl : ws_.flows) {
      ws_.firstHeader.push_back(ws_.headers.size());
      for (size_t k = 0; k < fl.count; ++k) {
        const P2POp* op = ws_.flowOps[fl.first + k];
        ws_.headers.push_back(fl.send ? makeP2PHeader(op->count, op->datatype) : P2PHeader{});
        ws_.packedAt.push_back(kNotPacked);
        if (!fl.send) continue;
        ws_.packedAt.back() = ws_.packed.size();
        // resize zero-fills: the padding goes out as zeros
        ws_.packed.resize(ws_.packed.size() + p2pDataOffset(op->bytes) + packedData(*op));
      }
    }
    for (size_t h = 0; h < ws_.headers.size(); ++h) {  // after the last resize: stable addresses
      if (ws_.packedAt[h] == kNotPacked) continue;
      std::memcpy(&ws_.packed[ws_.packedAt[h]], &ws_.headers[h], sizeof(P2PHeader));
    }
    for (size_t f = 0; f < ws_.flows.size(); ++f)
      for (size_t k = 0; k < ws_.flows[f].count; ++k) {
        const P2POp* op = ws_.flowOps[ws_.flows[f].first + k];
        size_t at = ws_.packedAt[ws_.firstHeader[f] + k];
        if (at != kNotPacked && op->bytes > 0)
          std::memcpy(&ws_.packed[at + p2pDataOffset(op->bytes)], op->buf, packedData(*op));
      }
  }
  int numFlows() const override { return static_cast<int>(ws_.flows.size()); }
  bool isSend(int f) const override { return ws_.flows[f].send; }
  Channel* channel(int f) const override {
    const P2PFlow& fl = ws_.flows[f];
    return fl.send ? ctx_.channels->sendChannel(fl.peer, 0)
                   : ctx_.channels->recvChannel(fl.peer, 0);
  }
  int64_t numItems(int f) const override {
    return static_cast<int64_t>(ws_.flows[f].count) * itemsPerOp(f);
  }
  FlowItem item(int f, int64_t k) const override {
    FlowItem it;
    const int64_t per = itemsPerOp(f);
    const P2POp& op = *opOf(f, k / per);
    const int64_t part = k % per;
    if (!sized_) {
      it.data = op.buf;
      it.bytes = op.bytes;
    } else if (ws_.flows[f].send) {  // header, padding and data head; then the rest
      const size_t head = packedData(op);
      it.data = part == 0 ? const_cast<char*>(&ws_.packed[ws_.packedAt[headerIndex(f, k / per)]])
                          : op.buf + head;
      it.bytes = part == 0 ? p2pDataOffset(op.bytes) + head : op.bytes - head;
    } else if (part == 0) {
      it.data = const_cast<char*>(reinterpret_cast<const char*>(&header(f, k / per)));
      it.bytes = sizeof(P2PHeader);
    } else if (part == 1) {
      it.data = ws_.padSink;
      it.bytes = p2pDataOffset(op.bytes) - sizeof(P2PHeader);
    } else {
      it.data = op.buf;
      it.bytes = op.bytes;
    }
    return it;
  }
  // A receive's header landed: check it before any of its data is read.
  void onReceived(int f, int64_t k) override {
    if (!sized_ || k % 3 != 0 || failure_ != weftSuccess) return;
    const P2POp* op = opOf(f, k / 3);
    failure_ = compareP2PHeader(header(f, k / 3), op->peer, ctx_.rank, op->count, op->datatype);
  }
  weftResult_t failure() const override { return failure_; }

 private:
  CollContext& ctx_;
  P2PWorkspace& ws_;
  bool sized_;
  const P2POp* opOf(int f, int64_t k) const {
    return ws_.flowOps[ws_.flows[f].first + static_cast<size_t>(k)];
  }
  int64_t itemsPerOp(int f) const { return !sized_ ? 1 : ws_.flows[f].send ? 2 : 3; }
  size_t headerIndex(int f, int64_t op) const {
    return ws_.firstHeader[f] + static_cast<size_t>(op);
  }
  const P2PHeader& header(int f, int64_t op) const { return ws_.headers[headerIndex(f, op)]; }
  weftResult_t failure_ = weftSuccess;
};

// Groups the ops into flows, one per (peer, direction) in order of first
// use, each keeping its ops in call order; transfers to ourselves apart.
void planFlows(P2PWorkspace& ws, int rank, const P2POp* ops, size_t nops) {
  ws.flows.clear();
  ws.selfSends.clear();
  ws.selfRecvs.clear();
  ws.flowOf.assign(nops, -1);
  for (size_t i = 0; i < nops; ++i) {
    const P2POp& op = ops[i];
    if (op.peer == rank) {
      (op.send ? ws.selfSends : ws.selfRecvs).push_back(&op);
      continue;
    }
    int flow = -1;
    for (size_t f = 0; f < ws.flows.size() && flow < 0; ++f)
      if (ws.flows[f].send == op.send && ws.flows[f].peer == op.peer) flow = static_cast<int>(f);
    if (flow < 0) {
      flow = static_cast<int>(ws.flows.size());
      ws.flows.push_back(P2PFlow{op.send, op.peer, 0, 0});
    }
    ws.flows[flow].count++;
    ws.flowOf[i] = flow;
  }
  size_t first = 0;
  for (P2PFlow& f : ws.flows) {
    f.first = first;
    first += f.count;
  }
  ws.flowOps.resize(first);
  ws.fill.assign(ws.flows.size(), 0);
  for (size_t i = 0; i < nops; ++i) {
    int f = ws.flowOf[i];
    if (f < 0) continue;
    ws.flowOps[ws.flows[f].first + ws.fill[f]++] = &ops[i];
  }
}

weftResult_t runP2PIn(P2PWorkspace& ws, CollContext& ctx, const P2POp* ops, size_t nops,
                      bool checkSizes) {
  planFlows(ws, ctx.rank, ops, nops);
  // Sends to ourselves match our receives from ourselves in order.
  if (ws.selfSends.size() != ws.selfRecvs.size())
    return setError(weftInvalidUsage,
                    "%zu send(s) to self but %zu receive(s) from self in one group",
                    ws.selfSends.size(), ws.selfRecvs.size());
  for (size_t i = 0; i < ws.selfSends.size(); ++i) {
    if (ws.selfSends[i]->bytes != ws.selfRecvs[i]->bytes)
      return setError(weftInvalidUsage,
                      "send to self of %zu bytes meets a receive from self of %zu bytes",
                      ws.selfSends[i]->bytes, ws.selfRecvs[i]->bytes);
    if (ws.selfSends[i]->bytes > 0)  // empty ones may have NULL buffers
      std::memmove(ws.selfRecvs[i]->buf, ws.selfSends[i]->buf, ws.selfSends[i]->bytes);
  }
  if (ws.flows.empty()) return weftSuccess;
  P2PPlan plan(ctx, ws, checkSizes);
  weftResult_t r = runFlows(plan, ctx.run);
  // A size mismatch leaves the byte stream out of step: the communicator is broken.
  if (plan.failure() != weftSuccess && ctx.run.check != nullptr) ctx.run.check->mismatch = true;
  return r;
}

}  // namespace

weftResult_t runP2P(CollContext& ctx, const P2POp* ops, size_t nops, bool checkSizes) {
  if (ctx.p2p != nullptr) return runP2PIn(*ctx.p2p, ctx, ops, nops, checkSizes);
  P2PWorkspace local;  // a context without a communicator's workspace (tests)
  return runP2PIn(local, ctx, ops, nops, checkSizes);
}

weftResult_t directAllToAll(CollContext& ctx, const CollArgs& args) {
  const size_t block = args.count * datatypeSize(args.datatype);
  const int n = ctx.nranks;
  P2PWorkspace local;
  P2PWorkspace& ws = ctx.p2p != nullptr ? *ctx.p2p : local;
  // runP2P plans in the same workspace, but from the ops given, so these
  // must not move under it: filled completely before.
  ws.ops.clear();
  for (int p = 0; p < n; ++p) {
    // Post receives and sends interleaved by distance so large exchanges spread over peers.
    int to = (ctx.rank + p) % n, from = (ctx.rank - p + n) % n;
    ws.ops.push_back(P2POp{
        true, to, const_cast<char*>(static_cast<const char*>(args.sendbuff)) + to * block, block});
    ws.ops.push_back(P2POp{false, from, static_cast<char*>(args.recvbuff) + from * block, block});
  }
  WideChannels wide(ctx);
  return runP2PIn(ws, ctx, ws.ops.data(), ws.ops.size(), false);
}

}  // namespace weft
