// All-to-all in two phases through the node (hier.h). Phase 1, inside each
// node: a rank hands each local peer the blocks bound for the ranks of that
// peer's local index on every node. Phase 2, between nodes: ranks of equal
// local index exchange all that their node holds for each other. Between
// nodes a rank then talks only to ranks of its own local index, which on a
// rail-optimised fabric sit on its own rail (no hop through the spine to
// change rails: NCCL's PXN does the same for its sends).
//
// Phase 1 moves each block as its own message over shared memory, straight
// from the input; blocks for our own node land in the output at once, the
// others wait in scratch: held[b][i] = local peer i's block for our local
// index on node b. Blocks under kPackBelow are packed instead, one message
// per local peer and run, and put in place on arrival: copying a few KiB
// costs less than a message. Phase 2 sends held[b] as one message of L
// blocks, received straight into the output where node b's ranks are
// consecutive, else into scratch (arrived[b][i]) and copied out at the end.
//
// Phase 2 of some node pairs goes in the same group as phase 1 for others,
// so the node's shared memory works while the network does. Both ends of a
// pair must exchange in the same group, so pairs are taken by their
// distance class min(d, N - d), d = (b - a) mod N, the same seen from
// either end: the classes are cut into up to kPieces runs; group g gathers
// for the nodes of run g and exchanges with those of run g - 1.
#include <algorithm>
#include <cstring>

#include "base/datatype.h"
#include "base/error.h"
#include "collectives/comm_topo.h"
#include "collectives/hier.h"
#include "collectives/p2p_workspace.h"

namespace weft {
namespace {

constexpr int kPieces = 4;
constexpr size_t kPackBelow = 16 << 10;
constexpr double kFirstPhaseCost = 0.3;

struct Layout {
  const CommTopo& topo;
  size_t block;
  char* send;
  char* recv;
  char* held;
  char* arrived;  // null where every node's ranks are consecutive
  char* packed;   // phase 1's packed blocks out and in: null unless blocks are small
  char* unpacked;
  int nodes, locals, me, node;
  int classes, pieces;  // distance classes 0..nodes/2, cut into runs

  // The nodes of the classes of run g, in class order (class 0: our node).
  template <typename Visit>
  void nodesOfRun(int g, Visit visit) const {
    for (int c = g * classes / pieces; c < (g + 1) * classes / pieces; ++c) {
      const int up = (node + c) % nodes, down = (node - c + nodes) % nodes;
      visit(up);
      if (down != up) visit(down);
    }
  }
  char* heldAt(int b, int i) const { return held + (static_cast<size_t>(b) * locals + i) * block; }
  char* arrivedAt(int b) const { return arrived + static_cast<size_t>(b) * locals * block; }
  // Nodes in runs before g, and in run g.
  int nodesBefore(int g) const {
    int count = 0;
    for (int r = 0; r < g; ++r) nodesOfRun(r, [&count](int) { ++count; });
    return count;
  }
  // Where run g's packed blocks for (or from) local peer j start: after the
  // runs before it (`before` nodes), its nodes in run order.
  size_t packedAt(int before, int j, int runNodes) const {
    return (static_cast<size_t>(locals) * before + static_cast<size_t>(j) * runNodes) * block;
  }
  char* outputOf(int rank) const { return recv + static_cast<size_t>(rank) * block; }
  char* inputFor(int rank) const { return send + static_cast<size_t>(rank) * block; }
};

// Phase 1 for the nodes of run g: local peers in the order of distance.
void gather(const Layout& l, int g, std::vector<P2POp>* ops) {
  const std::vector<int>& ours = l.topo.nodeRanks[l.node];
  for (int d = 0; d < l.locals; ++d) {
    const int to = (l.me + d) % l.locals, from = (l.me - d + l.locals) % l.locals;
    l.nodesOfRun(g, [&](int b) {
      ops->push_back(P2POp{true, ours[to], l.inputFor(l.topo.nodeRanks[b][to]), l.block});
    });
    l.nodesOfRun(g, [&](int b) {
      char* into = b == l.node ? l.outputOf(ours[from]) : l.heldAt(b, from);
      ops->push_back(P2POp{false, ours[from], into, l.block});
    });
  }
}

// Phase 1 packed: one message per local peer, packed here and unpacked by
// unpackRun once the group is done.
void gatherPacked(const Layout& l, int g, bool moving, std::vector<P2POp>* ops) {
  const std::vector<int>& ours = l.topo.nodeRanks[l.node];
  const int before = l.nodesBefore(g), runNodes = l.nodesBefore(g + 1) - before;
  const size_t bytes = static_cast<size_t>(runNodes) * l.block;
  for (int j = 0; j < l.locals && moving; ++j) {
    char* out = l.packed + l.packedAt(before, j, runNodes);
    l.nodesOfRun(g, [&](int b) {
      std::memcpy(out, l.inputFor(l.topo.nodeRanks[b][j]), l.block);
      out += l.block;
    });
  }
  for (int d = 0; d < l.locals; ++d) {
    const int to = (l.me + d) % l.locals, from = (l.me - d + l.locals) % l.locals;
    ops->push_back(P2POp{true, ours[to], l.packed + l.packedAt(before, to, runNodes), bytes});
    ops->push_back(
        P2POp{false, ours[from], l.unpacked + l.packedAt(before, from, runNodes), bytes});
  }
}

void unpackRun(const Layout& l, int g) {
  const std::vector<int>& ours = l.topo.nodeRanks[l.node];
  const int before = l.nodesBefore(g), runNodes = l.nodesBefore(g + 1) - before;
  for (int i = 0; i < l.locals; ++i) {
    const char* in = l.unpacked + l.packedAt(before, i, runNodes);
    l.nodesOfRun(g, [&](int b) {
      std::memcpy(b == l.node ? l.outputOf(ours[i]) : l.heldAt(b, i), in, l.block);
      in += l.block;
    });
  }
}

// Phase 2 for the nodes of run g: node b's rank of our local index gets our
// node's L blocks for it and sends its node's L blocks for us.
void spread(const Layout& l, int g, std::vector<P2POp>* ops) {
  const size_t bytes = static_cast<size_t>(l.locals) * l.block;
  l.nodesOfRun(g, [&](int b) {
    if (b == l.node) return;
    const int peer = l.topo.nodeRanks[b][l.me];
    ops->push_back(P2POp{true, peer, l.heldAt(b, 0), bytes});
    char* into = l.arrived != nullptr ? l.arrivedAt(b) : l.outputOf(l.topo.nodeRanks[b][0]);
    ops->push_back(P2POp{false, peer, into, bytes});
  });
}

bool nodesConsecutive(const CommTopo& topo) {
  for (const std::vector<int>& ranks : topo.nodeRanks)
    for (size_t i = 1; i < ranks.size(); ++i)
      if (ranks[i] != ranks[0] + static_cast<int>(i)) return false;
  return true;
}

}  // namespace

// In units of the time a NIC takes for its bytes: the direct form sends
// 1 - 1/(M R) of them off their rail switch (M leaves, R rails), the form
// through the node 1 - 1/M (only what leaves the leaf), and the uplinks,
// X:1 oversubscribed, take X times as long for what crosses them. The form
// through the node wins where that saves more than its first phase costs
// (about 0.3 of a NIC's time, simulated: weft-sim --op alltoall).
bool hierAllToAllPreferred(const CommTopo& topo) {
  const FabricShape& f = topo.fabric;
  if (!hierUsable(topo) || f.nics < 2) return false;
  const double leaves = std::max(1, f.leaves), rails = f.nics, over = f.uplinkOversub;
  const double direct = std::max(1.0, over * (1 - 1 / (leaves * rails)));
  const double through = std::max(1.0, over * (1 - 1 / leaves));
  return direct - through > kFirstPhaseCost;
}

weftResult_t hierAllToAll(CollContext& ctx, const CommTopo& topo, const CollArgs& a) {
  const size_t block = a.count * datatypeSize(a.datatype);
  if (block == 0) return weftSuccess;
  const int nodes = topo.nnodes, locals = topo.localRanks;
  const size_t all = static_cast<size_t>(nodes) * static_cast<size_t>(locals) * block;
  const bool consecutive = nodesConsecutive(topo);
  const bool pack = block < kPackBelow;
  const size_t scratchBytes = (consecutive ? 1 : 2) * all + (pack ? 2 * all : 0);
  char* held = ctx.scratch != nullptr ? ctx.scratch->get(scratchBytes) : nullptr;
  if (held == nullptr)
    return setError(weftSystemError, "all-to-all through the node: no %zu bytes of scratch",
                    scratchBytes);
  const int classes = nodes / 2 + 1;
  const Layout l{topo,
                 block,
                 const_cast<char*>(static_cast<const char*>(a.sendbuff)),
                 static_cast<char*>(a.recvbuff),
                 held,
                 consecutive ? nullptr : held + all,
                 pack ? held + (consecutive ? 1 : 2) * all : nullptr,
                 pack ? held + (consecutive ? 2 : 3) * all : nullptr,
                 nodes,
                 locals,
                 topo.localIndex,
                 topo.node,
                 classes,
                 std::min(classes, kPieces)};
  P2PWorkspace local;
  P2PWorkspace& ws = ctx.p2p != nullptr ? *ctx.p2p : local;
  const bool moving = ctx.run.recorder == nullptr;  // weft-sim records plans and moves nothing
  WideChannels wide(ctx);
  for (int g = 0; g <= l.pieces; ++g) {
    ws.ops.clear();  // filled completely before runP2P plans from it (point_to_point.cc)
    if (g > 0) spread(l, g - 1, &ws.ops);
    if (g < l.pieces && pack)
      gatherPacked(l, g, moving, &ws.ops);
    else if (g < l.pieces)
      gather(l, g, &ws.ops);
    WEFT_CHECK(runP2P(ctx, ws.ops.data(), ws.ops.size(), false));
    if (g < l.pieces && pack && moving) unpackRun(l, g);
  }
  if (l.arrived == nullptr || !moving) return weftSuccess;
  for (int b = 0; b < nodes; ++b)
    for (int i = 0; i < locals && b != topo.node; ++i)
      std::memcpy(l.outputOf(topo.nodeRanks[b][i]), l.arrivedAt(b) + i * block, block);
  return weftSuccess;
}

}  // namespace weft
