// The modelled cluster of weft-sim: ranks on nodes, nodes on the leaves and
// pods of a fabric description (topo/fabric.h), and the links a flow
// crosses. Each node has one link to its leaf (node_gbit, each way), or on a
// rail-optimised fabric one per NIC, to its leaf's switch of that rail (a
// hop between nodes on different rails then goes up through the spine); ranks of
// one node reach each other over an intra-node link of their own (NVLink or
// shared memory: intraGBps each way per rank). A leaf's uplink is split over
// `spines` parallel links and a flow between leaves is hashed onto one (ECMP),
// so flows can collide as they do on a real fabric. Rates are shared max-min
// fairly (progressive filling).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topo/fabric.h"

namespace weft {
namespace sim {

struct Cluster {
  topo::Fabric fabric;
  int nranks = 0;
  int ppn = 1;                  // ranks per node: rank r is on node r / ppn
  std::vector<int> leafOfNode;  // index into fabric.leaves
  double intraGBps = 100;       // per rank, each way
  double intraHopUs = 1;
  int spines = 1;                    // parallel uplinks per leaf (ECMP)
  std::vector<double> nodeSlowdown;  // [node] link rate divisor (slow links), 1 = nominal
  bool blind = false;                // place rings and trees as if WEFT_FABRIC were unset
  double efficiency = 1;  // payload share of a network link's line rate (TCP over Ethernet ~0.95)
  std::vector<double> lateUs;  // [rank] when it enters the call (stragglers; exact mode)

  int nodeOf(int rank) const { return rank / ppn; }
  int railOf(int rank) const { return fabric.railOf(rank % ppn, ppn); }
  int nnodes() const { return (nranks + ppn - 1) / ppn; }
};

// `nodes` nodes placed on the fabric's leaves in its file order, filling each
// leaf's listed nodes in turn (a leaf with k names takes k nodes); nodes past
// the listed ones wrap around. `cyclic`: node i goes to leaf i % leaves instead.
std::vector<int> placeNodes(const topo::Fabric& fabric, int nodes, bool cyclic);

// A synthetic fabric: `leaves` leaves (in pods of `leavesPerPod`, 0 = one
// pod) of `nodesPerLeaf` nodes each, node links `nodeGbit`, leaf uplinks
// oversubscribed `leafOver`:1 and pod uplinks `podOver`:1. With `rails` > 1,
// every node has that many NICs of `nodeGbit`, each leaf a switch per rail.
topo::Fabric syntheticFabric(int leaves, int nodesPerLeaf, int leavesPerPod, double nodeGbit,
                             double leafOver, double podOver, int rails = 1);

struct Flow {
  int src = 0, dst = 0, stream = 0;
};

class Network {
 public:
  explicit Network(const Cluster& c);
  // The links a flow crosses, and its one-way latency (us).
  void route(const Flow& f, std::vector<int>* links, double* latencyUs) const;
  // Max-min fair rates (GB/s) of flows that are all active at once.
  std::vector<double> fairRates(const std::vector<Flow>& flows) const;
  // Per link: bytes it carries for the given flows and bytes per flow, over
  // its capacity (us of busy time); and its name.
  double capacity(int link) const { return capacity_[link]; }
  const std::string& name(int link) const { return names_[link]; }
  int numLinks() const { return static_cast<int>(capacity_.size()); }

 private:
  int add(const std::string& name, double gbps);
  const Cluster& c_;
  std::vector<double> capacity_;  // GB/s
  std::vector<std::string> names_;
  int rankOut_ = 0, rankIn_ = 0, nodeUp_ = 0, nodeDown_ = 0, leafUp_ = 0, leafDown_ = 0, podUp_ = 0,
      podDown_ = 0;
};

}  // namespace sim
}  // namespace weft
