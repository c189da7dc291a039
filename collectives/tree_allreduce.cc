// Double binary tree allreduce (tree_schedule.h). The buffer is cut in two
// halves; half t is reduced up tree t to its root and broadcast back down it,
// both halves at once and each pipelined in C chunks. A rank reduces chunk c
// as own input + first child's + second child's (always in that order, so the
// result is the same run after run), sends it to its parent, then forwards
// the finished chunk from its parent to its children. Latency: about
// 2*log2(n) hops instead of the ring's 2(n-1).
//
// Channels: a peer can be our parent in one tree and our child in the other,
// so traffic of both trees to one peer shares one flow per direction. A
// flow carries all its partial sums (up, chunk by chunk, tree 0 before tree 1)
// before any result (down): a result waits only for items of its own chunk
// and tree, and partial sums never wait for results, so no wait can close a
// cycle. Interleaving the two per chunk would make chunk c+1's partial sum
// wait for chunk c's round trip to the root: no pipelining at all.
#include <cstring>

#include "base/error.h"
#include "collectives/coll_context.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"
#include "collectives/tree_schedule.h"

namespace weft {
namespace {

enum Role { kUp, kDown };  // kUp: partial sums towards the root; kDown: the result

struct Entry {
  int tree = 0;
  Role role = kUp;
  int child = -1;  // which child of ours the peer is (kUp receives, kDown sends)
};

struct TreeFlow {
  int peer = -1;
  bool send = false;
  int nent = 0;
  int nup = 0;  // ent[0, nup) go up, ent[nup, nent) come down
  Entry ent[2];
  char* slot = nullptr;  // staging for partial sums received from a child
};

class TreeAllReducePlan : public FlowPlan {
 public:
  TreeAllReducePlan(CollContext& ctx, const TreeLinks links[2], const CollArgs& a)
      : ctx_(ctx), args_(a) {
    esize_ = datatypeSize(a.datatype);
    // Up entries first, then down ones: in a flow, a chunk's partial sums never
    // wait behind the other tree's result coming down.
    for (int t = 0; t < 2; ++t) {
      links_[t] = links[t];
      const TreeLinks& l = links[t];
      if (l.parent >= 0) add(l.parent, true, Entry{t, kUp, -1});
      for (int j = 0; j < l.nchildren(); ++j)
        childRecv_[t][j] = add(l.child[j], false, Entry{t, kUp, j});
    }
    for (int t = 0; t < 2; ++t) {
      const TreeLinks& l = links[t];
      if (l.parent >= 0) parentRecv_[t] = add(l.parent, false, Entry{t, kDown, -1});
      for (int j = 0; j < l.nchildren(); ++j) add(l.child[j], true, Entry{t, kDown, j});
    }
    int nslots = 0;
    for (int f = 0; f < nflows_; ++f)
      if (!flows_[f].send && hasUp(flows_[f])) ++nslots;
    size_t stride = nslots > 0 ? ctx.stagingBytes / nslots / 64 * 64 : ctx.stagingBytes;
    size_t chunk = ctx.chunkBytes < stride ? ctx.chunkBytes : stride;
    int s = 0;
    for (int f = 0; f < nflows_; ++f)
      if (!flows_[f].send && hasUp(flows_[f])) flows_[f].slot = ctx.staging + stride * s++;
    // Small buffers go up and down tree 0 alone (tree 1's items are empty and
    // send nothing): the same depth, half the messages and wake-ups.
    split_ = a.count * esize_ <= kSingleTreeBytes ? a.count : segmentOf(a.count, 2, 0).count;
    C_ = chunksPerSegment(split_, esize_, chunk);
  }

  int numFlows() const override { return nflows_; }
  bool isSend(int f) const override { return flows_[f].send; }
  Channel* channel(int f) const override {
    const TreeFlow& fl = flows_[f];
    return fl.send ? ctx_.channels->sendChannel(fl.peer, 0)
                   : ctx_.channels->recvChannel(fl.peer, 0);
  }
  int64_t numItems(int f) const override { return C_ * flows_[f].nent; }

  FlowItem item(int f, int64_t k) const override {
    const TreeFlow& fl = flows_[f];
    int64_t c = 0;
    const Entry& e = locate(fl, k, &c);
    const TreeLinks& l = links_[e.tree];
    Span sp = chunkOf(half(e.tree), C_, c);
    char* recv = static_cast<char*>(args_.recvbuff) + sp.offset * esize_;
    FlowItem it;
    it.bytes = sp.count * esize_;
    if (fl.send && e.role == kUp) {
      // Our partial sum to the parent: our input alone when we have no children.
      it.data = l.nchildren() == 0 ? const_cast<char*>(static_cast<const char*>(args_.sendbuff)) +
                                         sp.offset * esize_
                                   : recv;
      if (l.nchildren() > 0) dependOn(&it, childRecv_[e.tree][l.nchildren() - 1], c);
    } else if (fl.send) {
      // The finished chunk to a child: once reduced (root) or received from the parent.
      it.data = recv;
      if (l.parent < 0)
        dependOn(&it, childRecv_[e.tree][l.nchildren() - 1], c);
      else
        dependOn(&it, parentRecv_[e.tree], c);
    } else if (e.role == kUp) {
      it.data = fl.slot;
      if (e.child == 1) dependOn(&it, childRecv_[e.tree][0], c);  // reduce in child order
    } else {
      it.data = recv;  // our partial sum of this chunk went up before the result can come down
    }
    return it;
  }

  void onReceived(int f, int64_t k) override {
    const TreeFlow& fl = flows_[f];
    int64_t c = 0;
    const Entry& e = locate(fl, k, &c);
    if (e.role != kUp) return;
    Span sp = chunkOf(half(e.tree), C_, c);
    size_t off = sp.offset * esize_;
    char* recv = static_cast<char*>(args_.recvbuff) + off;
    const char* mine = e.child == 0 ? static_cast<const char*>(args_.sendbuff) + off : recv;
    reduceElements(args_.datatype, args_.op, recv, mine, fl.slot, sp.count);
  }

 private:
  struct Ref {
    int flow = -1;
    int entry = 0;
  };
  // The part of the buffer tree t reduces: [0, split) and [split, count).
  Span half(int t) const { return t == 0 ? Span{0, split_} : Span{split_, args_.count - split_}; }
  static bool hasUp(const TreeFlow& fl) {
    for (int i = 0; i < fl.nent; ++i)
      if (fl.ent[i].role == kUp) return true;
    return false;
  }
  // Adds an entry to the flow for (peer, direction), creating the flow if new.
  Ref add(int peer, bool send, Entry e) {
    int f = 0;
    while (f < nflows_ && !(flows_[f].peer == peer && flows_[f].send == send)) ++f;
    if (f == nflows_) {
      flows_[nflows_].peer = peer;
      flows_[nflows_].send = send;
      ++nflows_;
    }
    flows_[f].ent[flows_[f].nent] = e;
    if (e.role == kUp) ++flows_[f].nup;  // every up entry is added before any down one
    return Ref{f, flows_[f].nent++};
  }
  void dependOn(FlowItem* it, Ref r, int64_t chunk) const {
    it->depFlow = r.flow;
    const TreeFlow& fl = flows_[r.flow];
    const int ndown = fl.nent - fl.nup;
    it->depItem = r.entry < fl.nup ? chunk * fl.nup + r.entry
                                   : C_ * fl.nup + chunk * ndown + (r.entry - fl.nup);
  }
  // Item k of a flow: its entry and chunk (ups of every chunk, then downs).
  const Entry& locate(const TreeFlow& fl, int64_t k, int64_t* chunk) const {
    if (k < C_ * fl.nup) {
      *chunk = k / fl.nup;
      return fl.ent[k % fl.nup];
    }
    const int ndown = fl.nent - fl.nup;
    k -= C_ * fl.nup;
    *chunk = k / ndown;
    return fl.ent[fl.nup + k % ndown];
  }

  CollContext& ctx_;
  CollArgs args_;
  size_t esize_ = 0;
  int64_t C_ = 1;
  size_t split_ = 0;
  TreeLinks links_[2];
  TreeFlow flows_[12];
  int nflows_ = 0;
  Ref childRecv_[2][2];
  Ref parentRecv_[2];
};

}  // namespace

weftResult_t treeAllReduceNoAvg(CollContext& ctx, const TreeLinks links[2], const CollArgs& args) {
  if (ctx.nranks == 1) {
    size_t bytes = args.count * datatypeSize(args.datatype);
    if (args.recvbuff != args.sendbuff) std::memcpy(args.recvbuff, args.sendbuff, bytes);
    return weftSuccess;
  }
  TreeAllReducePlan plan(ctx, links, args);
  return runFlows(plan, ctx.run);
}

weftResult_t treeAllReduce(CollContext& ctx, const TreeLinks links[2], const CollArgs& args) {
  WEFT_CHECK(treeAllReduceNoAvg(ctx, links, args));
  if (args.op == weftAvg) finishAverage(args.datatype, args.recvbuff, args.count, ctx.nranks);
  return weftSuccess;
}

}  // namespace weft
