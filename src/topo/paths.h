// The path between two devices of a Machine: its class (PIX ... SYS), its
// bottleneck PCIe bandwidth and how many PCI bridges it crosses.
#pragma once

#include "topo/machine.h"

namespace weft::topo {

struct PathInfo {
  PathClass cls = PathClass::kSYS;
  double gbps = 0;  // slowest known PCIe link on the path; 0 = no link speed known
  int bridges = 0;  // PCI bridge nodes on the path (the hop count used to break ties)
};

// Path between two PCI devices (indexes into m.pci). They must differ.
PathInfo pciPath(const Machine& m, int a, int b);
// Path between a GPU and a NIC; a NIC without a PCI node is placed at its CPU.
PathInfo gpuNicPath(const Machine& m, const Gpu& gpu, const Nic& nic);
// Class of a path that leaves the PCI tree on both ends, by the CPU side of
// each end (indexes into m.localities, -1 unknown): NODE within one NUMA node,
// PKG between NUMA nodes of one package, else SYS.
PathClass cpuPathClass(const Machine& m, int localityA, int localityB);

}  // namespace weft::topo
