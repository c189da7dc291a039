// Standby ranks (bootstrap/standby_pool.h): the pool a launcher serves, the
// wait of a standby, and weftCommReplace, which survivors call after a
// failure: shrink without the dead ranks, then, where enough standbys wait,
// grow back to the old size with a standby in each dead rank's place, so
// that every rank keeps its number. Where too few wait, the survivors go on
// with the shrunk communicator and are told so.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "bootstrap/standby_pool.h"

using namespace weft;

struct weftStandbyPool {
  std::unique_ptr<StandbyPool> pool;
};

namespace {

const char* standbyAddr() { return std::getenv("WEFT_STANDBY_ADDR"); }

// What the survivors' leader learned from the pool, broadcast to the others.
struct ReplaceVerdict {
  int32_t assigned;
  int32_t pad;
  char id[WEFT_UNIQUE_ID_BYTES];
  char why[200];
};

// The leader asks the pool for one standby per dead rank (all or none).
void askPool(int nranks, const std::vector<int>& dead, ReplaceVerdict* verdict) {
  const char* addr = standbyAddr();
  std::string why = "no standby pool (WEFT_STANDBY_ADDR is not set)";
  bool assigned = false;
  weftUniqueId id;
  if (addr != nullptr && weftGetUniqueId(&id) == weftSuccess &&
      standbyAssign(addr, nranks, dead, id, &assigned, &why) != weftSuccess)
    why = "the standby pool did not answer: " + lastError();
  verdict->assigned = assigned ? 1 : 0;
  if (assigned) std::memcpy(verdict->id, id.internal, sizeof(verdict->id));
  snprintf(verdict->why, sizeof(verdict->why), "%s", why.c_str());
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

weftResult_t weftStandbyWait(weftComm_t* comm) {
  clearError();
  if (comm == nullptr) return setError(weftInvalidArgument, "weftStandbyWait: comm is NULL");
  *comm = nullptr;
  const char* addr = standbyAddr();
  if (addr == nullptr)
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

weftResult_t weftCommReplace(weftComm_t comm, const int* deadRanks, int nDead, weftComm_t* newcomm,
                             int* replaced) {
  clearError();
  if (newcomm == nullptr || replaced == nullptr)
    return setError(weftInvalidArgument, "weftCommReplace: newcomm or replaced is NULL");
  *newcomm = nullptr;
  *replaced = 0;
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

}  // extern "C"
