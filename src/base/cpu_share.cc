// The CPUs a rank may run on, and the node verdict (see cpu_share.h).
#include "base/cpu_share.h"

#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/read_line.h"

namespace weft {
namespace {

std::atomic<bool> gOversubscribedSeen{false};

// Ceiling of quota/period in CPUs; 0 for anything unparsable or unlimited.
int cpusOf(const std::string& quota, const std::string& period) {
  char* end = nullptr;
  const long long q = std::strtoll(quota.c_str(), &end, 10);
  if (quota.empty() || *end != '\0' || q <= 0) return 0;
  const long long p = std::strtoll(period.c_str(), &end, 10);
  if (period.empty() || *end != '\0' || p <= 0) return 0;
  return static_cast<int>((q + p - 1) / p);
}

// The tighter of two quotas, where 0 is none.
int tighter(int a, int b) { return a == 0 || (b > 0 && b < a) ? b : a; }

// The smallest quota on `path` and its ancestors under `root`; 0: none.
// Walking up also finds a container's own cgroup when /proc/self/cgroup
// names the host's path for it (cgroup v1 without a cgroup namespace).
template <class ReadQuota>
int smallestQuotaUp(const std::string& root, std::string path, ReadQuota readQuota) {
  int best = 0;
  for (;;) {
    best = tighter(best, readQuota(root + path));
    if (path.empty() || path == "/") return best;
    const size_t cut = path.find_last_of('/');
    path = cut == std::string::npos || cut == 0 ? "/" : path.substr(0, cut);
  }
}

bool listsController(const std::string& controllers, const char* name) {
  std::stringstream in(controllers);
  std::string c;
  while (std::getline(in, c, ','))
    if (c == name) return true;
  return false;
}

// The quota of this process's cgroup: v2 (the "0::" line) or v1 (the line
// that lists the cpu controller).
int readQuotaCpus() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  int best = 0;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (id == "0" && controllers.empty()) {
      best = tighter(best, smallestQuotaUp("/sys/fs/cgroup", path, [](const std::string& dir) {
                       return quotaCpusFromCpuMax(readFirstLine(dir + "/cpu.max"));
                     }));
    } else if (listsController(controllers, "cpu")) {
      for (const char* root : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"})
        best = tighter(best, smallestQuotaUp(root, path, [](const std::string& dir) {
                         return quotaCpusFromV1(readFirstLine(dir + "/cpu.cfs_quota_us"),
                                                readFirstLine(dir + "/cpu.cfs_period_us"));
                       }));
    }
  }
  return best;
}

}  // namespace

int quotaCpusFromCpuMax(const std::string& cpuMax) {
  const size_t space = cpuMax.find(' ');
  if (space == std::string::npos) return 0;
  return cpusOf(cpuMax.substr(0, space), cpuMax.substr(space + 1));
}

int quotaCpusFromV1(const std::string& quotaUs, const std::string& periodUs) {
  return cpusOf(quotaUs, periodUs);
}

CpuShare readCpuShare() {
  CpuShare share{};
  cpu_set_t set;
  CPU_ZERO(&set);
  // A machine with more CPUs than cpu_set_t holds fails here: unknown, no limit.
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < 64 * CpuShare::kMaskWords; ++cpu)
      if (CPU_ISSET(cpu, &set)) share.mask[cpu / 64] |= uint64_t{1} << (cpu % 64);
  share.quotaCpus = readQuotaCpus();
  share.oversubscribedSeen = gOversubscribedSeen.load(std::memory_order_relaxed) ? 1 : 0;
  return share;
}

NodeCpus judgeNodeCpus(const std::vector<uint64_t>& nodes, const std::vector<CpuShare>& shares,
                       int me) {
  NodeCpus verdict;
  uint64_t cpuUnion[CpuShare::kMaskWords] = {};
  bool maskKnown = true, seen = false;
  int quota = 0;  // the largest quota, if every rank has one
  bool everyQuota = true;
  for (size_t r = 0; r < nodes.size(); ++r) {
    if (nodes[r] != nodes[me]) continue;
    ++verdict.ranks;
    const CpuShare& s = shares[r];
    bool any = false;
    for (int w = 0; w < CpuShare::kMaskWords; ++w) {
      cpuUnion[w] |= s.mask[w];
      any = any || s.mask[w] != 0;
    }
    maskKnown = maskKnown && any;
    everyQuota = everyQuota && s.quotaCpus > 0;
    if (s.quotaCpus > quota) quota = s.quotaCpus;
    seen = seen || s.oversubscribedSeen != 0;
  }
  int cpus = 0;
  if (maskKnown)
    for (uint64_t w : cpuUnion) cpus += __builtin_popcountll(w);
  if (everyQuota && quota > 0 && (cpus == 0 || quota < cpus)) cpus = quota;
  verdict.cpus = cpus;
  verdict.oversubscribed = seen || (cpus > 0 && verdict.ranks > cpus);
  return verdict;
}

void noteOversubscribed() { gOversubscribedSeen.store(true, std::memory_order_relaxed); }

}  // namespace weft
