// Names of path classes and the bus ordering of a Machine's devices.
#include "topo/machine.h"

#include <algorithm>
#include <cctype>

namespace weft::topo {

const char* pathClassName(PathClass cls) {
  switch (cls) {
    case PathClass::kPIX:
      return "PIX";
    case PathClass::kPXB:
      return "PXB";
    case PathClass::kPHB:
      return "PHB";
    case PathClass::kNODE:
      return "NODE";
    case PathClass::kPKG:
      return "PKG";
    case PathClass::kSYS:
      return "SYS";
  }
  return "?";
}

bool parsePathClass(const std::string& text, PathClass* out) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (int v = 1; v <= static_cast<int>(PathClass::kSYS); ++v) {
    PathClass cls = static_cast<PathClass>(v);
    if (upper == pathClassName(cls) || upper == std::to_string(v)) {
      *out = cls;
      return true;
    }
  }
  return false;
}

void sortDevices(Machine* m) {
  const std::vector<PciNode>& pci = m->pci;
  std::stable_sort(m->gpus.begin(), m->gpus.end(), [&](const Gpu& a, const Gpu& b) {
    return busIdLess(pci[a.pci].addr, pci[b.pci].addr);
  });
  // NICs without a PCI node go last; NICs of one PCI function by name
  // (mlx5_10 after mlx5_9: shorter names first).
  std::stable_sort(m->nics.begin(), m->nics.end(), [&](const Nic& a, const Nic& b) {
    if ((a.pci < 0) != (b.pci < 0)) return a.pci >= 0;
    if (a.pci >= 0 && a.pci != b.pci) return busIdLess(pci[a.pci].addr, pci[b.pci].addr);
    if (a.name.size() != b.name.size()) return a.name.size() < b.name.size();
    return a.name < b.name;
  });
}

}  // namespace weft::topo
