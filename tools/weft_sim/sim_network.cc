// Links, routes and max-min fair sharing of the modelled cluster (see
// sim_network.h).
#include "sim_network.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weft {
namespace sim {

std::vector<int> placeNodes(const topo::Fabric& fabric, int nodes, bool cyclic) {
  std::vector<int> out;
  const int L = static_cast<int>(fabric.leaves.size());
  if (cyclic) {
    for (int i = 0; i < nodes; ++i) out.push_back(i % L);
    return out;
  }
  while (static_cast<int>(out.size()) < nodes)
    for (int l = 0; l < L && static_cast<int>(out.size()) < nodes; ++l)
      for (size_t k = 0; k < fabric.leaves[l].nodes.size() && static_cast<int>(out.size()) < nodes;
           ++k)
        out.push_back(l);
  return out;
}

topo::Fabric syntheticFabric(int leaves, int nodesPerLeaf, int leavesPerPod, double nodeGbit,
                             double leafOver, double podOver, int rails) {
  topo::Fabric f;
  f.nodeGbit = nodeGbit;
  f.rails = rails;
  const int perPod = leavesPerPod > 0 ? leavesPerPod : leaves;
  const int pods = (leaves + perPod - 1) / perPod;
  for (int p = 0; p < pods; ++p) {
    double podNodes = static_cast<double>(std::min(perPod, leaves - p * perPod)) * nodesPerLeaf;
    f.pods.push_back(
        {"pod" + std::to_string(p), pods > 1 ? podNodes * rails * nodeGbit / podOver : 0});
  }
  for (int l = 0; l < leaves; ++l) {
    topo::FabricLeaf leaf;
    leaf.name = "leaf" + std::to_string(l);
    leaf.pod = l / perPod;
    // Rail switches of one leaf meet only above it: they have uplinks even alone.
    leaf.uplinkGbit = leaves > 1 || rails > 1 ? nodesPerLeaf * nodeGbit / leafOver : 0;
    for (int k = 0; k < nodesPerLeaf; ++k)
      leaf.nodes.push_back("node" + std::to_string(l * nodesPerLeaf + k));
    f.leaves.push_back(leaf);
  }
  return f;
}

Network::Network(const Cluster& c) : c_(c) {
  const double inf = std::numeric_limits<double>::infinity();
  rankOut_ = numLinks();
  for (int r = 0; r < c.nranks; ++r) add("rank" + std::to_string(r) + ".intra-out", c.intraGBps);
  rankIn_ = numLinks();
  for (int r = 0; r < c.nranks; ++r) add("rank" + std::to_string(r) + ".intra-in", c.intraGBps);
  const int N = c.nnodes();
  auto nodeRate = [&](int n) {
    double slow = n < static_cast<int>(c.nodeSlowdown.size()) ? c.nodeSlowdown[n] : 1;
    return c.fabric.nodeGbit / 8 / slow * c.efficiency;
  };
  // Node links node by node, a NIC's each (rails); leaf uplinks leaf by
  // leaf, a rail switch's each, spine by spine.
  const int R = std::max(1, c.fabric.rails);
  auto nic = [&](int r) { return R > 1 ? ".nic" + std::to_string(r) : std::string(); };
  for (int way = 0; way < 2; ++way) {
    (way == 0 ? nodeUp_ : nodeDown_) = numLinks();
    for (int n = 0; n < N; ++n)
      for (int r = 0; r < R; ++r)
        add("node" + std::to_string(n) + nic(r) + (way == 0 ? ".up" : ".down"), nodeRate(n));
  }
  const int L = static_cast<int>(c.fabric.leaves.size()), S = std::max(1, c.spines);
  auto uplink = [&](double gbit) { return gbit > 0 ? gbit / 8 / S * c.efficiency : inf; };
  auto rail = [&](int r) { return R > 1 ? ".rail" + std::to_string(r) : std::string(); };
  for (int way = 0; way < 2; ++way) {
    (way == 0 ? leafUp_ : leafDown_) = numLinks();
    for (int l = 0; l < L; ++l)
      for (int r = 0; r < R; ++r)
        for (int s = 0; s < S; ++s)
          add(c.fabric.leaves[l].name + rail(r) + (way == 0 ? ".up" : ".down") + std::to_string(s),
              uplink(c.fabric.leaves[l].uplinkGbit));
  }
  const int P = static_cast<int>(c.fabric.pods.size());
  podUp_ = numLinks();
  for (int p = 0; p < P; ++p)
    add(c.fabric.pods[p].name + ".up",
        c.fabric.pods[p].uplinkGbit > 0 ? c.fabric.pods[p].uplinkGbit / 8 * c.efficiency : inf);
  podDown_ = numLinks();
  for (int p = 0; p < P; ++p)
    add(c.fabric.pods[p].name + ".down",
        c.fabric.pods[p].uplinkGbit > 0 ? c.fabric.pods[p].uplinkGbit / 8 * c.efficiency : inf);
}

int Network::add(const std::string& name, double gbps) {
  capacity_.push_back(gbps);
  names_.push_back(name);
  return numLinks() - 1;
}

void Network::route(const Flow& f, std::vector<int>* links, double* latencyUs) const {
  links->clear();
  const int a = c_.nodeOf(f.src), b = c_.nodeOf(f.dst);
  if (a == b) {
    links->push_back(rankOut_ + f.src);
    links->push_back(rankIn_ + f.dst);
    *latencyUs = c_.intraHopUs;
    return;
  }
  const topo::Fabric& fab = c_.fabric;
  const int R = std::max(1, fab.rails), ra = c_.railOf(f.src), rb = c_.railOf(f.dst);
  links->push_back(nodeUp_ + a * R + ra);
  const int la = c_.leafOfNode[a], lb = c_.leafOfNode[b];
  *latencyUs = fab.leafHopUs;
  if (la != lb || ra != rb) {
    // ECMP: the flow's 5-tuple picks one spine; both ends hash alike.
    const int S = std::max(1, c_.spines);
    uint64_t h = (static_cast<uint64_t>(f.src) * 0x9E3779B97F4A7C15ull) ^
                 (static_cast<uint64_t>(f.dst) * 0xC2B2AE3D27D4EB4Full) ^
                 static_cast<uint64_t>(f.stream) * 0x165667B19E3779F9ull;
    h ^= h >> 29;
    const int s = static_cast<int>(h % static_cast<uint64_t>(S));
    links->push_back(leafUp_ + (la * R + ra) * S + s);
    links->push_back(leafDown_ + (lb * R + rb) * S + s);
    *latencyUs += fab.spineHopUs;
    const int pa = fab.leaves[la].pod, pb = fab.leaves[lb].pod;
    if (pa != pb) {
      links->push_back(podUp_ + pa);
      links->push_back(podDown_ + pb);
      *latencyUs += fab.coreHopUs;
    }
  }
  links->push_back(nodeDown_ + b * R + rb);
}

std::vector<double> Network::fairRates(const std::vector<Flow>& flows) const {
  // Progressive filling: every unfrozen flow's rate rises together until a
  // link fills; the flows through it freeze at that rate; repeat.
  const size_t F = flows.size();
  std::vector<std::vector<int>> routes(F);
  double lat = 0;
  for (size_t i = 0; i < F; ++i) route(flows[i], &routes[i], &lat);
  std::vector<double> rate(F, 0), left(capacity_);
  std::vector<int> active(capacity_.size(), 0);
  std::vector<char> frozen(F, 0);
  for (size_t i = 0; i < F; ++i)
    for (int l : routes[i]) ++active[l];
  size_t remaining = F;
  while (remaining > 0) {
    double step = std::numeric_limits<double>::infinity();
    for (size_t l = 0; l < left.size(); ++l)
      if (active[l] > 0 && std::isfinite(left[l])) step = std::min(step, left[l] / active[l]);
    if (!(step < std::numeric_limits<double>::infinity())) break;  // nothing limits them
    std::vector<char> full(left.size(), 0);
    for (size_t l = 0; l < left.size(); ++l) {
      if (active[l] == 0 || !std::isfinite(left[l])) continue;
      left[l] -= step * active[l];
      if (left[l] <= 1e-12 * capacity_[l]) full[l] = 1;
    }
    for (size_t i = 0; i < F; ++i) {
      if (frozen[i]) continue;
      rate[i] += step;
      bool stop = false;
      for (int l : routes[i]) stop = stop || full[l];
      if (!stop) continue;
      frozen[i] = 1;
      --remaining;
      for (int l : routes[i]) --active[l];
    }
  }
  return rate;
}

}  // namespace sim
}  // namespace weft
