// How a communicator's ranks sit on nodes (a node is a node identity:
// hostname + boot id + network namespace, src/topo/node_id.h), and the rank
// views the topology-aware algorithms run over. A view renumbers a subset of
// the ranks 0..m-1 so that an algorithm written for "ranks 0..n-1" runs on it
// unchanged: the ring view lists every rank with each node's ranks together
// (the ring crosses node boundaries once per node), the intra view this
// node's ranks, the inter view the ranks of every node with our local index.
// Built once at init: a call allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/coll_context.h"
#include "collectives/fabric_shape.h"
#include "collectives/tree_schedule.h"
#include "transports/channel.h"

namespace weft {

class RankView : public ChannelTable {
 public:
  RankView(ChannelTable* base, std::vector<int> members)
      : base_(base), members_(std::move(members)) {}
  Channel* sendChannel(int peer, int stream) override {
    return base_->sendChannel(members_[peer], stream);
  }
  Channel* recvChannel(int peer, int stream) override {
    return base_->recvChannel(members_[peer], stream);
  }
  // The streams a call may use: all of the base's, or fewer when the tuner says so.
  int nstreams() const override {
    int all = base_->nstreams();
    return streams_ > 0 && streams_ < all ? streams_ : all;
  }
  Doorbell* doorbell() override { return base_->doorbell(); }
  void setWide(bool wide) override { base_->setWide(wide); }
  void setStreams(int s) { streams_ = s; }
  int size() const { return static_cast<int>(members_.size()); }
  int member(int i) const { return members_[i]; }

 private:
  ChannelTable* base_;
  std::vector<int> members_;
  int streams_ = 0;
};

struct CommTopo {
  int rank = 0, nranks = 1;
  int nnodes = 1;
  int node = 0;             // ours; nodes are numbered in the order of their lowest rank, or
                            // leaf by leaf when the fabric is described (fabric_shape.h)
  int localIndex = 0;       // our index among our node's ranks (rank order)
  int localRanks = 1;       // ranks on our node
  bool uniform = true;      // every node has the same number of ranks
  std::vector<int> nodeOf;  // [rank]
  std::vector<std::vector<int>> nodeRanks;       // [node] -> its ranks, ascending
  std::unique_ptr<RankView> ring, intra, inter;  // inter: only when uniform
  int ringPos = 0, intraPos = 0, interPos = 0;   // our index in each view
  TreeLinks ringTree[2], interTree[2];           // our links, in view positions
  // What the tuner needs to know of the trees: the hops of the deepest path of
  // tree 0 (small calls use it alone), split into hops between and inside
  // nodes, and the most bytes one node's link carries each way, per byte of
  // the buffer, with both trees busy (flat: over the ring view; across: the
  // trees over nodes in the hierarchical form).
  int treeInterHops = 0, treeIntraHops = 0, acrossTreeHops = 0;
  double treeLinkLoad = 1, acrossTreeLinkLoad = 1;
  FabricShape fabric;  // the uplinks' share of the cost, where WEFT_FABRIC describes them
  // Two levels across nodes, where the fabric puts our nodes on 2 or more
  // leaves that hold equally many of them (2 or more each): the ranks of our
  // local index on our leaf's nodes (leafNodes), and those at our node's
  // place on every leaf (crossLeaves). Null otherwise.
  std::unique_ptr<RankView> leafNodes, crossLeaves;
  int leafNodesPos = 0, crossLeavesPos = 0;
  // A pod level under crossLeaves, where those leaves sit in 2 or more pods
  // of equally many (2 or more each): crossLeaves' members on our pod's
  // leaves (podLeaves), and those at our leaf's place in every pod
  // (crossPods). Null otherwise.
  std::unique_ptr<RankView> podLeaves, crossPods;
  int podLeavesPos = 0, crossPodsPos = 0;

  // `nodeHash[r]` is rank r's node identity hash; `ringKey[r]` (optional) its
  // GPU's place in the node's topology ring order (topo::ringOrder), or -1.
  // Where every rank of a node has a key, the ring view visits that node's
  // ranks in key order, so consecutive ranks share a PCIe switch. With a
  // fabric, `leafOf[r]` is rank r's leaf in it, and nodes take their places
  // leaf by leaf.
  void build(int myRank, const std::vector<uint64_t>& nodeHash, ChannelTable* channels,
             const std::vector<int>& ringKey = {}, const topo::Fabric* fabricDesc = nullptr,
             const std::vector<int>& leafOf = {});
  // leafNodes and crossLeaves (and podLeaves and crossPods), from each node
  // place's leaf in `fabricDesc` (none without it).
  void buildLeafViews(ChannelTable* channels, const topo::Fabric* fabricDesc,
                      const std::vector<int>& leafOfNode);
  // `base` retargeted to a view in which we are `pos`.
  static CollContext on(const CollContext& base, RankView* view, int pos) {
    CollContext c = base;
    c.channels = view;
    c.rank = pos;
    c.nranks = view->size();
    return c;
  }
};

}  // namespace weft
