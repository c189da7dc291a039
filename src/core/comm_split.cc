// weftCommSplit: ranks that pass the same color form a new communicator. Over
// the parent's bootstrap, everyone shares (color, key); each color's first
// member in (key, rank) order creates a unique id, which a second exchange
// hands to the other members; then each member joins with weftCommInitRank.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "core/comm.h"

using namespace weft;

namespace {

struct SplitEntry {
  int32_t color;
  int32_t key;
  char id[WEFT_UNIQUE_ID_BYTES];
};

}  // namespace

extern "C" weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm,
                                      void* config) {
  clearError();
  CommCall guard(comm, "weftCommSplit");
  WEFT_CHECK(guard.status());
  if (newcomm == nullptr) return setError(weftInvalidArgument, "weftCommSplit: newcomm is NULL");
  *newcomm = nullptr;
  if (color < 0 && color != WEFT_SPLIT_NOCOLOR)
    return setError(weftInvalidArgument,
                    "weftCommSplit: color=%d must be >= 0 or WEFT_SPLIT_NOCOLOR", color);
  if (config != nullptr)
    return setError(weftInvalidArgument, "weftCommSplit: config must be NULL (reserved)");
  const int n = comm->nranks, me = comm->rank;
  std::vector<SplitEntry> all(n);
  all[me].color = color;
  all[me].key = key;
  WEFT_CHECK(comm->bootstrap->allgather(all.data(), sizeof(SplitEntry)));

  std::vector<int> members;  // ranks of the parent in our color, in new-rank order
  for (int r = 0; r < n; ++r)
    if (color != WEFT_SPLIT_NOCOLOR && all[r].color == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return all[a].key < all[b].key; });
  bool leader = !members.empty() && members.front() == me;
  if (leader) {
    weftUniqueId id;
    WEFT_CHECK(weftGetUniqueId(&id));
    std::memcpy(all[me].id, id.internal, sizeof(id.internal));
  }
  // Second round: the leaders' ids reach their members (the others' slots are ignored).
  WEFT_CHECK(comm->bootstrap->allgather(all.data(), sizeof(SplitEntry)));
  if (color == WEFT_SPLIT_NOCOLOR) return weftSuccess;
  weftUniqueId id;
  std::memcpy(id.internal, all[members.front()].id, sizeof(id.internal));
  int newRank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  weftResult_t r = weftCommInitRank(newcomm, static_cast<int>(members.size()), id, newRank);
  if (r != weftSuccess)
    return setError(r, "weftCommSplit (color %d): %s", color, lastError().c_str());
  return weftSuccess;
}
