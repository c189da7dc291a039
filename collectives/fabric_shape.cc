// Fabric order and loads (see fabric_shape.h).
#include "collectives/fabric_shape.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "collectives/tree_schedule.h"

namespace weft {
namespace {

// What one uplink of `group` carries, per unit of a node link, when `flows`
// flows of one node link's rate each want to cross it.
double uplinkLoad(double flows, double nodeGbit, double uplinkGbit) {
  return uplinkGbit > 0 ? flows * nodeGbit / uplinkGbit : 0;
}

// The worst uplink load, leaves and pods, of per-leaf crossing counts.
double worstLoad(const topo::Fabric& f, const std::vector<double>& perLeaf,
                 const std::vector<double>& perPod) {
  double worst = 0;
  for (size_t l = 0; l < perLeaf.size(); ++l)
    worst = std::max(worst, uplinkLoad(perLeaf[l], f.nodeGbit, f.leaves[l].uplinkGbit));
  for (size_t p = 0; p < perPod.size(); ++p)
    worst = std::max(worst, uplinkLoad(perPod[p], f.nodeGbit, f.pods[p].uplinkGbit));
  return worst;
}

// Where each position sits: its leaf, and (on a rail-optimised fabric) its
// node and its rail; without those, every position is a node of rail 0.
struct Places {
  const std::vector<int>& leaf;
  const std::vector<int>& rail;
  const std::vector<int>& node;
  // Whether a hop from position i to j leaves i's switch (its leaf's, or its
  // rail's switch of that leaf): between nodes, to another leaf or rail.
  bool crosses(size_t i, size_t j) const {
    if (leaf[i] != leaf[j]) return true;
    if (rail.empty()) return false;
    return node[i] != node[j] && rail[i] != rail[j];
  }
};

// Ring hops (position i to i+1, around) that leave each leaf and each pod.
double ringLoadOf(const topo::Fabric& f, const Places& at) {
  std::vector<double> leaf(f.leaves.size(), 0), pod(f.pods.size(), 0);
  const size_t n = at.leaf.size();
  for (size_t i = 0; i < n && n > 1; ++i) {
    int a = at.leaf[i], b = at.leaf[(i + 1) % n];
    if (!at.crosses(i, (i + 1) % n)) continue;
    leaf[a] += 1;
    if (f.leaves[a].pod != f.leaves[b].pod) pod[f.leaves[a].pod] += 1;
  }
  return std::max(1.0, worstLoad(f, leaf, pod));
}

// Edges of both trees that cross each uplink; each carries half the buffer
// each way (up one tree, down the other), as in comm_topo.cc's treeShape.
double treeLoadOf(const topo::Fabric& f, const Places& at) {
  const int n = static_cast<int>(at.leaf.size());
  std::vector<double> leaf(f.leaves.size(), 0), pod(f.pods.size(), 0);
  for (int t = 0; t < 2 && n > 1; ++t) {
    std::vector<TreeLinks> tree = doubleBtree(n, t);
    for (int p = 0; p < n; ++p) {
      int up = tree[p].parent;
      if (up < 0 || !at.crosses(p, up)) continue;
      int a = at.leaf[p], b = at.leaf[up];
      leaf[a] += 0.5;
      leaf[b] += 0.5;
      if (f.leaves[a].pod == f.leaves[b].pod) continue;
      pod[f.leaves[a].pod] += 0.5;
      pod[f.leaves[b].pod] += 0.5;
    }
  }
  return worstLoad(f, leaf, pod);
}

// Recursive doubling's steps over the first 2^m node positions: at step k
// each swaps with the position whose index differs in bit k; those whose
// partner sits on another leaf (pod) load its uplink together.
std::vector<double> pairStepLoads(const topo::Fabric& f, const std::vector<int>& leafOfNodePos) {
  const int n = static_cast<int>(leafOfNodePos.size());
  int p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  std::vector<double> loads;
  for (int bit = 1; bit < p2; bit *= 2) {
    std::vector<double> leaf(f.leaves.size(), 0), pod(f.pods.size(), 0);
    for (int p = 0; p < p2; ++p) {
      const int a = leafOfNodePos[p], b = leafOfNodePos[p ^ bit];
      if (a == b) continue;
      leaf[a] += 1;
      if (f.leaves[a].pod != f.leaves[b].pod) pod[f.leaves[a].pod] += 1;
    }
    loads.push_back(std::max(1.0, worstLoad(f, leaf, pod)));
  }
  return loads;
}

}  // namespace

std::vector<int> fabricNodeOrder(const topo::Fabric& fabric, const std::vector<int>& leafOfNode) {
  std::vector<int> order(leafOfNode.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    int la = leafOfNode[a], lb = leafOfNode[b];
    int pa = fabric.leaves[la].pod, pb = fabric.leaves[lb].pod;
    return pa != pb ? pa < pb : la < lb;
  });
  return order;
}

FabricShape fabricShape(const topo::Fabric& fabric, const std::vector<int>& leafOfPos,
                        const std::vector<int>& leafOfNodePos, const std::vector<int>& railOfPos,
                        const std::vector<int>& nodeOfPos) {
  const std::vector<int> none;
  const Places ranks{leafOfPos, railOfPos, nodeOfPos}, nodes{leafOfNodePos, none, none};
  FabricShape s;
  s.known = true;
  s.nics = std::max(1, fabric.rails);
  std::vector<int> leaves(leafOfNodePos), pods;
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  for (int l : leaves) pods.push_back(fabric.leaves[l].pod);
  std::sort(pods.begin(), pods.end());
  pods.erase(std::unique(pods.begin(), pods.end()), pods.end());
  for (int l : leaves) s.uplinkOversub = std::max(s.uplinkOversub, fabric.leafOversubscription(l));
  s.leaves = static_cast<int>(leaves.size());
  s.pods = static_cast<int>(pods.size());
  // Rings over nodes cross where the nodes' leaves change; the flat ring also
  // where it changes rail between nodes (it is no lighter than the former).
  s.ringLoad =
      std::max(ringLoadOf(fabric, nodes), railOfPos.empty() ? 1.0 : ringLoadOf(fabric, ranks));
  s.treeLoad = treeLoadOf(fabric, ranks);
  s.acrossTreeLoad = treeLoadOf(fabric, nodes);
  // Every node of a leaf sending off it at once: its oversubscription.
  std::vector<double> leaf(fabric.leaves.size(), 0), pod(fabric.pods.size(), 0);
  if (s.leaves > 1)
    for (int l : leafOfNodePos) leaf[l] += 1;
  if (s.pods > 1)
    for (int l : leafOfNodePos) pod[fabric.leaves[l].pod] += 1;
  s.pairLoad = std::max(1.0, worstLoad(fabric, leaf, pod));
  s.pairStepLoad = pairStepLoads(fabric, leafOfNodePos);
  // Rings across leaves (one per node place, leaves in pod order) leave each
  // leaf once per node on it, and each pod once per node of its fullest leaf.
  std::vector<double> podRings(fabric.pods.size(), 0);
  if (s.pods > 1)
    for (size_t l = 0; l < leaf.size(); ++l)
      podRings[fabric.leaves[l].pod] = std::max(podRings[fabric.leaves[l].pod], leaf[l]);
  s.crossLeafLoad = std::max(1.0, worstLoad(fabric, leaf, podRings));
  // Rings among a pod's leaves stay under its core link; rings across pods
  // (one per node of a pod) leave each pod once per node in it.
  s.podLeafLoad = std::max(1.0, worstLoad(fabric, leaf, {}));
  s.crossPodLoad = std::max(1.0, worstLoad(fabric, leaf, pod));
  return s;
}

std::string FabricShape::describe() const {
  if (!known) return "no fabric description (WEFT_FABRIC unset): uplinks not modelled";
  std::string steps;
  for (size_t k = 0; k < pairStepLoad.size() && k < 20; ++k) {
    char one[16];
    std::snprintf(one, sizeof(one), "%s%.2f", k == 0 ? "" : " ", pairStepLoad[k]);
    steps += one;
  }
  char text[320];
  std::snprintf(text, sizeof(text),
                "fabric: %d leaf(s) in %d pod(s); uplink load ring %.2f, tree %.2f, tree over "
                "nodes %.2f, pairwise %.2f (by step: %s), across leaves %.2f, across pods %.2f "
                "(1 = no slower than a node link)",
                leaves, pods, ringLoad, treeLoad, acrossTreeLoad, pairLoad,
                steps.empty() ? "-" : steps.c_str(), crossLeafLoad, crossPodLoad);
  return text;
}

}  // namespace weft
