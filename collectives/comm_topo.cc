// Node grouping, views and tree links of a communicator (see comm_topo.h).
#include "collectives/comm_topo.h"

#include <algorithm>
#include <numeric>

namespace weft {
namespace {

void linksAt(int n, int pos, TreeLinks out[2]) {
  for (int t = 0; t < 2; ++t) out[t] = doubleBtree(n, t)[pos];
}

// Over n positions placed on nodes by nodeOfPos: the deepest root-leaf path of
// tree 0 as (hops between nodes, hops inside), and the most tree edges that
// leave one node, both trees counted; each edge carries half the buffer each
// way (up one way, down the other).
void treeShape(int n, const std::vector<int>& nodeOfPos, int* interHops, int* intraHops,
               double* linkLoad) {
  std::vector<TreeLinks> t0 = doubleBtree(n, 0);
  *interHops = *intraHops = 0;
  for (int p = 0; p < n; ++p) {
    int e = 0, i = 0;
    for (int q = p; t0[q].parent >= 0; q = t0[q].parent)
      (nodeOfPos[q] != nodeOfPos[t0[q].parent] ? e : i) += 1;
    if (e > *interHops || (e == *interHops && i > *intraHops)) *interHops = e, *intraHops = i;
  }
  std::vector<int> edges(n, 0);  // indexed by node (node ids are below n)
  for (int t = 0; t < 2; ++t) {
    std::vector<TreeLinks> tr = t == 0 ? t0 : doubleBtree(n, 1);
    for (int p = 0; p < n; ++p) {
      int up = tr[p].parent;
      if (up < 0 || nodeOfPos[p] == nodeOfPos[up]) continue;
      ++edges[nodeOfPos[p]];
      ++edges[nodeOfPos[up]];
    }
  }
  int most = 0;
  for (int e : edges) most = std::max(most, e);
  *linkLoad = most / 2.0;
}

// Node by node; inside a node, ranks in their GPUs' topology order where
// every rank of it has a key (consecutive ranks then share a PCIe switch).
std::vector<int> keyedOrder(const std::vector<std::vector<int>>& nodeRanks,
                            const std::vector<int>& ringKey) {
  std::vector<int> order;
  for (const auto& nr : nodeRanks) {
    std::vector<int> visit = nr;
    const bool keyed = !ringKey.empty() &&
                       std::all_of(nr.begin(), nr.end(), [&](int r) { return ringKey[r] >= 0; });
    if (keyed)
      std::stable_sort(visit.begin(), visit.end(),
                       [&](int a, int b) { return ringKey[a] < ringKey[b]; });
    order.insert(order.end(), visit.begin(), visit.end());
  }
  return order;
}

// On a rail-optimised fabric (nodes of L ranks each): every hop between
// nodes joins ranks of equal local index, so it stays on one rail. Nodes
// alternate direction (enter at 0 and leave at L-1, then the reverse); an odd
// number of nodes cannot alternate all the way round, so there the first
// node enters at 1 and the last leaves at 1 (with L >= 3; with L = 2 one hop
// changes rail). The GPUs' topology keys are not used: on such machines each
// GPU has its own NIC beside it, and their links inside the node are alike.
std::vector<int> railAlignedOrder(const std::vector<std::vector<int>>& nodeRanks) {
  const int N = static_cast<int>(nodeRanks.size());
  const int L = static_cast<int>(nodeRanks[0].size());
  std::vector<int> order;
  for (int k = 0; k < N; ++k) {
    std::vector<int> local(L);
    std::iota(local.begin(), local.end(), 0);
    if (k % 2 == 1) std::reverse(local.begin(), local.end());
    if (N % 2 == 1 && N > 1 && L >= 3 && k == 0) std::swap(local[0], local[1]);  // 1 0 2 ..
    if (N % 2 == 1 && N > 1 && L >= 3 && k == N - 1)
      std::rotate(local.begin() + 1, local.begin() + 2, local.end());  // 0 2 .. L-1 1
    for (int i : local) order.push_back(nodeRanks[k][i]);
  }
  return order;
}

}  // namespace

void CommTopo::build(int myRank, const std::vector<uint64_t>& nodeHash, ChannelTable* channels,
                     const std::vector<int>& ringKey, const topo::Fabric* fabricDesc,
                     const std::vector<int>& leafOf) {
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
  const bool described =
      fabricDesc != nullptr && !fabricDesc->empty() && static_cast<int>(leafOf.size()) == nranks;
  std::vector<int> leafOfNode;
  if (described) {
    for (const auto& nr : nodeRanks) leafOfNode.push_back(leafOf[nr[0]]);
    std::vector<int> placeOf = fabricNodeOrder(*fabricDesc, leafOfNode);
    std::vector<std::vector<int>> sorted;
    std::vector<int> sortedLeaf;
    for (int old : placeOf) {
      sorted.push_back(nodeRanks[old]);
      sortedLeaf.push_back(leafOfNode[old]);
    }
    nodeRanks.swap(sorted);
    leafOfNode.swap(sortedLeaf);
    for (int k = 0; k < nnodes; ++k)
      for (int r : nodeRanks[k]) nodeOf[r] = k;
  }
  node = nodeOf[rank];
  const std::vector<int>& mine = nodeRanks[node];
  localRanks = static_cast<int>(mine.size());
  localIndex = static_cast<int>(std::find(mine.begin(), mine.end(), rank) - mine.begin());
  uniform = true;
  for (const auto& nr : nodeRanks) uniform = uniform && nr.size() == mine.size();

  const bool railed = described && uniform && fabricDesc->rails > 1;
  const std::vector<int> order =
      railed ? railAlignedOrder(nodeRanks) : keyedOrder(nodeRanks, ringKey);
  ringPos = static_cast<int>(std::find(order.begin(), order.end(), rank) - order.begin());
  ring = std::make_unique<RankView>(channels, order);
  intra = std::make_unique<RankView>(channels, mine);
  intraPos = localIndex;
  linksAt(nranks, ringPos, ringTree);
  std::vector<int> nodeOfPos;
  for (int r : order) nodeOfPos.push_back(nodeOf[r]);
  treeShape(nranks, nodeOfPos, &treeInterHops, &treeIntraHops, &treeLinkLoad);
  fabric = FabricShape();
  if (described) {
    std::vector<int> leafOfPos, railOfPos;
    for (int r : order) {
      leafOfPos.push_back(leafOf[r]);
      if (!railed) continue;
      const std::vector<int>& nr = nodeRanks[nodeOf[r]];
      const int local = static_cast<int>(std::find(nr.begin(), nr.end(), r) - nr.begin());
      railOfPos.push_back(fabricDesc->railOf(local, localRanks));
    }
    fabric = fabricShape(*fabricDesc, leafOfPos, leafOfNode, railOfPos, nodeOfPos);
  }
  inter.reset();
  if (uniform) {
    std::vector<int> same;
    for (const auto& nr : nodeRanks) same.push_back(nr[localIndex]);
    inter = std::make_unique<RankView>(channels, same);
    interPos = node;
    linksAt(nnodes, interPos, interTree);
    std::vector<int> nodes;
    for (int k = 0; k < nnodes; ++k) nodes.push_back(k);
    int intraUnused = 0;
    treeShape(nnodes, nodes, &acrossTreeHops, &intraUnused, &acrossTreeLinkLoad);
  }
  buildLeafViews(channels, uniform && described ? fabricDesc : nullptr, leafOfNode);
}

namespace {

// Splits consecutive items into runs of equal key; false unless there are 2
// or more runs, all of one length of 2 or more.
bool equalRuns(const std::vector<int>& keys, std::vector<std::vector<int>>* runs) {
  runs->clear();
  for (size_t k = 0; k < keys.size(); ++k) {
    if (k == 0 || keys[k] != keys[k - 1]) runs->emplace_back();
    runs->back().push_back(static_cast<int>(k));
  }
  if (runs->size() < 2 || (*runs)[0].size() < 2) return false;
  for (const auto& r : *runs)
    if (r.size() != (*runs)[0].size()) return false;
  return true;
}

}  // namespace

// Nodes sit leaf by leaf and leaves pod by pod (fabricNodeOrder), so a
// leaf's nodes are consecutive, and so are a pod's leaves in crossLeaves.
void CommTopo::buildLeafViews(ChannelTable* channels, const topo::Fabric* fabricDesc,
                              const std::vector<int>& leafOfNode) {
  leafNodes.reset();
  crossLeaves.reset();
  podLeaves.reset();
  crossPods.reset();
  std::vector<std::vector<int>> groups;  // node places, leaf by leaf
  if (fabricDesc == nullptr || !equalRuns(leafOfNode, &groups)) return;
  const size_t per = groups[0].size();
  int mine = 0, place = 0;
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t p = 0; p < per; ++p)
      if (groups[g][p] == node) mine = static_cast<int>(g), place = static_cast<int>(p);
  std::vector<int> leaf, cross, podOfCross;
  for (int k : groups[mine]) leaf.push_back(nodeRanks[k][localIndex]);
  for (const auto& g : groups) {
    cross.push_back(nodeRanks[g[place]][localIndex]);
    podOfCross.push_back(fabricDesc->leaves[leafOfNode[g[0]]].pod);
  }
  leafNodes = std::make_unique<RankView>(channels, leaf);
  crossLeaves = std::make_unique<RankView>(channels, cross);
  leafNodesPos = place;
  crossLeavesPos = mine;
  std::vector<std::vector<int>> pods;  // positions in crossLeaves, pod by pod
  if (!equalRuns(podOfCross, &pods)) return;
  const int perPod = static_cast<int>(pods[0].size());
  const int myPod = mine / perPod, atPlace = mine % perPod;
  std::vector<int> inPod, acrossPods;
  for (int j : pods[myPod]) inPod.push_back(cross[j]);
  for (const auto& p : pods) acrossPods.push_back(cross[p[atPlace]]);
  podLeaves = std::make_unique<RankView>(channels, inPod);
  crossPods = std::make_unique<RankView>(channels, acrossPods);
  podLeavesPos = atPlace;
  crossPodsPos = myPod;
}

}  // namespace weft
