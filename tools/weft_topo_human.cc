// weft-topo's human report: the device matrix with path classes (read it like
// `nvidia-smi topo -m`), a legend, the device lists, then one paragraph per
// GPU saying which NIC it uses, why, and whether GPUDirect RDMA is on.
#include <string>
#include <vector>

#include "tools/weft_topo.h"
#include "topo/paths.h"

namespace weft::topo {
namespace {

std::string numaText(const Locality* loc) {
  if (loc == nullptr || loc->numaNodes.empty()) return "N/A";
  std::string out;
  for (int n : loc->numaNodes) out += (out.empty() ? "" : ",") + std::to_string(n);
  return out;
}

std::string cpusText(const Locality* loc) {
  return loc == nullptr || loc->cpus.empty() ? "N/A" : loc->cpus;
}

const Locality* localityAt(const Machine& m, int index) {
  return index >= 0 ? &m.localities[index] : nullptr;
}

struct Row {
  std::string label;
  int pci;
  int locality;
};

}  // namespace

const char* matrixCell(const Machine& m, int pciA, int locA, int pciB, int locB) {
  if (pciA >= 0 && pciA == pciB) return "PIX";  // two ports of one NIC
  if (pciA >= 0 && pciB >= 0) return pathClassName(pciPath(m, pciA, pciB).cls);
  // A device without a PCI node is only known by its CPU.
  return locA >= 0 && locA == locB ? "PHB" : pathClassName(cpuPathClass(m, locA, locB));
}

void printHumanReport(const Topology& topo, FILE* out) {
  const Machine& m = topo.machine;
  std::fprintf(out, "Topology: %s (%s)\n", m.source == "live" ? "this machine" : m.source.c_str(),
               m.format.c_str());
  std::fprintf(out, "GDR level: %s (WEFT_NET_GDR_LEVEL)   NIC filter: %s (WEFT_IB_HCA)\n\n",
               pathClassName(topo.options.gdrLevel),
               topo.options.hcaFilter.empty() ? "none" : topo.options.hcaFilter.spec().c_str());

  std::vector<Row> rows;
  std::vector<int> rdma, ethernet;
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    int pci = m.gpus[g].pci;
    rows.push_back({"GPU" + std::to_string(g), pci, m.pci[pci].locality});
  }
  for (size_t n = 0; n < m.nics.size(); ++n) {
    const Nic& nic = m.nics[n];
    if (!isRdma(nic.kind)) {
      ethernet.push_back(static_cast<int>(n));
      continue;
    }
    rows.push_back({"NIC" + std::to_string(rdma.size()), nic.pci, m.localityOf(nic)});
    rdma.push_back(static_cast<int>(n));
  }
  if (m.gpus.empty())
    std::fprintf(out, "No GPU found%s.\n", m.source == "live" ? " on this machine" : "");
  if (rdma.empty())
    std::fprintf(out,
                 "No RDMA NIC found (InfiniBand, RoCE, EFA, Slingshot); only TCP is possible.\n");
  if (!rows.empty()) {
    std::fprintf(out, "%-7s", "");
    for (const Row& r : rows) std::fprintf(out, "%-6s", r.label.c_str());
    std::fprintf(out, "%-20s%s\n", "CPU Affinity", "NUMA Affinity");
    for (const Row& a : rows) {
      std::fprintf(out, "%-7s", a.label.c_str());
      for (const Row& b : rows) {
        const char* cell = &a == &b ? "X" : matrixCell(m, a.pci, a.locality, b.pci, b.locality);
        std::fprintf(out, "%-6s", cell);
      }
      const Locality* loc = localityAt(m, a.locality);
      std::fprintf(out, "%-20s%s\n", cpusText(loc).c_str(), numaText(loc).c_str());
    }
    std::fprintf(
        out,
        "\nLegend:\n"
        "  X    = Self\n"
        "  SYS  = Path crosses sockets (SMP interconnect such as QPI/UPI/xGMI), or NUMA nodes\n"
        "         whose socket is not known\n"
        "  PKG  = Path crosses NUMA nodes within one socket (package)\n"
        "  NODE = Path crosses host bridges within one NUMA node\n"
        "  PHB  = Path goes through a PCIe host bridge (typically the CPU)\n"
        "  PXB  = Path crosses several PCIe bridges/switches, but no host bridge\n"
        "  PIX  = Path crosses at most one PCIe switch\n");
  }

  if (!m.gpus.empty()) std::fprintf(out, "\nGPUs:\n");
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    const Gpu& gpu = m.gpus[g];
    std::string names;
    for (const std::string& n : gpu.osDevices) names += (names.empty() ? "" : ",") + n;
    if (names.empty()) names = gpu.label.empty() ? "-" : gpu.label;
    const PciNode& node = m.pci[gpu.pci];
    std::fprintf(out, "  GPU%-3zu %s [%04x:%04x] %s\n", g, node.busId.c_str(),
                 node.vendor < 0 ? 0 : node.vendor, node.device < 0 ? 0 : node.device,
                 names.c_str());
  }
  if (!rdma.empty()) std::fprintf(out, "\nNICs (RDMA):\n");
  for (size_t i = 0; i < rdma.size(); ++i) {
    const Nic& nic = m.nics[rdma[i]];
    std::string ports;
    for (int p : nic.ports) ports += (ports.empty() ? " port " : ",") + std::to_string(p);
    std::fprintf(out, "  NIC%-3zu %-12s %s %s%s\n", i, nic.name.c_str(),
                 nic.pci >= 0 ? m.pci[nic.pci].busId.c_str() : "(no PCI device)",
                 nicKindName(nic.kind), ports.c_str());
  }
  if (!ethernet.empty()) {
    std::fprintf(out, "\nEthernet ports (TCP only, never picked as RDMA NICs):");
    for (int n : ethernet) {
      const Nic& nic = m.nics[n];
      std::fprintf(out, " %s%s%s%s", nic.name.c_str(), nic.pci >= 0 ? " (" : "",
                   nic.pci >= 0 ? m.pci[nic.pci].busId.c_str() : "", nic.pci >= 0 ? ")" : "");
    }
    std::fprintf(out, "\n");
  }

  if (!m.gpus.empty()) std::fprintf(out, "\nGPU -> NIC:\n");
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    const GpuNic& choice = topo.gpuNics[g];
    const Locality* loc = localityAt(m, m.pci[m.gpus[g].pci].locality);
    std::fprintf(out, "  GPU%zu %s -> %s", g, m.pci[m.gpus[g].pci].busId.c_str(),
                 choice.nic >= 0 ? m.nics[choice.nic].name.c_str() : "none");
    if (choice.nic >= 0)
      std::fprintf(out, " (%s), GDR %s", pathClassName(choice.path.cls), choice.gdr ? "on" : "off");
    std::fprintf(out, "\n    why:  %s\n", choice.reason.c_str());
    if (choice.nic >= 0) std::fprintf(out, "    GDR:  %s\n", choice.gdrReason.c_str());
    std::fprintf(out, "    bind: CPUs %s, NUMA %s\n", cpusText(loc).c_str(), numaText(loc).c_str());
  }
  std::vector<int> ring = ringOrder(m);
  if (ring.size() > 1) {
    // Say why the order is what it is; switch neighbours only where there are some.
    std::fprintf(out, "\nRing order (%s):",
                 gpusShareASwitch(m) ? "grouped by NUMA node, GPUs sharing a switch adjacent"
                                     : "grouped by NUMA node; no two GPUs share a switch");
    for (int g : ring) std::fprintf(out, " GPU%d", g);
    std::fprintf(out, "\n");
  }
  for (const std::string& note : m.notes) std::fprintf(out, "Note: %s\n", note.c_str());
}

}  // namespace weft::topo
