// What the rest of weft asks of the machine: load it (live, or the file named
// by WEFT_TOPO_FILE), each GPU's NIC with GDR on/off under WEFT_NET_GDR_LEVEL
// and WEFT_IB_HCA, mapping a CUDA device (PCI bus id) or a verbs device name to
// the topology, the CPUs/NUMA node to bind a progress thread near a GPU, and a
// ring order that keeps GPUs sharing a switch (where any do) next to each other.
#pragma once

#include <string>
#include <vector>

#include "topo/machine.h"
#include "topo/nic_select.h"
#include "weft/weft.h"

namespace weft::topo {

struct Topology {
  Machine machine;
  SelectOptions options;
  std::vector<GpuNic> gpuNics;  // parallel to machine.gpus
};

// Loads `file` (hwloc or NCCL XML), or WEFT_TOPO_FILE when `file` is empty,
// or the live machine when both are empty, and chooses every GPU's NIC with
// the options from the environment.
weftResult_t loadTopology(const std::string& file, Topology* out);

// The live machine (or WEFT_TOPO_FILE), loaded on first use and kept for the
// life of the process (discovery takes tens of milliseconds; communicators are
// created many times). Null, with `whyNot` set, when it cannot be loaded.
const Topology* processTopology(std::string* whyNot);

// Where the GPU named by `gpu` (bus id or OS name) sits in ringOrder() of the
// process topology, or -1 (no GPU named, none loaded, not found).
int gpuRingPosition(const std::string& gpu);

// WEFT_NET_GDR_LEVEL and WEFT_IB_HCA. A malformed level is reported in
// `warning` (and the default PXB used) rather than failing.
SelectOptions selectOptionsFromConfig(std::string* warning);

// Index into machine.gpus of the GPU with this PCI bus id (CUDA's
// "00000000:07:00.0" form is accepted) or OS device name (cuda0, rsmi7: every
// partition of a partitioned GPU maps to its one PCI GPU), or -1.
int findGpu(const Machine& m, const std::string& busIdOrName);
// Index into machine.nics of the NIC with this name (verbs device such as
// mlx5_0, or its network name), or -1.
int findNicByName(const Machine& m, const std::string& name);
// PCI bus id of a verbs device on this machine, from
// /sys/class/infiniband/<name>/device; "" when there is no such device.
std::string verbsDeviceBusId(const std::string& ibvName, const std::string& sysfsRoot = "/sys");

// CPUs and NUMA nodes local to a GPU ("" / empty when unknown).
const Locality* gpuLocality(const Machine& m, int gpu);
// Pins the calling thread to a CPU list such as "0-23,48-71".
weftResult_t bindCurrentThreadToCpus(const std::string& cpuList);

// GPU indexes in an order for rings: by CPU locality, then host bridge, then
// PCI tree position, so GPUs behind one switch are neighbours.
std::vector<int> ringOrder(const Machine& m);
// Whether any two GPUs share a PCIe switch (their path is PIX or PXB): only
// then does ringOrder() have switch neighbours to keep together.
bool gpusShareASwitch(const Machine& m);

}  // namespace weft::topo
