// hwloc -> Machine: discovers (or imports from XML) the topology with every
// PCI device, bridge and OS device kept, then walks the I/O tree once. Host
// bridges group PCI trees; the nearest non-I/O ancestor of a tree (package,
// group, NUMA-level object) gives its CPU locality; OS devices name GPUs
// (cuda/nvml/rsmi/opencl) and NICs (mlx5_0, hsi0, eth0).
#include <hwloc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "base/error.h"
#include "topo/loaders.h"
#include "topo/xml_reader.h"

namespace weft::topo {
namespace {

// hwloc 3 turned the OS device type into a bit mask.
bool osdevIs(hwloc_obj_t obj, unsigned long type) {
#if HWLOC_API_VERSION >= 0x00030000
  return (obj->attr->osdev.types & type) != 0;
#else
  return static_cast<unsigned long>(obj->attr->osdev.type) == type;
#endif
}

bool startsWith(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

std::string bitmapList(hwloc_const_bitmap_t set) {
  if (set == nullptr || hwloc_bitmap_iszero(set)) return "";
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return "";
  std::string out = text;
  std::free(text);
  return out;
}

// OS devices seen under one PCI function.
struct OsDevices {
  std::vector<std::string> gpu;    // cuda0, nvml0, rsmi0, opencl0d0, card1 ...
  std::vector<std::string> verbs;  // mlx5_0, rdmap197s0 (OpenFabrics)
  std::vector<std::vector<int>> verbsPorts;
  std::vector<std::string> net;  // ib0, eth0, hsi0
};

class HwlocWalker {
 public:
  HwlocWalker(hwloc_topology_t topo, Machine* m) : topo_(topo), m_(m) {}

  void walk(hwloc_obj_t obj) {
    for (hwloc_obj_t io = obj->io_first_child; io != nullptr; io = io->next_sibling) {
      visitIo(io, -1, -1, localityOf(obj));
    }
    for (hwloc_obj_t child = obj->first_child; child != nullptr; child = child->next_sibling)
      walk(child);
  }

  void finish() {
    for (size_t i = 0; i < m_->pci.size(); ++i) classify(static_cast<int>(i));
    sortDevices(m_);
  }

 private:
  int localityOf(hwloc_obj_t obj) {
    hwloc_const_bitmap_t key = obj->nodeset;
    for (size_t i = 0; i < localityKeys_.size(); ++i) {
      hwloc_const_bitmap_t seen = localityKeys_[i];
      bool same =
          (seen == nullptr || key == nullptr) ? seen == key : hwloc_bitmap_isequal(seen, key) != 0;
      if (same) return static_cast<int>(i);
    }
    Locality loc;
    loc.cpus = bitmapList(obj->cpuset);
    if (key != nullptr) {
      for (int n = hwloc_bitmap_first(key); n >= 0; n = hwloc_bitmap_next(key, n))
        loc.numaNodes.push_back(n);
    }
    hwloc_obj_t pkg = obj->type == HWLOC_OBJ_PACKAGE
                          ? obj
                          : hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, obj);
    if (pkg != nullptr) loc.package = static_cast<int>(pkg->os_index);
    localityKeys_.push_back(key);
    m_->localities.push_back(loc);
    return static_cast<int>(m_->localities.size()) - 1;
  }

  int addPci(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& a, bool bridge, int parent,
             int hostBridge, int locality) {
    PciNode node;
    node.addr.domain = a.domain;
    node.addr.bus = a.bus;
    node.addr.dev = a.dev;
    node.addr.fn = a.func;
    node.busId = formatBusId(node.addr);
    node.bridge = bridge;
    node.classId = a.class_id;
    node.vendor = a.vendor_id;
    node.device = a.device_id;
    node.linkGBps = a.linkspeed > 0 ? a.linkspeed : 0;
    node.parent = parent;
    node.depth = parent >= 0 ? m_->pci[parent].depth + 1 : 0;
    // A tree hwloc found no host bridge for is its own root complex.
    node.hostBridge = hostBridge >= 0 ? hostBridge : m_->hostBridges++;
    node.locality = locality;
    m_->pci.push_back(node);
    osdevs_.emplace_back();
    return static_cast<int>(m_->pci.size()) - 1;
  }

  void visitIo(hwloc_obj_t obj, int parentPci, int hostBridge, int locality) {
    int here = parentPci;
    if (obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      hostBridge = m_->hostBridges++;
    } else if (obj->type == HWLOC_OBJ_BRIDGE) {
      here = addPci(obj->attr->bridge.upstream.pci, true, parentPci, hostBridge, locality);
    } else if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
      here = addPci(obj->attr->pcidev, false, parentPci, hostBridge, locality);
    } else if (obj->type == HWLOC_OBJ_OS_DEVICE && parentPci >= 0 && obj->name != nullptr) {
      recordOsDevice(obj, &osdevs_[parentPci]);
    }
    if (here >= 0) hostBridge = m_->pci[here].hostBridge;
    for (hwloc_obj_t io = obj->io_first_child; io != nullptr; io = io->next_sibling) {
      visitIo(io, here, hostBridge, locality);
    }
  }

  static void recordOsDevice(hwloc_obj_t obj, OsDevices* out) {
    std::string name = obj->name;
    if (osdevIs(obj, HWLOC_OBJ_OSDEV_OPENFABRICS)) {
      std::vector<int> ports;
      for (unsigned i = 0; i < obj->infos_count; ++i) {
        // "Port<N>State" exists once per port of the RDMA device.
        const char* key = obj->infos[i].name;
        int port = 0;
        char tail[16] = {0};
        if (key && std::sscanf(key, "Port%d%15s", &port, tail) == 2 &&
            std::strcmp(tail, "State") == 0) {
          ports.push_back(port);
        }
      }
      out->verbs.push_back(name);
      out->verbsPorts.push_back(ports);
    } else if (osdevIs(obj, HWLOC_OBJ_OSDEV_NETWORK)) {
      out->net.push_back(name);
    } else if (osdevIs(obj, HWLOC_OBJ_OSDEV_GPU) || osdevIs(obj, HWLOC_OBJ_OSDEV_COPROC)) {
      out->gpu.push_back(name);
    }
  }

  void classify(int index) {
    const PciNode& node = m_->pci[index];
    if (node.bridge) return;
    const OsDevices& os = osdevs_[index];
    bool computeOsDevice = false;
    for (const std::string& n : os.gpu) {
      if (startsWith(n, "cuda") || startsWith(n, "nvml") || startsWith(n, "rsmi"))
        computeOsDevice = true;
    }
    if (computeOsDevice || looksLikeGpu(node.classId, node.vendor, node.device)) {
      Gpu gpu;
      gpu.pci = index;
      gpu.osDevices = os.gpu;
      for (const std::string& n : os.gpu) {
        if (gpu.label.empty() &&
            (startsWith(n, "cuda") || startsWith(n, "rsmi") || startsWith(n, "nvml")))
          gpu.label = n;
      }
      if (gpu.label.empty() && !os.gpu.empty()) gpu.label = os.gpu[0];
      m_->gpus.push_back(gpu);
      return;
    }
    NicKind kind = classifyNic(node.classId, node.vendor, node.device, !os.verbs.empty());
    if (kind == NicKind::kNone && !os.verbs.empty()) kind = NicKind::kRdmaOther;
    if (kind == NicKind::kNone) return;
    std::vector<std::string> all = os.net;
    all.insert(all.end(), os.verbs.begin(), os.verbs.end());
    if (!os.verbs.empty()) {
      // One NIC per RDMA device (a function normally has one).
      for (size_t i = 0; i < os.verbs.size(); ++i) {
        Nic nic;
        nic.name = os.verbs[i];
        nic.pci = index;
        nic.ports = os.verbsPorts[i];
        nic.kind = kind;
        nic.osDevices = all;
        m_->nics.push_back(nic);
      }
      return;
    }
    Nic nic;
    nic.name = os.net.empty() ? node.busId : os.net[0];
    nic.pci = index;
    nic.kind = kind;
    nic.osDevices = all;
    m_->nics.push_back(nic);
  }

  hwloc_topology_t topo_;
  Machine* m_;
  std::vector<hwloc_const_bitmap_t> localityKeys_;
  std::vector<OsDevices> osdevs_;  // parallel to m_->pci
};

struct TopologyCloser {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyCloser>;

// Creates a topology that keeps every PCI device, bridge and OS device;
// `xmlPath` non-empty imports that file instead of discovering.
weftResult_t openTopology(const std::string& xmlPath, const std::string& what, TopologyPtr* out) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return setError(weftSystemError, "hwloc_topology_init failed: %s", std::strerror(errno));
  }
  TopologyPtr topo(raw);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (!xmlPath.empty() && hwloc_topology_set_xml(raw, xmlPath.c_str()) != 0) {
    return setError(weftInvalidArgument, "%s: hwloc cannot use it as XML input: %s", what.c_str(),
                    std::strerror(errno));
  }
  errno = 0;
  if (hwloc_topology_load(raw) != 0) {
    int err = errno;
    return setError(xmlPath.empty() ? weftSystemError : weftInvalidArgument,
                    "%s: hwloc %s failed to load it (%s)", what.c_str(), HWLOC_VERSION,
                    err ? std::strerror(err) : "no reason given");
  }
  *out = std::move(topo);
  return weftSuccess;
}

void convert(hwloc_topology_t topo, Machine* m) {
  HwlocWalker walker(topo, m);
  walker.walk(hwloc_get_root_obj(topo));
  walker.finish();
}

// Reads "0302 [10de:1db1] [10de:1212] a1" (hwloc's pci_type attribute).
bool parsePciType(const std::string& text, uint32_t* classId, int* vendor, int* device) {
  unsigned c = 0, v = 0, d = 0;
  if (std::sscanf(text.c_str(), "%x [%x:%x]", &c, &v, &d) != 3) return false;
  *classId = c, *vendor = static_cast<int>(v), *device = static_cast<int>(d);
  return true;
}

// Counts PCI devices and GPU-looking PCI devices in the raw XML, to tell a
// file whose GPUs hwloc dropped from one that never had any.
void countInFile(const XmlElement& el, int* pciDevices, int* gpus) {
  const std::string* type = el.attr("type");
  if (el.name == "object" && type != nullptr && *type == "PCIDev") {
    ++*pciDevices;
    uint32_t classId = 0;
    int vendor = -1, device = -1;
    const std::string* pciType = el.attr("pci_type");
    if (pciType && parsePciType(*pciType, &classId, &vendor, &device) &&
        looksLikeGpu(classId, vendor, device)) {
      ++*gpus;
    }
  }
  for (const auto& child : el.children) countInFile(*child, pciDevices, gpus);
}

}  // namespace

weftResult_t loadLive(Machine* out) {
  TopologyPtr topo;
  WEFT_CHECK(openTopology("", "this machine", &topo));
  Machine m;
  m.source = "live";
  m.format = std::string("live discovery, hwloc ") + HWLOC_VERSION;
  m.switches = SwitchModel::kPorts;
  convert(topo.get(), &m);
  *out = std::move(m);
  return weftSuccess;
}

weftResult_t loadHwlocXml(const std::string& path, const std::string& text, Machine* out) {
  XmlElement rootTag;
  std::string error;
  std::string version = "1.x";
  if (sniffRootElement(text, &rootTag, &error) && rootTag.attr("version"))
    version = *rootTag.attr("version");
  std::string what = "topology file " + path + " (hwloc XML " + version + ")";
  TopologyPtr topo;
  weftResult_t res = openTopology(path, what, &topo);
  if (res != weftSuccess) {
    // hwloc only says EINVAL; the usual cause is a newer format than this hwloc reads.
    int major = std::atoi(version.c_str());
    if (major > HWLOC_API_VERSION >> 16) {
      std::string loadError = lastError();
      return setError(res, "%s; this hwloc %s reads XML format up to %d.x, the file is %s",
                      loadError.c_str(), HWLOC_VERSION, HWLOC_API_VERSION >> 16, version.c_str());
    }
    return res;
  }
  Machine m;
  m.source = path;
  m.format = "hwloc XML " + version;
  m.switches = SwitchModel::kPorts;
  convert(topo.get(), &m);
  std::unique_ptr<XmlElement> doc;
  if (parseXml(text, &doc, &error)) {
    int pciInFile = 0, gpusInFile = 0;
    countInFile(*doc, &pciInFile, &gpusInFile);
    if (pciInFile == 0) {
      return setError(
          weftInvalidArgument,
          "%s has no PCI devices: it was exported without I/O objects, so it cannot place GPUs "
          "or NICs (export with lstopo --of xml --whole-io)",
          what.c_str());
    }
    if (static_cast<int>(m.gpus.size()) < gpusInFile) {
      return setError(weftInvalidArgument,
                      "%s lists %d GPUs but only %zu survived loading with hwloc %s", what.c_str(),
                      gpusInFile, m.gpus.size(), HWLOC_VERSION);
    }
  } else {
    m.notes.push_back("hwloc loaded the file but weft's own XML check did not (" + error + ")");
  }
  *out = std::move(m);
  return weftSuccess;
}

}  // namespace weft::topo
