// The topology facade (see topology.h): config knobs, loading, and the live
// mappings the transports and the progress thread use.
#include "topo/topology.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <tuple>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "topo/loaders.h"
#include "topo/paths.h"

namespace weft::topo {

SelectOptions selectOptionsFromConfig(std::string* warning) {
  SelectOptions options;
  std::string level = configString("WEFT_NET_GDR_LEVEL");
  if (!level.empty() && !parsePathClass(level, &options.gdrLevel)) {
    options.gdrLevel = PathClass::kPXB;
    if (warning) {
      *warning =
          "WEFT_NET_GDR_LEVEL=" + level + " is not PIX, PXB, PHB, NODE, PKG, SYS or 1-6; using PXB";
    }
  }
  options.hcaFilter = HcaFilter(configString("WEFT_IB_HCA"));
  return options;
}

weftResult_t loadTopology(const std::string& file, Topology* out) {
  std::string path = file.empty() ? configString("WEFT_TOPO_FILE") : file;
  Topology topo;
  if (path.empty()) {
    WEFT_CHECK(loadLive(&topo.machine));
  } else {
    WEFT_CHECK(loadTopologyFile(path, &topo.machine));
  }
  std::string warning;
  topo.options = selectOptionsFromConfig(&warning);
  if (!warning.empty()) {
    WEFT_WARN(INIT, "%s", warning.c_str());
    topo.machine.notes.push_back(warning);
  }
  topo.gpuNics = chooseNics(topo.machine, topo.options);
  WEFT_INFO(INIT, "topology from %s: %zu GPUs, %zu NICs", topo.machine.source.c_str(),
            topo.machine.gpus.size(), topo.machine.nics.size());
  *out = std::move(topo);
  return weftSuccess;
}

int findGpu(const Machine& m, const std::string& busIdOrName) {
  PciAddress want;
  bool isBusId = parseBusId(busIdOrName, &want);
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    const Gpu& gpu = m.gpus[g];
    const PciAddress& have = m.pci[gpu.pci].addr;
    if (isBusId && sameAdapter(have, want) && have.fn == want.fn) return static_cast<int>(g);
    if (!isBusId &&
        (gpu.label == busIdOrName || std::find(gpu.osDevices.begin(), gpu.osDevices.end(),
                                               busIdOrName) != gpu.osDevices.end())) {
      return static_cast<int>(g);
    }
  }
  return -1;
}

int findNicByName(const Machine& m, const std::string& name) {
  for (size_t n = 0; n < m.nics.size(); ++n) {
    const Nic& nic = m.nics[n];
    if (nic.name == name ||
        std::find(nic.osDevices.begin(), nic.osDevices.end(), name) != nic.osDevices.end()) {
      return static_cast<int>(n);
    }
  }
  return -1;
}

std::string verbsDeviceBusId(const std::string& ibvName, const std::string& sysfsRoot) {
  if (ibvName.empty() || ibvName.find('/') != std::string::npos) return "";
  std::string link = sysfsRoot + "/class/infiniband/" + ibvName + "/device";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  // The device directory is named by its PCI bus id: .../0000:3b:00.0
  const char* base = std::strrchr(resolved, '/');
  PciAddress addr;
  if (base == nullptr || !parseBusId(base + 1, &addr)) return "";
  return formatBusId(addr);
}

const Locality* gpuLocality(const Machine& m, int gpu) {
  if (gpu < 0 || gpu >= static_cast<int>(m.gpus.size())) return nullptr;
  int loc = m.pci[m.gpus[gpu].pci].locality;
  return loc >= 0 ? &m.localities[loc] : nullptr;
}

const Topology* processTopology(std::string* whyNot) {
  static std::mutex mu;
  static std::unique_ptr<Topology> topology;
  static std::string why;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!tried) {
    tried = true;
    auto t = std::make_unique<Topology>();
    if (loadTopology("", t.get()) == weftSuccess)
      topology = std::move(t);
    else
      why = lastError();
  }
  *whyNot = why;
  return topology.get();
}

int gpuRingPosition(const std::string& gpu) {
  if (gpu.empty()) return -1;
  std::string why;
  const Topology* t = processTopology(&why);
  if (t == nullptr) return -1;
  const int g = findGpu(t->machine, gpu);
  if (g < 0) return -1;
  const std::vector<int> order = ringOrder(t->machine);
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] == g) return static_cast<int>(i);
  return -1;
}

weftResult_t bindCurrentThreadToCpus(const std::string& cpuList) {
  cpu_set_t set;
  CPU_ZERO(&set);
  size_t pos = 0;
  bool any = false;
  while (pos < cpuList.size()) {
    size_t comma = cpuList.find(',', pos);
    std::string range =
        cpuList.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int lo = -1, hi = -1;
    char extra = 0;
    int fields = std::sscanf(range.c_str(), "%d-%d%c", &lo, &hi, &extra);
    if (fields == 1) hi = lo;
    if ((fields != 1 && fields != 2) || lo < 0 || hi < lo) {
      return setError(weftInvalidArgument, "CPU list \"%s\" has a bad range \"%s\"",
                      cpuList.c_str(), range.c_str());
    }
    for (int c = lo; c <= hi && c < CPU_SETSIZE; ++c) CPU_SET(c, &set), any = true;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (!any) return setError(weftInvalidArgument, "CPU list \"%s\" names no CPU", cpuList.c_str());
  int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    return setError(weftSystemError, "cannot bind the thread to CPUs %s: %s", cpuList.c_str(),
                    std::strerror(rc));
  }
  return weftSuccess;
}

bool gpusShareASwitch(const Machine& m) {
  for (size_t a = 0; a < m.gpus.size(); ++a) {
    for (size_t b = a + 1; b < m.gpus.size(); ++b) {
      // PIX and PXB paths meet below the host bridge: in one switch (tree).
      if (pciPath(m, m.gpus[a].pci, m.gpus[b].pci).cls <= PathClass::kPXB) return true;
    }
  }
  return false;
}

std::vector<int> ringOrder(const Machine& m) {
  // Key each GPU by the chain of its ancestors from the top of its PCI tree
  // down: GPUs sharing a longer prefix share more of the tree.
  auto treeKey = [&](int g) {
    std::vector<int> chain;
    for (int n = m.gpus[g].pci; n >= 0; n = m.pci[n].parent) chain.push_back(n);
    std::reverse(chain.begin(), chain.end());
    const PciNode& node = m.pci[m.gpus[g].pci];
    return std::make_tuple(node.locality, node.hostBridge, chain);
  };
  std::vector<int> order;
  for (size_t g = 0; g < m.gpus.size(); ++g) order.push_back(static_cast<int>(g));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return treeKey(a) < treeKey(b); });
  return order;
}

}  // namespace weft::topo
