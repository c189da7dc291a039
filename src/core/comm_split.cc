// weftCommSplit: ranks that pass the same color form a new communicator. Over
// the parent's bootstrap, everyone shares its vote (core/create_vote.h) with
// (color, key): a rank that refused its arguments votes too, so every rank
// fails at once, naming it. Then each color's first member in (key, rank)
// order creates a unique id, a second exchange hands it to the other members,
// and each member joins with weftCommInitRank.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "core/comm.h"
#include "core/create_vote.h"

using namespace weft;

namespace {

struct SplitEntry {
  CreateVote vote;
  int32_t color;
  int32_t key;
  char id[WEFT_UNIQUE_ID_BYTES];
};

// This rank's objection to its own arguments, or "".
std::string refusal(int color, const weftComm_t* newcomm, const void* config) {
  char text[128];
  if (newcomm == nullptr) return "newcomm is NULL";
  if (color < 0 && color != WEFT_SPLIT_NOCOLOR) {
    snprintf(text, sizeof(text), "color=%d must be >= 0 or WEFT_SPLIT_NOCOLOR", color);
    return text;
  }
  if (config != nullptr) return "config must be NULL (reserved)";
  return "";
}

}  // namespace

extern "C" weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm,
                                      void* config) {
  clearError();
  CommCall guard(comm, "weftCommSplit");
  WEFT_CHECK(guard.status());
  if (newcomm != nullptr) *newcomm = nullptr;
  const int n = comm->nranks, me = comm->rank;
  std::vector<SplitEntry> all(n);
  SplitEntry& mine = all[me];
  mine.vote = makeVote(CreateOp::kSplit, ++comm->createCalls, 0);
  const std::string refused = refusal(color, newcomm, config);
  if (!refused.empty()) refuseVote(&mine.vote, refused);
  mine.color = color;
  mine.key = key;
  weftResult_t r = comm->bootstrap->allgather(all.data(), sizeof(SplitEntry));
  if (r != weftSuccess) return setError(r, "weftCommSplit: %s", lastError().c_str());
  if (!refused.empty()) return setError(weftInvalidArgument, "weftCommSplit: %s", refused.c_str());
  std::vector<CreateVote> votes;
  std::vector<int> ranks;
  for (int p = 0; p < n; ++p) {
    votes.push_back(all[p].vote);
    ranks.push_back(p);
  }
  const std::string problem = voteProblem(mine.vote, votes, ranks, "set of arguments");
  if (!problem.empty()) return setError(weftInvalidUsage, "weftCommSplit: %s", problem.c_str());

  std::vector<int> members;  // ranks of the parent in our color, in new-rank order
  for (int p = 0; p < n; ++p)
    if (color != WEFT_SPLIT_NOCOLOR && all[p].color == color) members.push_back(p);
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return all[a].key < all[b].key; });
  bool leader = !members.empty() && members.front() == me;
  if (leader) {
    weftUniqueId id;
    WEFT_CHECK(weftGetUniqueId(&id));
    std::memcpy(mine.id, id.internal, sizeof(id.internal));
  }
  // Second round: the leaders' ids reach their members (the others' slots are ignored).
  WEFT_CHECK(comm->bootstrap->allgather(all.data(), sizeof(SplitEntry)));
  if (color == WEFT_SPLIT_NOCOLOR) return weftSuccess;
  weftUniqueId id;
  std::memcpy(id.internal, all[members.front()].id, sizeof(id.internal));
  int newRank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  r = weftCommInitRank(newcomm, static_cast<int>(members.size()), id, newRank);
  if (r != weftSuccess)
    return setError(r, "weftCommSplit (color %d): %s", color, lastError().c_str());
  return weftSuccess;
}
