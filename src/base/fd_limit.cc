// Descriptor budget (see fd_limit.h).
#include "base/fd_limit.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "base/error.h"
#include "base/log.h"

namespace weft {

size_t openFdCount() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  size_t n = 0;
  while (const dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n > 0 ? n - 1 : 0;  // not the one opendir holds
}

size_t meshSockets(int nranks, int nstreams, int bulkLanes) {
  const size_t peers = nranks > 1 ? static_cast<size_t>(nranks - 1) : 0;
  const size_t lanes = bulkLanes > 0 ? static_cast<size_t>(bulkLanes) : 0;
  return peers * static_cast<size_t>(nstreams < 1 ? 1 : nstreams) * (1 + 2 * lanes);
}

weftResult_t ensureFdRoom(size_t need, size_t want, const char* who, size_t openBefore) {
  static std::mutex mu;  // two communicators' raises must not undo each other
  std::lock_guard<std::mutex> lock(mu);
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return weftSuccess;  // nothing to go by
  const size_t open = openBefore == kCountOpenFds ? openFdCount() : openBefore;
  if (lim.rlim_cur == RLIM_INFINITY || open + want <= lim.rlim_cur) return weftSuccess;
  const rlim_t hard = lim.rlim_max;
  if (hard != RLIM_INFINITY && open + need > hard)
    return setError(weftSystemError,
                    "%s needs at least %zu file descriptors (%zu open now), but RLIMIT_NOFILE "
                    "allows %llu (hard limit %llu): raise it, e.g. `ulimit -n %zu` before "
                    "starting the ranks",
                    who, open + need, open, static_cast<unsigned long long>(lim.rlim_cur),
                    static_cast<unsigned long long>(hard), open + want);
  const rlim_t target = static_cast<rlim_t>(open + want);
  const rlim_t raised = hard == RLIM_INFINITY || target < hard ? target : hard;
  if (raised <= lim.rlim_cur) return weftSuccess;  // already as high as it may go
  const rlim_t old = lim.rlim_cur;
  lim.rlim_cur = raised;
  if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    if (open + need <= old) return weftSuccess;  // the margin is missing, not the need
    return setError(weftSystemError,
                    "%s needs at least %zu file descriptors; raising RLIMIT_NOFILE from %llu "
                    "failed: %s",
                    who, open + need, static_cast<unsigned long long>(old), strerror(errno));
  }
  WEFT_INFO(INIT, "%s: raised RLIMIT_NOFILE from %llu to %llu", who,
            static_cast<unsigned long long>(old), static_cast<unsigned long long>(raised));
  return weftSuccess;
}

}  // namespace weft
