// Node grouping, views and tree links of a communicator (see comm_topo.h).
#include "collectives/comm_topo.h"

#include <algorithm>

namespace weft {
namespace {

void linksAt(int n, int pos, TreeLinks out[2]) {
  for (int t = 0; t < 2; ++t) out[t] = doubleBtree(n, t)[pos];
}

}  // namespace

void CommTopo::build(int myRank, const std::vector<uint64_t>& nodeHash, ChannelTable* channels) {
  rank = myRank;
  nranks = static_cast<int>(nodeHash.size());
  nodeOf.assign(nranks, -1);
  nodeRanks.clear();
  for (int r = 0; r < nranks; ++r) {
    if (nodeOf[r] >= 0) continue;
    int id = static_cast<int>(nodeRanks.size());
    nodeRanks.emplace_back();
    for (int q = r; q < nranks; ++q) {
      if (nodeHash[q] != nodeHash[r]) continue;
      nodeOf[q] = id;
      nodeRanks[id].push_back(q);
    }
  }
  nnodes = static_cast<int>(nodeRanks.size());
  node = nodeOf[rank];
  const std::vector<int>& mine = nodeRanks[node];
  localRanks = static_cast<int>(mine.size());
  localIndex = static_cast<int>(std::find(mine.begin(), mine.end(), rank) - mine.begin());
  uniform = true;
  for (const auto& nr : nodeRanks) uniform = uniform && nr.size() == mine.size();

  std::vector<int> order;
  for (const auto& nr : nodeRanks) order.insert(order.end(), nr.begin(), nr.end());
  ringPos = static_cast<int>(std::find(order.begin(), order.end(), rank) - order.begin());
  ring = std::make_unique<RankView>(channels, order);
  intra = std::make_unique<RankView>(channels, mine);
  intraPos = localIndex;
  linksAt(nranks, ringPos, ringTree);
  inter.reset();
  if (uniform) {
    std::vector<int> same;
    for (const auto& nr : nodeRanks) same.push_back(nr[localIndex]);
    inter = std::make_unique<RankView>(channels, same);
    interPos = node;
    linksAt(nnodes, interPos, interTree);
  }
}

}  // namespace weft
