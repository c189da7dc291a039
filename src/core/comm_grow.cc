// weftCommGrow: a communicator of more ranks, made of an existing one's ranks
// and ranks that join it (standbys started with the job, or new processes).
// The existing ranks first agree, over their communicator's bootstrap, that
// they make the same grow (core/create_vote.h: the call's count and a digest
// of nranks and the id), and that no two of them take the same new rank;
// a refusal fails every one of them at once. Then every participant, joining
// or not, initialises the new communicator with the id. Whoever made the id
// serves its rendezvous; the root refuses two processes claiming one rank,
// so a joining rank that takes an existing rank's place fails everyone.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "bootstrap/wire.h"
#include "core/comm.h"
#include "core/create_vote.h"

using namespace weft;

namespace {

struct GrowEntry {
  CreateVote vote;
  int32_t newRank;
  int32_t pad;
};

uint64_t digest(int nranks, const weftUniqueId& id) {
  struct {
    int32_t nranks;
    char id[WEFT_UNIQUE_ID_BYTES];
  } shared;
  std::memset(&shared, 0, sizeof(shared));
  shared.nranks = nranks;
  std::memcpy(shared.id, id.internal, sizeof(shared.id));
  return fnv1a(&shared, sizeof(shared));
}

// An existing rank's objection to its own arguments, or "".
std::string refusal(const weftComm* comm, int nranks, int newRank, const weftComm_t* newcomm) {
  char text[160];
  if (newcomm == nullptr) return "newcomm is NULL";
  if (nranks < comm->nranks) {
    snprintf(text, sizeof(text), "nranks=%d is fewer than the communicator's %d ranks", nranks,
             comm->nranks);
    return text;
  }
  if (newRank < 0 || newRank >= nranks) {
    snprintf(text, sizeof(text), "rank=%d must be -1 (keep this rank's) or in [0, nranks=%d)",
             newRank, nranks);
    return text;
  }
  return "";
}

// The first two existing ranks that chose the same new rank, as a sentence.
std::string duplicateRank(const std::vector<GrowEntry>& all) {
  for (size_t a = 0; a < all.size(); ++a)
    for (size_t b = a + 1; b < all.size(); ++b)
      if (all[a].newRank == all[b].newRank)
        return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " both take rank " +
               std::to_string(all[a].newRank) + " of the grown communicator";
  return "";
}

weftResult_t growExisting(weftComm* comm, int nranks, const weftUniqueId& id, int rank,
                          weftComm_t* newcomm) {
  CommCall guard(comm, "weftCommGrow");
  WEFT_CHECK(guard.status());
  const int newRank = rank == -1 ? comm->rank : rank;
  std::vector<GrowEntry> all(static_cast<size_t>(comm->nranks));
  GrowEntry& mine = all[static_cast<size_t>(comm->rank)];
  mine.vote = makeVote(CreateOp::kGrow, ++comm->createCalls, digest(nranks, id));
  const std::string refused = refusal(comm, nranks, newRank, newcomm);
  if (!refused.empty()) refuseVote(&mine.vote, refused);
  mine.newRank = newRank;
  weftResult_t r = comm->bootstrap->allgather(all.data(), sizeof(GrowEntry));
  if (r != weftSuccess) return setError(r, "weftCommGrow: %s", lastError().c_str());
  if (!refused.empty()) return setError(weftInvalidArgument, "weftCommGrow: %s", refused.c_str());
  std::vector<CreateVote> votes;
  std::vector<int> ranks;
  for (int p = 0; p < comm->nranks; ++p) {
    votes.push_back(all[static_cast<size_t>(p)].vote);
    ranks.push_back(p);
  }
  std::string problem = voteProblem(mine.vote, votes, ranks, "nranks or id");
  if (problem.empty()) problem = duplicateRank(all);
  if (!problem.empty()) return setError(weftInvalidUsage, "weftCommGrow: %s", problem.c_str());
  r = weftCommInitRank(newcomm, nranks, id, newRank);
  if (r != weftSuccess) return setError(r, "weftCommGrow: %s", lastError().c_str());
  return weftSuccess;
}

}  // namespace

extern "C" weftResult_t weftCommGrow(weftComm_t comm, int nranks, weftUniqueId id, int rank,
                                     weftComm_t* newcomm) {
  clearError();
  if (newcomm != nullptr && comm == nullptr) *newcomm = nullptr;
  if (comm != nullptr) return growExisting(comm, nranks, id, rank, newcomm);
  // A joining rank: nothing to agree with before the rendezvous.
  if (newcomm == nullptr) return setError(weftInvalidArgument, "weftCommGrow: newcomm is NULL");
  if (rank < 0 || rank >= nranks)
    return setError(weftInvalidArgument,
                    "weftCommGrow: rank=%d must be in [0, nranks=%d) for a joining rank "
                    "(comm is NULL)",
                    rank, nranks);
  weftResult_t r = weftCommInitRank(newcomm, nranks, id, rank);
  if (r != weftSuccess) return setError(r, "weftCommGrow (joining): %s", lastError().c_str());
  return weftSuccess;
}
