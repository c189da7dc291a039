// Nearest-NIC ranking, tie spreading and GDR decisions (see nic_select.h).
#include "topo/nic_select.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace weft::topo {
namespace {

struct Candidate {
  int nic;
  PathInfo path;
};

std::string gbpsText(double gbps) {
  if (gbps <= 0) return "unknown GB/s";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GB/s", gbps);
  return buf;
}

std::string bridgesText(int n) { return std::to_string(n) + (n == 1 ? " bridge" : " bridges"); }

std::string describe(const Machine& m, const Candidate& c) {
  return m.nics[c.nic].name + " (" + pathClassName(c.path.cls) + ", " + gbpsText(c.path.gbps) +
         ", " + bridgesText(c.path.bridges) + ")";
}

// Narrows `all` to the GPU's tie set and explains what decided it.
std::vector<Candidate> bestCandidates(const Machine& m, const std::vector<Candidate>& all,
                                      std::string* why) {
  // Bandwidth counts only when every candidate's is known; a missing speed
  // must not look slower (or faster) than a known one.
  bool bandwidthKnown =
      std::all_of(all.begin(), all.end(), [](const Candidate& c) { return c.path.gbps > 0; });
  double bestGbps = 0;
  for (const Candidate& c : all) bestGbps = std::max(bestGbps, c.path.gbps);
  std::vector<Candidate> fast;
  for (const Candidate& c : all) {
    if (!bandwidthKnown || c.path.gbps >= bestGbps * kBandwidthTolerance) fast.push_back(c);
  }
  PathClass bestClass = PathClass::kSYS;
  for (const Candidate& c : fast) bestClass = std::min(bestClass, c.path.cls);
  std::vector<Candidate> near;
  for (const Candidate& c : fast) {
    if (c.path.cls == bestClass) near.push_back(c);
  }
  // Bridge count only separates NICs inside the GPU's own switch tree (the
  // NIC in its sub-switch); beyond the host bridge, more bridges on the NIC's
  // side cost no bandwidth, and spreading GPUs over those NICs is worth more.
  bool inSwitchTree = bestClass == PathClass::kPIX || bestClass == PathClass::kPXB;
  int fewestBridges = near.front().path.bridges;
  for (const Candidate& c : near) fewestBridges = std::min(fewestBridges, c.path.bridges);
  std::vector<Candidate> tied;
  for (const Candidate& c : near) {
    if (!inSwitchTree || c.path.bridges == fewestBridges) tied.push_back(c);
  }

  // The reason names the runner-up that lost and the rule that beat it.
  const Candidate* closerButSlower = nullptr;
  for (const Candidate& c : all) {
    if (c.path.cls < bestClass && (!closerButSlower || c.path.cls < closerButSlower->path.cls))
      closerButSlower = &c;
  }
  if (all.size() == 1) {
    *why = "the only usable RDMA NIC";
  } else if (closerButSlower != nullptr) {
    *why = "more bandwidth than the closer " + describe(m, *closerButSlower);
  } else if (near.size() > tied.size()) {
    *why = "fewest bridges among the " + std::to_string(near.size()) + " " +
           pathClassName(bestClass) + " NICs";
  } else if (fast.size() > near.size()) {
    *why = std::string("closest class (") + pathClassName(bestClass) + ")";
  } else if (all.size() > fast.size()) {
    *why = "highest bandwidth";
  } else {
    *why = "all usable NICs are equally near";
  }
  if (!bandwidthKnown && all.size() > 1) *why += "; link speeds unknown, bandwidth not compared";
  return tied;
}

// Identity of the physical adapter a NIC port belongs to, for spreading.
std::string adapterKey(const Machine& m, const Nic& nic) {
  if (nic.pci < 0) return "virtual:" + nic.name;
  PciAddress a = m.pci[nic.pci].addr;
  a.fn = 0;
  return formatBusId(a);
}

std::string joinNames(const Machine& m, const std::vector<Candidate>& list) {
  std::string out;
  for (const Candidate& c : list) out += (out.empty() ? "" : ", ") + m.nics[c.nic].name;
  return out;
}

}  // namespace

std::vector<GpuNic> chooseNics(const Machine& m, const SelectOptions& options) {
  std::vector<GpuNic> result(m.gpus.size());
  std::vector<int> usable;
  int rdmaCount = 0;
  for (size_t n = 0; n < m.nics.size(); ++n) {
    const Nic& nic = m.nics[n];
    if (!isRdma(nic.kind)) continue;
    ++rdmaCount;
    if (options.hcaFilter.allows(nic.name, nic.ports)) usable.push_back(static_cast<int>(n));
  }

  std::vector<std::vector<Candidate>> ties(m.gpus.size());
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    GpuNic& out = result[g];
    if (usable.empty()) {
      out.reason = rdmaCount == 0 ? "no RDMA NIC in this machine"
                                  : "no RDMA NIC passes WEFT_IB_HCA=" + options.hcaFilter.spec();
      out.gdrReason = "no NIC";
      continue;
    }
    std::vector<Candidate> all;
    for (int n : usable) all.push_back({n, gpuNicPath(m, m.gpus[g], m.nics[n])});
    ties[g] = bestCandidates(m, all, &out.reason);
    for (const Candidate& c : ties[g]) out.tied.push_back(c.nic);
  }

  // Most constrained GPUs choose first, so a GPU with one option is not
  // crowded out by one that had several.
  std::vector<size_t> order;
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    if (!ties[g].empty()) order.push_back(g);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ties[a].size() < ties[b].size(); });
  std::map<std::string, int> adapterUse;
  std::vector<int> portUse(m.nics.size(), 0);
  for (size_t g : order) {
    const Candidate* pick = nullptr;
    std::tuple<int, int, int> pickKey;
    for (const Candidate& c : ties[g]) {
      std::tuple<int, int, int> key(adapterUse[adapterKey(m, m.nics[c.nic])], portUse[c.nic],
                                    c.nic);
      if (pick == nullptr || key < pickKey) pick = &c, pickKey = key;
    }
    ++adapterUse[adapterKey(m, m.nics[pick->nic])];
    ++portUse[pick->nic];
    GpuNic& out = result[g];
    out.nic = pick->nic;
    out.path = pick->path;
    std::string head = m.nics[pick->nic].name + ": " + pathClassName(pick->path.cls) + ", " +
                       gbpsText(pick->path.gbps) + ", " + bridgesText(pick->path.bridges) + "; ";
    out.reason = head + out.reason;
    if (ties[g].size() > 1) {
      out.reason += "; tied with " + joinNames(m, ties[g]) +
                    ", spread by use (least-used adapter, then port, then bus order)";
    }
  }

  for (size_t g = 0; g < m.gpus.size(); ++g) {
    GpuNic& out = result[g];
    if (out.nic < 0) continue;
    const char* cls = pathClassName(out.path.cls);
    const char* level = pathClassName(options.gdrLevel);
    if (!m.gpus[g].gdrCapable) {
      out.gdrReason = "off: the topology file marks the GPU gdr=0";
    } else if (!m.nics[out.nic].gdrCapable) {
      out.gdrReason = "off: the topology file marks the NIC gdr=0";
    } else if (out.path.cls <= options.gdrLevel) {
      out.gdr = true;
      out.gdrReason = std::string("on: ") + cls + " is within WEFT_NET_GDR_LEVEL=" + level;
    } else {
      out.gdrReason = std::string("off: ") + cls + " is farther than WEFT_NET_GDR_LEVEL=" + level;
    }
  }
  return result;
}

}  // namespace weft::topo
