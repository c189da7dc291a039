// The network above the nodes (WEFT_FABRIC): which leaf switch each node
// hangs from, which pod each leaf belongs to, and the rates of the links that
// are shared. A CLOS fabric is usually oversubscribed above the leaf (a leaf
// has less uplink than its nodes have links), so the schedules keep traffic
// under one leaf, then one pod, wherever they can (collectives/comm_topo.h).
//
// The file is JSON (docs/scale.md has the full format):
//   {"node_gbit": 400,
//    "hop_latency_us": {"leaf": 1, "spine": 2, "core": 3},
//    "pods": [{"name": "p0", "uplink_gbit": 6400}],
//    "leaves": [{"name": "l0", "pod": "p0", "uplink_gbit": 1600,
//                "nodes": ["node001", "10.0.0.2"]}]}
// A leaf may give "oversubscription" (nodes' link total / uplink) instead of
// "uplink_gbit". "rails": R describes a rail-optimised fabric: every node has
// R NICs, and NIC r of each node of a leaf hangs from that leaf's rail-r
// switch, so a leaf entry stands for R switches, each with the leaf's
// uplink; node_gbit is then each NIC's rate. The rank of local index i uses
// NIC i * R / (ranks on its node), as the nearest-NIC choice gives on such
// machines (GPU i beside NIC i). A node entry is a host name (with or without its domain) or
// the address a rank listens on; WEFT_FABRIC_NODE names the node explicitly.
// Every rank must read the same description: its hash is compared at init.
// A Slurm topology.conf is read too (leaves and pods only: fabric_slurm.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft {
namespace topo {

struct FabricPod {
  std::string name;
  double uplinkGbit = 0;  // 0: not limited (a single pod, or a non-blocking core)
};

struct FabricLeaf {
  std::string name;
  int pod = 0;  // index into Fabric::pods
  double uplinkGbit = 0;
  std::vector<std::string> nodes;
};

struct Fabric {
  double nodeGbit = 0;  // each node's link to its leaf (with rails: each NIC's)
  int rails = 1;        // NICs per node, each on its own rail switch of the leaf
  double leafHopUs = 1, spineHopUs = 1, coreHopUs = 1;
  std::vector<FabricPod> pods;  // at least one
  std::vector<FabricLeaf> leaves;
  uint64_t hash = 0;  // of the text it was read from

  bool empty() const { return leaves.empty(); }
  // The leaf that lists any of `names`, or -1.
  int findLeaf(const std::vector<std::string>& names) const;
  // Nodes' link total over uplink, for leaf `l` (1 when not oversubscribed).
  double leafOversubscription(int l) const;
  // The rail of the rank of local index `local` among `localRanks` (0 without rails).
  int railOf(int local, int localRanks) const {
    return rails <= 1 || localRanks <= 0 ? 0 : local * rails / localRanks;
  }
  // "2 leaves in 1 pod, leaf uplinks 2:1 oversubscribed": for logs.
  std::string summary() const;
};

// Parses a description; false with *why set when it is not a valid one.
bool parseFabric(const std::string& text, Fabric* out, std::string* why);

// Reads Slurm's topology.conf (fabric_slurm.cc): leaves and pods, no rates.
bool parseSlurmTopology(const std::string& text, Fabric* out, std::string* why);

// Reads and parses `path`: JSON when it starts with '{', else Slurm's
// topology.conf (weftInvalidArgument naming WEFT_FABRIC and the fault).
weftResult_t loadFabric(const std::string& path, Fabric* out);

// The names this process's node may have in a description: WEFT_FABRIC_NODE
// when set, else the host name, its first label, and `address` (the host
// part of the rank's listening address).
std::vector<std::string> fabricNamesOfThisNode(const std::string& address);

}  // namespace topo
}  // namespace weft
