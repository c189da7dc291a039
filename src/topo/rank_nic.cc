// See rank_nic.h.
#include "topo/rank_nic.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>

#include "base/read_line.h"

namespace weft::topo {

std::vector<int> parseCpuList(const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    const std::string part = text.substr(pos, comma == std::string::npos ? comma : comma - pos);
    int lo = -1, hi = -1;
    char extra = 0;
    const int fields = std::sscanf(part.c_str(), "%d-%d%c", &lo, &hi, &extra);
    if (fields == 1) hi = lo;
    if ((fields == 1 || fields == 2) && lo >= 0 && hi >= lo && hi - lo < 65536)
      for (int c = lo; c <= hi; ++c) out.push_back(c);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string formatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string intersectCpuLists(const std::string& a, const std::string& b) {
  const std::vector<int> x = parseCpuList(a), y = parseCpuList(b);
  std::vector<int> both;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
  return formatCpuList(both);
}

std::string currentCpuAffinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "";
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return formatCpuList(cpus);
}

std::string verbsDeviceLocalCpus(const std::string& ibvName, const std::string& sysfsRoot) {
  const std::string line =
      readFirstLine(sysfsRoot + "/class/infiniband/" + ibvName + "/device/local_cpulist");
  if (line.empty()) return "";
  return formatCpuList(parseCpuList(line));
}

namespace {

// CPUs local to candidate i: the topology's, else the kernel's.
std::string candidateCpus(const Topology* topo, const std::vector<int>& nicOf,
                          const RankNicRequest& req, int i) {
  if (topo != nullptr && nicOf[i] >= 0) {
    const Machine& m = topo->machine;
    const int loc = m.localityOf(m.nics[nicOf[i]]);
    if (loc >= 0) return m.localities[loc].cpus;
  }
  return static_cast<size_t>(i) < req.candidateCpus.size() ? req.candidateCpus[i] : "";
}

// Spreads a node's ranks over `pool` (indexes into the candidates).
int spread(const std::vector<int>& pool, const RankNicRequest& req, std::string* how) {
  const int pick = pool[static_cast<size_t>(req.localIndex) % pool.size()];
  if (pool.size() > 1) {
    *how = "local rank " + std::to_string(req.localIndex) + " of " +
           std::to_string(req.localRanks) + " spread over " + std::to_string(pool.size()) +
           " equally near devices";
  }
  return pick;
}

}  // namespace

RankNicChoice chooseRankNic(const Topology* topo, const std::string& topoWhyNot,
                            const RankNicRequest& req) {
  RankNicChoice out;
  const int n = static_cast<int>(req.candidates.size());
  if (n == 0) return out;
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  std::vector<int> nicOf(n, -1);  // candidate -> Machine::nics index
  for (int i = 0; topo != nullptr && i < n; ++i)
    nicOf[i] = findNicByName(topo->machine, req.candidates[i]);

  std::string gpuNote;
  if (!req.gpu.empty() && topo == nullptr) {
    gpuNote = "GPU " + req.gpu + " cannot be placed: no topology (" + topoWhyNot + ")";
  } else if (!req.gpu.empty()) {
    const Machine& m = topo->machine;
    const int g = findGpu(m, req.gpu);
    const GpuNic* gn = g >= 0 ? &topo->gpuNics[g] : nullptr;
    int chosen = -1;
    for (int i = 0; gn != nullptr && i < n; ++i)
      if (nicOf[i] >= 0 && nicOf[i] == gn->nic) chosen = i;
    if (chosen >= 0) {
      out.index = chosen;
      out.gdr = gn->gdr;
      out.reason = "nearest to GPU " + req.gpu + ": " + gn->reason + "; GDR " +
                   (gn->gdr ? "on" : "off") + " (" + gn->gdrReason + ")";
      const Locality* loc = gpuLocality(m, g);
      out.nearCpus = intersectCpuLists(loc != nullptr ? loc->cpus : "", req.allowedCpus);
      return out;
    }
    gpuNote = g < 0 ? "GPU " + req.gpu + " is not in the topology"
                    : "GPU " + req.gpu + "'s nearest NIC is not usable here";
  }

  // No GPU (or none we can place): devices local to the CPUs we may run on.
  std::vector<int> near;
  for (int i = 0; i < n; ++i)
    if (!intersectCpuLists(candidateCpus(topo, nicOf, req, i), req.allowedCpus).empty())
      near.push_back(i);
  std::string how;
  out.index = spread(near.empty() ? all : near, req, &how);
  out.reason =
      (gpuNote.empty() ? std::string("no GPU for this rank") : gpuNote) + "; " +
      (near.empty() ? "no device is local to this process's CPUs"
                    : std::to_string(near.size()) + " device(s) local to this process's CPUs") +
      (how.empty() ? "" : "; " + how);
  out.nearCpus = intersectCpuLists(candidateCpus(topo, nicOf, req, out.index), req.allowedCpus);
  return out;
}

}  // namespace weft::topo
