// The machine as weft sees it, whatever it was read from (live hwloc, an hwloc
// XML file, an NCCL/RCCL topology file): the PCI tree of bridges and devices,
// where each tree meets the CPUs (host bridge, NUMA locality), the GPUs and the
// NICs. Loaders fill it; paths.h and nic_select.h answer questions about it.
#pragma once

#include <string>
#include <vector>

#include "topo/pci.h"

namespace weft::topo {

// Distance classes of a PCIe path, nearest first (NCCL's names, plus PKG:
// NCCL counts every path between NUMA nodes as SYS, but on machines with
// several NUMA nodes per socket crossing to a sibling node stays inside the
// package and is nearer than crossing to the other socket).
enum class PathClass {
  kPIX = 1,   // through at most one PCIe switch
  kPXB = 2,   // through several switches/bridges, no host bridge
  kPHB = 3,   // through a PCIe host bridge (root complex)
  kNODE = 4,  // between host bridges of one NUMA node
  kPKG = 5,   // between NUMA nodes of one package (socket)
  kSYS = 6,   // between packages, or where the package is unknown
};
const char* pathClassName(PathClass cls);
// Accepts the names (any case) or their numbers 1-6.
bool parsePathClass(const std::string& text, PathClass* out);

// The two file formats draw a PCIe switch differently, so PIX is told apart
// from PXB by a rule that depends on where the tree came from.
enum class SwitchModel {
  // hwloc shows PCIe ports: a switch is an upstream port over downstream ports,
  // so two devices are in one switch when each is at most one bridge below
  // their common bridge.
  kPorts,
  // NCCL/RCCL files: every <pci> bridge node counts (NCCL's own rule), so PIX
  // is two devices directly under one bridge node and anything deeper is PXB.
  kBridgeNodes,
};

// The CPU side of a device: the NUMA node(s) and CPUs it is local to.
struct Locality {
  std::string cpus;            // list form, e.g. "0-23,48-71"; "" when unknown
  std::vector<int> numaNodes;  // OS indexes
  int package = -1;            // OS index, -1 when unknown (NCCL files never say)
};

// A PCI bridge or device. Indexes refer to Machine::pci / localities.
struct PciNode {
  std::string busId;  // canonical "dddd:bb:dd.f"
  PciAddress addr;
  bool bridge = false;
  uint32_t classId = 0;  // 16-bit base+sub class, e.g. 0x0302
  int vendor = -1;       // -1: not in the source
  int device = -1;
  double linkGBps = 0;  // this node's link towards its parent; 0 = unknown
  int parent = -1;      // -1: top of a tree (hangs off a host bridge or CPU)
  int depth = 0;        // number of PCI bridges above this node
  int hostBridge = -1;  // trees with the same value share a host bridge
  int locality = -1;
};

struct Gpu {
  int pci = -1;
  std::vector<std::string> osDevices;  // cuda0, nvml0, rsmi3, opencl0d1, card1, ...
  std::string label;                   // NCCL "dev N", else the first OS device, else ""
  bool gdrCapable = true;              // false only when the file says gdr="0"
};

struct Nic {
  std::string name;        // RDMA device (mlx5_0), else network device (hsi0), else bus id
  int pci = -1;            // -1: the file gives no PCI device (a virtual NIC)
  std::vector<int> ports;  // port numbers when known (NCCL port=, hwloc PortN infos)
  NicKind kind = NicKind::kNone;
  int locality = -1;       // for NICs without a PCI node
  bool gdrCapable = true;  // false only when the file says gdr="0"
  std::vector<std::string> osDevices;
};

struct Machine {
  std::string source;  // "live" or the file path
  std::string format;  // e.g. "hwloc XML 2.0", "NCCL topology XML (version 1)"
  SwitchModel switches = SwitchModel::kPorts;
  std::vector<PciNode> pci;
  std::vector<Locality> localities;
  int hostBridges = 0;
  std::vector<Gpu> gpus;           // in bus order
  std::vector<Nic> nics;           // RDMA NICs and Ethernet ports, in bus order then name
  std::vector<std::string> notes;  // things a reader should know (skipped devices...)

  const PciNode* pciOf(const Gpu& g) const { return g.pci >= 0 ? &pci[g.pci] : nullptr; }
  const PciNode* pciOf(const Nic& n) const { return n.pci >= 0 ? &pci[n.pci] : nullptr; }
  int localityOf(const Nic& n) const { return n.pci >= 0 ? pci[n.pci].locality : n.locality; }
};

// Sorts gpus and nics into bus order (NICs of one device by name); loaders call it last.
void sortDevices(Machine* m);

}  // namespace weft::topo
