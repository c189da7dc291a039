// Path classes and bottleneck bandwidth between devices (see paths.h).
//
// Each node's linkGBps is the link towards its parent, so the links of a path
// are those of every node from either end up to, but not including, the
// common ancestor. Links of unknown speed (0) are skipped.
#include "topo/paths.h"

#include <vector>

namespace weft::topo {
namespace {

// n, its parent, its grandparent ... up to the top of its tree.
std::vector<int> chainUp(const Machine& m, int n) {
  std::vector<int> chain;
  for (; n >= 0; n = m.pci[n].parent) chain.push_back(n);
  return chain;
}

// The slowest known link among chain[0 .. count-1].
void takeLinks(const Machine& m, const std::vector<int>& chain, size_t count, double* slowest) {
  for (size_t i = 0; i < count && i < chain.size(); ++i) {
    double gbps = m.pci[chain[i]].linkGBps;
    if (gbps > 0 && (*slowest <= 0 || gbps < *slowest)) *slowest = gbps;
  }
}

}  // namespace

PathInfo pciPath(const Machine& m, int a, int b) {
  std::vector<int> upA = chainUp(m, a);
  std::vector<int> upB = chainUp(m, b);
  // Position of the lowest common ancestor in each chain (npos = other trees).
  size_t posA = std::string::npos, posB = std::string::npos;
  for (size_t i = 0; i < upA.size() && posA == std::string::npos; ++i) {
    for (size_t j = 0; j < upB.size(); ++j) {
      if (upA[i] == upB[j]) {
        posA = i, posB = j;
        break;
      }
    }
  }
  PathInfo info;
  if (posA != std::string::npos) {
    // One PCI tree: the common ancestor is a bridge below the host bridge.
    // belowA/belowB: bridges strictly between each end and that ancestor.
    int belowA = static_cast<int>(posA) - 1;
    int belowB = static_cast<int>(posB) - 1;
    info.bridges = belowA + belowB + 1;
    bool pix = m.switches == SwitchModel::kPorts ? (belowA <= 1 && belowB <= 1)
                                                 : (belowA == 0 && belowB == 0);
    info.cls = pix ? PathClass::kPIX : PathClass::kPXB;
    takeLinks(m, upA, posA, &info.gbps);
    takeLinks(m, upB, posB, &info.gbps);
    return info;
  }
  // Different trees: up through the host bridge, NUMA node or the whole machine.
  const PciNode& na = m.pci[a];
  const PciNode& nb = m.pci[b];
  info.bridges = na.depth + nb.depth;
  if (na.hostBridge >= 0 && na.hostBridge == nb.hostBridge)
    info.cls = PathClass::kPHB;
  else
    info.cls = cpuPathClass(m, na.locality, nb.locality);
  takeLinks(m, upA, upA.size(), &info.gbps);
  takeLinks(m, upB, upB.size(), &info.gbps);
  return info;
}

PathInfo gpuNicPath(const Machine& m, const Gpu& gpu, const Nic& nic) {
  if (nic.pci >= 0) return pciPath(m, gpu.pci, nic.pci);
  // A NIC with no PCI node sits at its CPU: as near as the host bridge for
  // devices of that CPU (NCCL's view of such NICs), else as far as the CPUs.
  const PciNode& g = m.pci[gpu.pci];
  PathInfo info;
  info.bridges = g.depth;
  info.cls = nic.locality >= 0 && nic.locality == g.locality
                 ? PathClass::kPHB
                 : cpuPathClass(m, g.locality, nic.locality);
  std::vector<int> up = chainUp(m, gpu.pci);
  takeLinks(m, up, up.size(), &info.gbps);
  return info;
}

PathClass cpuPathClass(const Machine& m, int localityA, int localityB) {
  if (localityA < 0 || localityB < 0) return PathClass::kSYS;
  if (localityA == localityB) return PathClass::kNODE;
  // Different NUMA nodes: still one socket when both packages are known and
  // equal. An unknown package (NCCL files, machines hwloc shows without
  // packages) is never assumed shared.
  const int pkgA = m.localities[localityA].package;
  const int pkgB = m.localities[localityB].package;
  return pkgA >= 0 && pkgA == pkgB ? PathClass::kPKG : PathClass::kSYS;
}

}  // namespace weft::topo
