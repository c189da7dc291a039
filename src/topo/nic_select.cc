// NIC assignment over all GPUs, and GDR decisions (see nic_select.h).
#include "topo/nic_select.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace weft::topo {
namespace {

using CandidateList = std::vector<NicCandidate>;

// Identity of the physical adapter a NIC port belongs to: the ports of a
// dual-port card (or its PCI functions) are one adapter.
std::string adapterKey(const Machine& m, const Nic& nic) {
  if (nic.pci < 0) return "virtual:" + nic.name;
  PciAddress a = m.pci[nic.pci].addr;
  a.fn = 0;
  return formatBusId(a);
}

std::string joinNames(const Machine& m, const CandidateList& list) {
  std::string out;
  for (const NicCandidate& c : list) out += (out.empty() ? "" : ", ") + m.nics[c.nic].name;
  return out;
}

std::string gpuName(const Machine& m, int g) { return "GPU " + m.pci[m.gpus[g].pci].busId; }

// The near NICs one GPU may take (rule 1 of nic_select.h).
struct Allowance {
  CandidateList nics;
  std::vector<std::pair<int, int>> leftTo;  // (NIC, GPU whose only near adapter it is)
  bool shares = false;                      // all near NICs were such: it shares one
};

std::vector<Allowance> allowNics(const std::vector<CandidateList>& near,
                                 const std::vector<int>& adapterOf) {
  const int gpus = static_cast<int>(near.size());
  std::vector<int> holds(gpus, -1);  // the one adapter a GPU cannot do without
  auto heldByOther = [&](int g, int adapter) {
    for (int h = 0; h < gpus; ++h)
      if (h != g && holds[h] == adapter) return h;
    return -1;
  };
  // Holding only grows, so this ends after at most one change per GPU; bus
  // order makes it the same on every rank.
  for (bool changed = true; changed;) {
    changed = false;
    for (int g = 0; g < gpus; ++g) {
      if (near[g].empty() || holds[g] >= 0) continue;
      std::set<int> own, left;
      for (const NicCandidate& c : near[g]) own.insert(adapterOf[c.nic]);
      for (int a : own)
        if (heldByOther(g, a) < 0) left.insert(a);
      const std::set<int>& only = own.size() == 1 ? own : left;
      if (only.size() == 1) holds[g] = *only.begin(), changed = true;
    }
  }
  std::vector<Allowance> out(gpus);
  for (int g = 0; g < gpus; ++g) {
    for (const NicCandidate& c : near[g]) {
      const int a = adapterOf[c.nic];
      const int other = heldByOther(g, a);
      if (a == holds[g] || other < 0)
        out[g].nics.push_back(c);
      else
        out[g].leftTo.emplace_back(c.nic, other);
    }
    if (out[g].nics.empty() && !near[g].empty()) out[g].nics = near[g], out[g].shares = true;
  }
  return out;
}

std::string allowanceNote(const Machine& m, const Allowance& a) {
  if (a.leftTo.empty()) return "";
  std::string list;
  for (const auto& [nic, gpu] : a.leftTo)
    list += (list.empty() ? "" : ", ") + m.nics[nic].name + " (" + gpuName(m, gpu) + ")";
  if (a.shares)
    return "; every near NIC is the only one another GPU can use (" + list + "): shared";
  return "; leaves other GPUs the only near NIC each can use: " + list;
}

// Rule 3: spreads GPUs over their tie sets and fills in nic, path and reason.
void spreadOverTies(const Machine& m, const std::vector<CandidateList>& ties,
                    const std::vector<int>& adapterOf, std::vector<GpuNic>* result) {
  // Most constrained GPUs choose first, so a GPU with one option is not
  // crowded out by one that had several.
  std::vector<size_t> order;
  for (size_t g = 0; g < ties.size(); ++g) {
    if (!ties[g].empty()) order.push_back(g);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ties[a].size() < ties[b].size(); });
  std::vector<int> adapterUse(m.nics.size(), 0), portUse(m.nics.size(), 0);
  for (size_t g : order) {
    const NicCandidate* pick = nullptr;
    std::tuple<int, int, int> pickKey;
    for (const NicCandidate& c : ties[g]) {
      std::tuple<int, int, int> key(adapterUse[adapterOf[c.nic]], portUse[c.nic], c.nic);
      if (pick == nullptr || key < pickKey) pick = &c, pickKey = key;
    }
    ++adapterUse[adapterOf[pick->nic]];
    ++portUse[pick->nic];
    GpuNic& out = (*result)[g];
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
}

void decideGdr(const Machine& m, const SelectOptions& options, std::vector<GpuNic>* result) {
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    GpuNic& out = (*result)[g];
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
  std::vector<int> adapterOf(m.nics.size(), -1);
  std::map<std::string, int> adapterIds;
  for (size_t n = 0; n < m.nics.size(); ++n) {
    auto inserted = adapterIds.emplace(adapterKey(m, m.nics[n]), static_cast<int>(n));
    adapterOf[n] = inserted.first->second;
  }

  std::vector<CandidateList> all(m.gpus.size()), near(m.gpus.size());
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    if (usable.empty()) {
      result[g].reason = rdmaCount == 0
                             ? "no RDMA NIC in this machine"
                             : "no RDMA NIC passes WEFT_IB_HCA=" + options.hcaFilter.spec();
      result[g].gdrReason = "no NIC";
      continue;
    }
    for (int n : usable) all[g].push_back({n, gpuNicPath(m, m.gpus[g], m.nics[n])});
    near[g] = nearestClass(all[g]);
  }
  std::vector<Allowance> allowed = allowNics(near, adapterOf);
  std::vector<CandidateList> ties(m.gpus.size());
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    if (near[g].empty()) continue;
    ties[g] = preferredNics(m, all[g], allowed[g].nics, &result[g].reason);
    result[g].reason += allowanceNote(m, allowed[g]);
    for (const NicCandidate& c : ties[g]) result[g].tied.push_back(c.nic);
  }
  spreadOverTies(m, ties, adapterOf, &result);
  decideGdr(m, options, &result);
  return result;
}

}  // namespace weft::topo
