// How the fabric above the nodes (topo/fabric.h, WEFT_FABRIC) shapes a
// communicator: the order its nodes take in rings and trees (leaf by leaf,
// pod by pod, so that a ring leaves each leaf once), and how much the shared
// uplinks slow each algorithm down, for the tuner. Loads are in units of a
// node's own link: 1 means the uplinks are no bottleneck; 2 means the busiest
// uplink gives each flow through it half a node link's rate.
#pragma once

#include <string>
#include <vector>

#include "topo/fabric.h"

namespace weft {

struct FabricShape {
  bool known = false;
  int leaves = 0, pods = 0;   // in use by this communicator
  int nics = 1;               // a node's links to its leaf (rails), shared by its ranks
  double uplinkOversub = 1;   // the most oversubscribed uplink of the leaves in use
  double ringLoad = 1;        // rings over the nodes (flat or hierarchical)
  double treeLoad = 0;        // double binary tree over every rank: bytes per byte of buffer
  double acrossTreeLoad = 0;  // the same over the nodes (hierarchical tree)
  double pairLoad = 1;        // recursive doubling and halving-doubling: all of a leaf at once
  // The same per step k over the nodes in their order (partners 2^k places
  // apart: the near steps stay inside a leaf); empty: pairLoad for all.
  // The fold of a count that is not a power of two is not followed.
  std::vector<double> pairStepLoad;
  double crossLeafLoad = 1;  // rings across leaves, one per node place (hier-leaf)
  double podLeafLoad = 1;    // the same among one pod's leaves (hier-leaf's pod level)
  double crossPodLoad = 1;   // rings across pods, one per node place and leaf of a pod
  std::string describe() const;
};

// A renumbering of the nodes: order[k] is the node that takes place k.
// Nodes are grouped by pod, then by leaf (file order), keeping their order
// inside a leaf. `leafOfNode[node]` indexes fabric.leaves.
std::vector<int> fabricNodeOrder(const topo::Fabric& fabric, const std::vector<int>& leafOfNode);

// The loads of rings and trees whose positions sit on the leaves
// `leafOfPos` (every rank in ring order) and `leafOfNodePos` (one per node,
// in node order). On a rail-optimised fabric, `railOfPos` and `nodeOfPos`
// give each ring position's rail and node: a hop between nodes that changes
// rail leaves the rail's switch as a hop to another leaf does.
FabricShape fabricShape(const topo::Fabric& fabric, const std::vector<int>& leafOfPos,
                        const std::vector<int>& leafOfNodePos,
                        const std::vector<int>& railOfPos = {},
                        const std::vector<int>& nodeOfPos = {});

}  // namespace weft
