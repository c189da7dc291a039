// Standby ranks (bootstrap/standby_pool.h): the pool a launcher serves, the
// wait of a standby, and weftCommReplace, which survivors call after a
// failure: shrink without the dead ranks, then, where enough standbys wait,
// grow back to the old size with a standby in each dead rank's place, so
// that every rank keeps its number. Where too few wait, the survivors go on
// with the shrunk communicator and are told so. The survivors may also ask
// the pool which ranks died, as the launcher saw their processes end.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "bootstrap/standby_pool.h"
#include "core/comm.h"
#include "core/launch_env.h"

using namespace weft;

struct weftStandbyPool {
  std::unique_ptr<StandbyPool> pool;
};

namespace {

// The pool's address (WEFT_STANDBY_ADDR); empty without one.
std::string standbyAddr() { return configString("WEFT_STANDBY_ADDR"); }

// What the survivors' leader learned from the pool, broadcast to the others.
struct ReplaceVerdict {
  int32_t assigned;
  int32_t pad;
  char id[WEFT_UNIQUE_ID_BYTES];
  char why[200];
};

// The leader asks the pool for one standby per dead rank (all or none).
void askPool(int nranks, const std::vector<int>& dead, ReplaceVerdict* verdict) {
  const std::string addr = standbyAddr();
  std::string why = "no standby pool (WEFT_STANDBY_ADDR is not set)";
  bool assigned = false;
  weftUniqueId id;
  if (!addr.empty() && weftGetUniqueId(&id) == weftSuccess &&
      standbyAssign(addr, nranks, dead, id, &assigned, &why) != weftSuccess)
    why = "the standby pool did not answer: " + lastError();
  verdict->assigned = assigned ? 1 : 0;
  if (assigned) std::memcpy(verdict->id, id.internal, sizeof(verdict->id));
  snprintf(verdict->why, sizeof(verdict->why), "%s", why.c_str());
}

// Shrink without the dead ranks, then grow back with standbys (see the file's comment).
weftResult_t replaceKnown(weftComm_t comm, const int* deadRanks, int nDead, weftComm_t* newcomm,
                          int* replaced) {
  int nranks = 0, rank = -1;
  WEFT_CHECK(weftCommCount(comm, &nranks));
  WEFT_CHECK(weftCommUserRank(comm, &rank));
  weftComm_t small = nullptr;
  WEFT_CHECK(weftCommShrink(comm, deadRanks, nDead, &small));
  if (small == nullptr) return weftSuccess;             // this rank is one of the dead
  std::vector<int> dead(deadRanks, deadRanks + nDead);  // valid: shrink accepted it
  std::sort(dead.begin(), dead.end());
  dead.erase(std::unique(dead.begin(), dead.end()), dead.end());
  int smallRank = -1;
  weftCommUserRank(small, &smallRank);
  ReplaceVerdict verdict{};
  if (smallRank == 0) askPool(nranks, dead, &verdict);
  weftResult_t r = weftBcast(&verdict, sizeof(verdict), weftUint8, 0, small, WEFT_STREAM_HOST);
  if (r != weftSuccess) {
    const std::string text = lastError();
    weftCommDestroy(small);
    return setError(r, "weftCommReplace: %s", text.c_str());
  }
  if (!verdict.assigned) {
    verdict.why[sizeof(verdict.why) - 1] = '\0';
    WEFT_WARN(INIT, "weftCommReplace: rank %d: no replacement (%s); going on with %d of %d ranks",
              rank, verdict.why, nranks - static_cast<int>(dead.size()), nranks);
    *newcomm = small;
    return weftSuccess;
  }
  weftUniqueId id;
  std::memcpy(id.internal, verdict.id, sizeof(id.internal));
  r = weftCommGrow(small, nranks, id, rank, newcomm);
  const std::string text = r == weftSuccess ? "" : lastError();
  weftCommDestroy(small);
  if (r != weftSuccess) return setError(r, "weftCommReplace: %s", text.c_str());
  *replaced = static_cast<int>(dead.size());
  return weftSuccess;
}

// Every survivor asks the pool which ranks died and replaces them; survivors
// that asked a moment apart may get different answers (a second death seen
// late), so the shrink inside fails on all of them alike and all ask again.
weftResult_t replaceAskingPool(weftComm_t comm, weftComm_t* newcomm, int* replaced) {
  const std::string addr = standbyAddr();
  if (addr.empty())
    return setError(weftInvalidArgument,
                    "weftCommReplace: deadRanks is NULL, but there is no standby pool to ask "
                    "which ranks died (WEFT_STANDBY_ADDR is not set: weft-run --standby K sets "
                    "it); pass the dead ranks");
  int nranks = 0;
  WEFT_CHECK(weftCommCount(comm, &nranks));
  const Deadline deadline = Deadline::after(comm->config.timeoutSec);
  std::string last = "the pool reported no dead rank";
  weftResult_t lastCode = weftTimeout;
  for (;;) {
    std::vector<int> dead;
    int jobRanks = 0;
    WEFT_CHECK(standbyDeadRanks(addr, &dead, &jobRanks));
    if (jobRanks != nranks)
      return setError(weftInvalidUsage,
                      "weftCommReplace: the pool knows a job of %d ranks and comm has %d; with "
                      "deadRanks NULL, comm must hold the job's ranks",
                      jobRanks, nranks);
    if (!dead.empty()) {
      weftResult_t r =
          replaceKnown(comm, dead.data(), static_cast<int>(dead.size()), newcomm, replaced);
      if (r == weftSuccess) return r;
      last = lastError();
      lastCode = r;
    }
    if (deadline.expired())
      return setError(lastCode,
                      "weftCommReplace: no agreement on the dead ranks within "
                      "WEFT_TIMEOUT: %s",
                      last.c_str());
    usleep(dead.empty() ? 20000 : 100000);
  }
}

}  // namespace

extern "C" {

weftResult_t weftStandbyPoolStart(weftStandbyPool_t* pool, char* addr, size_t len) {
  clearError();
  if (pool == nullptr || addr == nullptr)
    return setError(weftInvalidArgument, "weftStandbyPoolStart: pool or addr is NULL");
  auto made = std::make_unique<weftStandbyPool>();
  std::string text;
  WEFT_CHECK(StandbyPool::start(&made->pool, &text));
  if (text.size() + 1 > len)
    return setError(weftInvalidArgument, "weftStandbyPoolStart: addr must hold %zu bytes",
                    text.size() + 1);
  std::memcpy(addr, text.c_str(), text.size() + 1);
  *pool = made.release();
  return weftSuccess;
}

weftResult_t weftStandbyPoolStop(weftStandbyPool_t pool) {
  clearError();
  delete pool;  // NULL is accepted
  return weftSuccess;
}

weftResult_t weftStandbyLaunched(int* standby) {
  clearError();
  if (standby == nullptr)
    return setError(weftInvalidArgument, "weftStandbyLaunched: standby is NULL");
  *standby = 0;
  bool is = false;
  WEFT_CHECK(launchedAsStandby(&is));
  *standby = is ? 1 : 0;
  return weftSuccess;
}

weftResult_t weftStandbyWait(weftComm_t* comm) {
  clearError();
  if (comm == nullptr) return setError(weftInvalidArgument, "weftStandbyWait: comm is NULL");
  *comm = nullptr;
  const std::string addr = standbyAddr();
  if (addr.empty())
    return setError(weftInvalidArgument,
                    "weftStandbyWait: WEFT_STANDBY_ADDR is not set (the launcher sets it for "
                    "standby processes: weft-run --standby K)");
  StandbyAnswer place{};
  WEFT_CHECK(standbyWait(addr, &place));
  weftUniqueId id;
  std::memcpy(id.internal, place.id, sizeof(id.internal));
  WEFT_INFO(INIT, "standby: joining as rank %d of %d", place.rank, place.nranks);
  return weftCommGrow(nullptr, place.nranks, id, place.rank, comm);
}

weftResult_t weftStandbyPoolRankStarted(weftStandbyPool_t pool, int rank, int nranks, int64_t pid) {
  clearError();
  if (pool == nullptr)
    return setError(weftInvalidArgument, "weftStandbyPoolRankStarted: pool is NULL");
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return setError(weftInvalidArgument,
                    "weftStandbyPoolRankStarted: rank %d of nranks %d is out of range", rank,
                    nranks);
  pool->pool->rankStarted(rank, nranks, pid);
  return weftSuccess;
}

weftResult_t weftStandbyPoolProcessEnded(weftStandbyPool_t pool, int64_t pid) {
  clearError();
  if (pool == nullptr)
    return setError(weftInvalidArgument, "weftStandbyPoolProcessEnded: pool is NULL");
  pool->pool->processEnded(pid);
  return weftSuccess;
}

weftResult_t weftStandbyPoolStandbyStarted(weftStandbyPool_t pool, int64_t pid) {
  clearError();
  if (pool == nullptr)
    return setError(weftInvalidArgument, "weftStandbyPoolStandbyStarted: pool is NULL");
  pool->pool->standbyStarted(pid);
  return weftSuccess;
}

weftResult_t weftCommReplace(weftComm_t comm, const int* deadRanks, int nDead, weftComm_t* newcomm,
                             int* replaced) {
  clearError();
  if (newcomm == nullptr || replaced == nullptr)
    return setError(weftInvalidArgument, "weftCommReplace: newcomm or replaced is NULL");
  *newcomm = nullptr;
  *replaced = 0;
  if (deadRanks == nullptr && nDead == 0) return replaceAskingPool(comm, newcomm, replaced);
  return replaceKnown(comm, deadRanks, nDead, newcomm, replaced);
}

}  // extern "C"
