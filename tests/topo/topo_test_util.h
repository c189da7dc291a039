// Helpers for the topology unit tests: write an XML string to a temporary file
// and load it, and compose small hwloc 2.0 XML trees from readable pieces
// (a host bridge holding a switch holding a GPU and a NIC...).
#pragma once

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "topo/loaders.h"
#include "topo/topology.h"

namespace weft::testing {

// A file that deletes itself; `path` is empty if it could not be created.
class TempFile {
 public:
  explicit TempFile(const std::string& content, const char* suffix = ".xml") {
    char name[] = "/tmp/weft_topo_test_XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0) return;
    size_t done = 0;
    while (done < content.size()) {
      ssize_t n = write(fd, content.data() + done, content.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
    path_ = std::string(name) + suffix;
    if (std::rename(name, path_.c_str()) != 0) path_ = name;
  }
  ~TempFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Loads `xml` through the same path as WEFT_TOPO_FILE and picks NICs with
// default options (or `options`). Returns the load result.
inline weftResult_t loadXml(const std::string& xml, topo::Topology* out) {
  TempFile file(xml);
  return topo::loadTopology(file.path(), out);
}

// ---- hwloc 2.0 XML pieces -------------------------------------------------
// gp_index must be unique per object; each piece takes the next one.
inline int nextGpIndex() {
  static int next = 100;
  return next++;
}

inline std::string speedAttr(double gbps) {
  return gbps > 0 ? " pci_link_speed=\"" + std::to_string(gbps) + "\"" : "";
}

// A host bridge (root complex) holding `children`.
inline std::string hostBridge(const std::string& children) {
  return "<object type=\"Bridge\" gp_index=\"" + std::to_string(nextGpIndex()) +
         "\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-ff]\">" + children + "</object>";
}

// A PCI-to-PCI bridge (root port or switch port) at `busid`.
inline std::string pciBridge(const std::string& busid, const std::string& children,
                             double gbps = 15.753846, const char* ids = "10b5:8796") {
  return "<object type=\"Bridge\" gp_index=\"" + std::to_string(nextGpIndex()) +
         "\" bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"0000:[01-ff]\" pci_busid=\"" + busid +
         "\" pci_type=\"0604 [" + ids + "] [0000:0000] 00\"" + speedAttr(gbps) + ">" + children +
         "</object>";
}

// A PCI function with class/ids "0302 [10de:20b0]" and optional OS devices.
inline std::string pciDevice(const std::string& busid, const std::string& classAndIds, double gbps,
                             const std::string& osdevs = "") {
  return "<object type=\"PCIDev\" gp_index=\"" + std::to_string(nextGpIndex()) + "\" pci_busid=\"" +
         busid + "\" pci_type=\"" + classAndIds + " [0000:0000] 00\"" + speedAttr(gbps) + ">" +
         osdevs + "</object>";
}

// osdev_type: 1 GPU, 2 network, 3 OpenFabrics, 5 coprocessor.
inline std::string osDevice(const std::string& name, int osdevType, const std::string& infos = "") {
  return "<object type=\"OSDev\" gp_index=\"" + std::to_string(nextGpIndex()) + "\" name=\"" +
         name + "\" osdev_type=\"" + std::to_string(osdevType) + "\">" + infos + "</object>";
}

inline std::string nvidiaGpu(const std::string& busid, double gbps = 15.753846,
                             const std::string& cudaName = "") {
  return pciDevice(busid, "0302 [10de:20b0]", gbps, cudaName.empty() ? "" : osDevice(cudaName, 5));
}
inline std::string ibNic(const std::string& busid, const std::string& name,
                         double gbps = 15.753846) {
  return pciDevice(
      busid, "0207 [15b3:101b]", gbps,
      osDevice("ib_" + name, 2) + osDevice(name, 3, "<info name=\"Port1State\" value=\"4\"/>"));
}
inline std::string ethernetPort(const std::string& busid, const std::string& name,
                                double gbps = 15.753846) {
  return pciDevice(busid, "0200 [8086:1521]", gbps, osDevice(name, 2));
}

// A machine with one package per entry of `ioPerPackage` (one NUMA node and
// one CPU each); each entry is the I/O XML attached to that package.
inline std::string hwlocMachine(const std::vector<std::string>& ioPerPackage) {
  size_t n = ioPerPackage.size();
  auto mask = [](unsigned long bits) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%08lx", bits);
    return std::string(buf);
  };
  unsigned long all = (1ul << n) - 1;
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\" cpuset=\"" +
      mask(all) + "\" complete_cpuset=\"" + mask(all) + "\" allowed_cpuset=\"" + mask(all) +
      "\" nodeset=\"" + mask(all) + "\" complete_nodeset=\"" + mask(all) + "\" allowed_nodeset=\"" +
      mask(all) + "\" gp_index=\"1\">\n";
  for (size_t p = 0; p < n; ++p) {
    std::string bit = mask(1ul << p);
    std::string sets = " cpuset=\"" + bit + "\" complete_cpuset=\"" + bit + "\" nodeset=\"" + bit +
                       "\" complete_nodeset=\"" + bit + "\"";
    xml += "<object type=\"Package\" os_index=\"" + std::to_string(p) + "\"" + sets +
           " gp_index=\"" + std::to_string(nextGpIndex()) + "\">\n";
    xml += "<object type=\"NUMANode\" os_index=\"" + std::to_string(p) + "\"" + sets +
           " gp_index=\"" + std::to_string(nextGpIndex()) + "\" local_memory=\"1073741824\"/>\n";
    xml += "<object type=\"PU\" os_index=\"" + std::to_string(p) + "\"" + sets + " gp_index=\"" +
           std::to_string(nextGpIndex()) + "\"/>\n";
    xml += ioPerPackage[p] + "\n</object>\n";
  }
  return xml + "</object>\n</topology>\n";
}

// The chosen NIC's name for the GPU with this bus id ("none" if it has none).
inline std::string nicOf(const topo::Topology& t, const std::string& gpuBusId) {
  int g = topo::findGpu(t.machine, gpuBusId);
  if (g < 0) return "no such GPU";
  int n = t.gpuNics[g].nic;
  return n < 0 ? "none" : t.machine.nics[n].name;
}
inline std::string pathOf(const topo::Topology& t, const std::string& gpuBusId) {
  int g = topo::findGpu(t.machine, gpuBusId);
  if (g < 0 || t.gpuNics[g].nic < 0) return "none";
  return topo::pathClassName(t.gpuNics[g].path.cls);
}

}  // namespace weft::testing
