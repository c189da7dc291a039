// weft-topo --json: one JSON document for scripts and tests. The stable core
// is {"gpus": [{"busid", "nic", "path", "gdr"}], "nics": [{"name", "busid"}]};
// a NIC is named by its RDMA device where the source has one, else by its PCI
// bus id. Everything else (reasons, ties, affinity) is extra detail.
#include <cstdio>
#include <string>
#include <vector>

#include "tools/weft_topo.h"

namespace weft::topo {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string stringList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

std::string intList(const std::vector<int>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::to_string(items[i]);
  return out + "]";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

// "numa": [...], "cpus": "..." for a locality index.
std::string affinity(const Machine& m, int locality) {
  if (locality < 0) return "\"numa\": [], \"cpus\": null";
  const Locality& loc = m.localities[locality];
  return "\"numa\": " + intList(loc.numaNodes) +
         ", \"cpus\": " + (loc.cpus.empty() ? "null" : quoted(loc.cpus));
}

}  // namespace

void printJsonReport(const Topology& topo, FILE* out) {
  const Machine& m = topo.machine;
  std::fprintf(out, "{\n  \"source\": %s,\n  \"format\": %s,\n", quoted(m.source).c_str(),
               quoted(m.format).c_str());
  std::fprintf(out, "  \"gdr_level\": %s,\n  \"ib_hca\": %s,\n",
               quoted(pathClassName(topo.options.gdrLevel)).c_str(),
               quoted(topo.options.hcaFilter.spec()).c_str());
  std::fprintf(out, "  \"gpus\": [");
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    const Gpu& gpu = m.gpus[g];
    const GpuNic& c = topo.gpuNics[g];
    const PciNode& node = m.pci[gpu.pci];
    std::vector<std::string> tied;
    for (int n : c.tied) tied.push_back(m.nics[n].name);
    bool has = c.nic >= 0;
    std::fprintf(out, "%s\n    {\"index\": %zu, \"busid\": %s, \"label\": %s, \"os_devices\": %s,",
                 g ? "," : "", g, quoted(node.busId).c_str(), quoted(gpu.label).c_str(),
                 stringList(gpu.osDevices).c_str());
    std::fprintf(
        out,
        "\n     \"nic\": %s, \"path\": %s, \"gdr\": %s, \"bandwidth_gbps\": %s, \"bridges\": %s,",
        has ? quoted(m.nics[c.nic].name).c_str() : "null",
        has ? quoted(pathClassName(c.path.cls)).c_str() : "null", c.gdr ? "true" : "false",
        has && c.path.gbps > 0 ? number(c.path.gbps).c_str() : "null",
        has ? std::to_string(c.path.bridges).c_str() : "null");
    std::fprintf(out, "\n     \"tied\": %s, \"reason\": %s, \"gdr_reason\": %s,\n     %s}",
                 stringList(tied).c_str(), quoted(c.reason).c_str(), quoted(c.gdrReason).c_str(),
                 affinity(m, node.locality).c_str());
  }
  std::fprintf(out, "%s],\n  \"nics\": [", m.gpus.empty() ? "" : "\n  ");
  bool first = true;
  for (const Nic& nic : m.nics) {
    if (!isRdma(nic.kind)) continue;
    std::fprintf(out, "%s\n    {\"name\": %s, \"busid\": %s, \"kind\": %s, \"ports\": %s, %s}",
                 first ? "" : ",", quoted(nic.name).c_str(),
                 nic.pci >= 0 ? quoted(m.pci[nic.pci].busId).c_str() : "null",
                 quoted(nicKindName(nic.kind)).c_str(), intList(nic.ports).c_str(),
                 affinity(m, m.localityOf(nic)).c_str());
    first = false;
  }
  std::fprintf(out, "%s],\n  \"ethernet\": [", first ? "" : "\n  ");
  first = true;
  for (const Nic& nic : m.nics) {
    if (isRdma(nic.kind)) continue;
    std::fprintf(out, "%s\n    {\"name\": %s, \"busid\": %s}", first ? "" : ",",
                 quoted(nic.name).c_str(),
                 nic.pci >= 0 ? quoted(m.pci[nic.pci].busId).c_str() : "null");
    first = false;
  }
  std::fprintf(out, "%s],\n  \"ring_order\": %s,\n  \"notes\": %s\n}\n", first ? "" : "\n  ",
               intList(ringOrder(m)).c_str(), stringList(m.notes).c_str());
}

}  // namespace weft::topo
