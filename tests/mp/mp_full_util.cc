// Small helpers shared by the checks of mp_coll_full (see mp_full.h).
#include <algorithm>

#include "mp_full.h"

namespace mp {

size_t largeBlock(const Job& job) { return (job.largeCount / static_cast<size_t>(job.nranks)) | 1; }

std::vector<int> testRoots(int nranks) {
  std::vector<int> roots = {0, nranks / 2, nranks - 1};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

bool callOk(const Job& job, Log& log, const std::string& what, weftResult_t r) {
  if (r == weftSuccess) return true;
  log.fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
  return false;
}

}  // namespace mp
