// Which RDMA device one rank uses, and which CPUs its progress thread should
// run on. The verbs transport lists the devices with an active port (after
// WEFT_IB_HCA); this picks among them with the machine's topology:
//   - a rank that drives a GPU (WEFT_RANK_GPU) takes that GPU's nearest NIC
//     (topo::chooseNics: path class, then bandwidth, ties spread over GPUs);
//   - a rank without a GPU takes a device local to the CPUs it may run on,
//     and the ranks of a node spread over the equally near devices by their
//     local index, so a multi-rail CPU job uses every rail;
//   - without a topology (none loaded: only a GPU rank needs one; hwloc
//     failed; devices it does not know), the kernel's local CPU list of each
//     device stands in, and failing that the local index alone spreads the
//     ranks over the devices.
// Pure: every input is given, so the rules are tested on topology files.
#pragma once

#include <string>
#include <vector>

#include "topo/topology.h"

namespace weft::topo {

struct RankNicRequest {
  std::vector<std::string> candidates;  // usable verbs devices, discovery order
  std::string gpu;                      // bus id or OS name of this rank's GPU; "" = none
  int localIndex = 0;                   // this rank among its node's ranks
  int localRanks = 1;
  std::string allowedCpus;  // the CPUs this process may run on ("0-3,8"); "" = unknown
  // Per candidate, the CPUs local to it as the kernel says (sysfs
  // local_cpulist; "" unknown): used where the topology does not place it.
  std::vector<std::string> candidateCpus;
};

struct RankNicChoice {
  int index = 0;         // into RankNicRequest::candidates
  std::string reason;    // one sentence for WEFT_DEBUG=INFO
  bool gdr = false;      // GPUDirect RDMA allowed for this rank's GPU and NIC
  std::string nearCpus;  // CPUs local to the chosen GPU or NIC, within allowedCpus; "" = don't bind
};

// `topo` may be null (then `topoWhyNot` says why there is none).
RankNicChoice chooseRankNic(const Topology* topo, const std::string& topoWhyNot,
                            const RankNicRequest& req);

// CPU list text ("0-3,8,10-11") to sorted CPU numbers, and back. Malformed
// parts are skipped: lists come from the kernel, hwloc or topology files.
std::vector<int> parseCpuList(const std::string& text);
std::string formatCpuList(const std::vector<int>& cpus);
// The CPUs in both lists ("" when none, or when either is unknown).
std::string intersectCpuLists(const std::string& a, const std::string& b);
// This process's CPU affinity as a list.
std::string currentCpuAffinity();
// The CPUs local to a verbs device, from /sys/class/infiniband/NAME/device/
// local_cpulist ("" when the device has no PCI parent, as Soft-RoCE).
std::string verbsDeviceLocalCpus(const std::string& ibvName, const std::string& sysfsRoot = "/sys");

}  // namespace weft::topo
