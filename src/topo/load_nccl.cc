// NCCL/RCCL topology XML -> Machine. The format (what NCCL_TOPO_FILE reads and
// NCCL_TOPO_DUMP_FILE writes) is a tree: <system> holds one <cpu> per NUMA
// node; a <cpu> holds <pci> nodes (bridges nest further <pci>), a <pci> may
// hold a <gpu> or a <nic> with one <net> per port, and a <nic> may also sit
// directly under a <cpu> (a virtual NIC with no PCI device). Every <cpu> is
// treated as its own host bridge, as NCCL does; unknown elements are ignored.
#include <cstdlib>
#include <map>
#include <string>

#include "base/error.h"
#include "topo/loaders.h"
#include "topo/xml_reader.h"

namespace weft::topo {
namespace {

// "0x10de" -> 0x10de; -1 when absent or not a number.
long parseHexAttr(const XmlElement& el, const char* key) {
  const std::string* v = el.attr(key);
  if (v == nullptr || v->empty()) return -1;
  char* end = nullptr;
  long value = std::strtol(v->c_str(), &end, 16);
  if (end == v->c_str() || *end != '\0' || value < 0) return -1;
  return value;
}

int parseIntAttr(const XmlElement& el, const char* key, int fallback) {
  const std::string* v = el.attr(key);
  if (v == nullptr || v->empty()) return fallback;
  char* end = nullptr;
  long value = std::strtol(v->c_str(), &end, 10);
  if (end == v->c_str() || *end != '\0') return fallback;
  return static_cast<int>(value);
}

// NCCL's affinity mask ("0000ffff,ff000000": 32-bit hex words, most
// significant first) as a CPU list ("24-47").
std::string maskToCpuList(const std::string& mask) {
  std::vector<bool> bits;  // bit i = CPU i
  size_t end = mask.size();
  while (end > 0) {
    size_t comma = mask.rfind(',', end - 1);
    size_t start = comma == std::string::npos ? 0 : comma + 1;
    std::string word = mask.substr(start, end - start);
    unsigned long value = std::strtoul(word.c_str(), nullptr, 16);
    for (int b = 0; b < 32; ++b) bits.push_back(((value >> b) & 1) != 0);
    if (comma == std::string::npos) break;
    end = comma;
  }
  std::string out;
  for (size_t i = 0; i < bits.size();) {
    if (!bits[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < bits.size() && bits[j + 1]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
    if (j > i) out += "-" + std::to_string(j);
    i = j + 1;
  }
  return out;
}

bool netLooksRdma(const XmlElement& net) {
  // Only RDMA plugins (IB verbs, EFA, CXI...) can offer GPUDirect, and verbs
  // ports carry a GUID; NCCL's socket transport writes gdr="0" guid="0x0".
  if (net.attrOr("gdr", "0") == "1") return true;
  long guid = parseHexAttr(net, "guid");
  return guid > 0;
}

class NcclBuilder {
 public:
  NcclBuilder(const std::string& what, Machine* m) : what_(what), m_(m) {}

  weftResult_t addSystem(const XmlElement& system) {
    for (const auto& child : system.children) {
      if (child->name == "cpu") {
        WEFT_CHECK(addCpu(*child));
      } else if (child->name == "pci") {
        // A <pci> outside any <cpu>: its own host bridge, locality unknown.
        WEFT_CHECK(addPci(*child, -1, m_->hostBridges++, -1));
      }
    }
    return weftSuccess;
  }

 private:
  weftResult_t addCpu(const XmlElement& cpu) {
    // <cpu> elements naming the same NUMA node share its locality (NODE
    // between them); each is still its own host bridge.
    int numa = parseIntAttr(cpu, "numaid", -1);
    auto known = localityByNuma_.find(numa);
    int locality;
    if (numa >= 0 && known != localityByNuma_.end()) {
      locality = known->second;
    } else {
      Locality loc;
      loc.cpus = maskToCpuList(cpu.attrOr("affinity", ""));
      if (numa >= 0) loc.numaNodes.push_back(numa);
      m_->localities.push_back(loc);
      locality = static_cast<int>(m_->localities.size()) - 1;
      if (numa >= 0) localityByNuma_[numa] = locality;
    }
    int hostBridge = m_->hostBridges++;
    for (const auto& child : cpu.children) {
      if (child->name == "pci") {
        WEFT_CHECK(addPci(*child, -1, hostBridge, locality));
      } else if (child->name == "nic") {
        addNets(*child, -1, locality, NicKind::kNone);
      }
    }
    return weftSuccess;
  }

  weftResult_t addPci(const XmlElement& el, int parent, int hostBridge, int locality) {
    PciNode node;
    const std::string* busId = el.attr("busid");
    if (busId == nullptr || !parseBusId(*busId, &node.addr)) {
      return setError(weftInvalidArgument, "%s, line %d: <pci> has %s", what_.c_str(), el.line,
                      busId ? ("busid=\"" + *busId + "\", not a PCI bus id").c_str() : "no busid");
    }
    node.busId = formatBusId(node.addr);
    long cls = parseHexAttr(el, "class");
    // NCCL writes the 24-bit class with its programming interface (0x030200).
    if (cls > 0xffff) cls >>= 8;
    node.classId = cls > 0 ? static_cast<uint32_t>(cls) : 0;
    long vendor = parseHexAttr(el, "vendor");
    node.vendor = vendor == 0xffff ? -1 : static_cast<int>(vendor);  // ffff: synthetic node
    node.device = static_cast<int>(parseHexAttr(el, "device"));
    node.linkGBps = pcieLinkGBps(parseGigaTransfers(el.attrOr("link_speed", "")),
                                 parseIntAttr(el, "link_width", 0));
    node.parent = parent;
    node.depth = parent >= 0 ? m_->pci[parent].depth + 1 : 0;
    node.hostBridge = hostBridge;
    node.locality = locality;
    bool hasPciChildren = false;
    for (const auto& child : el.children) hasPciChildren |= child->name == "pci";
    node.bridge = (node.classId >> 8) == 0x06 || hasPciChildren;
    m_->pci.push_back(node);
    int index = static_cast<int>(m_->pci.size()) - 1;

    const XmlElement* gpuEl = nullptr;
    const XmlElement* nicEl = nullptr;
    for (const auto& child : el.children) {
      if (child->name == "pci")
        WEFT_CHECK(addPci(*child, index, hostBridge, locality));
      else if (child->name == "gpu")
        gpuEl = child.get();
      else if (child->name == "nic")
        nicEl = child.get();
    }
    const PciNode& self = m_->pci[index];
    if (gpuEl != nullptr ||
        (!self.bridge && looksLikeGpu(self.classId, self.vendor, self.device))) {
      Gpu gpu;
      gpu.pci = index;
      if (gpuEl != nullptr) {
        if (gpuEl->attr("dev")) gpu.label = "dev " + *gpuEl->attr("dev");
        gpu.gdrCapable = gpuEl->attrOr("gdr", "1") != "0";
      }
      m_->gpus.push_back(gpu);
    } else if (nicEl != nullptr) {
      addNets(*nicEl, index, locality, classifyNic(self.classId, self.vendor, self.device, false));
    } else if (!self.bridge) {
      NicKind kind = classifyNic(self.classId, self.vendor, self.device, false);
      if (kind != NicKind::kNone) {
        Nic nic;
        nic.name = self.busId;
        nic.pci = index;
        nic.kind = kind;
        m_->nics.push_back(nic);
      }
    }
    return weftSuccess;
  }

  // One Nic per <net> (port). `pciKind` is what the PCI ids alone say.
  void addNets(const XmlElement& nicEl, int pci, int locality, NicKind pciKind) {
    for (const auto& net : nicEl.children) {
      if (net->name != "net") continue;
      Nic nic;
      nic.pci = pci;
      nic.locality = locality;
      nic.name = net->attrOr("name", pci >= 0 ? m_->pci[pci].busId : "");
      int port = parseIntAttr(*net, "port", 0);
      if (port > 0) nic.ports.push_back(port);
      nic.gdrCapable = net->attrOr("gdr", "1") != "0";
      bool rdma = netLooksRdma(*net);
      nic.kind = pciKind;
      if (pci >= 0) {
        const PciNode& p = m_->pci[pci];
        nic.kind = classifyNic(p.classId, p.vendor, p.device, rdma);
      }
      if (nic.kind == NicKind::kNone) nic.kind = rdma ? NicKind::kRdmaOther : NicKind::kEthernet;
      if (nic.name.empty()) nic.name = "net" + std::to_string(m_->nics.size());
      m_->nics.push_back(nic);
    }
  }

  std::string what_;
  Machine* m_;
  std::map<int, int> localityByNuma_;
};

}  // namespace

weftResult_t loadNcclXml(const std::string& path, const std::string& text, Machine* out) {
  std::unique_ptr<XmlElement> root;
  std::string error;
  std::string what = "topology file " + path + " (NCCL/RCCL XML)";
  if (!parseXml(text, &root, &error)) {
    return setError(weftInvalidArgument, "%s is not well-formed XML: %s", what.c_str(),
                    error.c_str());
  }
  if (root->name != "system") {
    return setError(weftInvalidArgument, "%s: the root element is <%s>, not <system>", what.c_str(),
                    root->name.c_str());
  }
  Machine m;
  m.source = path;
  m.format = "NCCL/RCCL topology XML, system version " + root->attrOr("version", "?");
  m.switches = SwitchModel::kBridgeNodes;
  NcclBuilder builder(what, &m);
  WEFT_CHECK(builder.addSystem(*root));
  sortDevices(&m);
  *out = std::move(m);
  return weftSuccess;
}

}  // namespace weft::topo
