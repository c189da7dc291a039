// weftCommShrink: the ranks that survive a failure build a new communicator
// without the excluded (dead) ones. It works on a broken communicator: it
// never uses the data channels or the bootstrap ring (both may lead through
// a dead rank), only the bootstrap's point-to-point connections between
// survivors. Every other survivor connects to the lowest survivor (the
// leader) and sends its vote (core/create_vote.h): the call's count and a
// digest of its exclude list, or the sentence of its refusal. The leader
// answers each with the verdict: a fresh unique id, or the sentence of the
// first disagreement, so a refusal fails every survivor at once. Then the
// survivors initialise the new communicator with their rank among the
// survivors, in the old rank order.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/wait.h"
#include "bootstrap/socket.h"
#include "bootstrap/wire.h"
#include "core/comm.h"
#include "core/create_vote.h"

using namespace weft;

namespace {

// The bootstrap tag of shrink connections (above the transports').
constexpr uint32_t kTagShrink = 0x53480000;

// Leader -> survivor: a unique id, or (failed != 0) the sentence why not.
struct ShrinkVerdict {
  char id[WEFT_UNIQUE_ID_BYTES];
  int32_t failed;
  char why[300];
};

uint64_t digest(const std::vector<bool>& excluded) {
  std::vector<int32_t> ranks;  // the excluded rank numbers, ascending
  for (size_t r = 0; r < excluded.size(); ++r)
    if (excluded[r]) ranks.push_back(static_cast<int32_t>(r));
  return fnv1a(ranks.data(), ranks.size() * sizeof(int32_t));
}

void setWhy(ShrinkVerdict* v, const std::string& why) {
  v->failed = 1;
  copyText(v->why, why);
}

// The leader: gathers every survivor's vote, judges them with its own, and
// sends each the verdict (the id in `verdict` when they agree).
weftResult_t leadVote(weftComm* comm, const std::vector<int>& survivors, const CreateVote& mine,
                      ShrinkVerdict* verdict) {
  Bootstrap& bs = *comm->bootstrap;
  const Deadline deadline = Deadline::fromConfig();
  std::vector<int> fds(survivors.size(), -1);
  std::vector<CreateVote> votes(survivors.size());
  weftResult_t r = weftSuccess;
  for (size_t i = 1; i < survivors.size() && r == weftSuccess; ++i) {
    const std::string who = bs.peerName(survivors[i]);
    r = bs.acceptPeer(survivors[i], kTagShrink, &fds[i]);
    if (r == weftSuccess)
      r = recvAll(fds[i], &votes[i], sizeof(CreateVote), deadline, &comm->aborted, who.c_str());
  }
  std::string problem;
  if (r == weftSuccess) {
    std::vector<CreateVote> others(votes.begin() + 1, votes.end());
    std::vector<int> ranks(survivors.begin() + 1, survivors.end());
    problem = mine.refused ? "rank " + std::to_string(comm->rank) + " refused its arguments (" +
                                 mine.why + "), so no rank created a communicator"
                           : voteProblem(mine, others, ranks, "excludeRanks set");
    if (!problem.empty()) setWhy(verdict, problem);
  } else {
    setWhy(verdict, "the leader (rank " + std::to_string(comm->rank) +
                        ") could not hear every survivor: " + lastError());
  }
  for (size_t i = 1; i < survivors.size(); ++i) {
    if (fds[i] < 0) continue;
    sendAll(fds[i], verdict, sizeof(*verdict), deadline, &comm->aborted, "a survivor");
    closeFd(&fds[i]);
  }
  if (r != weftSuccess) return r;
  if (mine.refused) return setError(weftInvalidArgument, "%s", mine.why);
  if (!problem.empty()) return setError(weftInvalidUsage, "%s", problem.c_str());
  return weftSuccess;
}

// A survivor other than the leader: votes, then takes the leader's verdict.
weftResult_t followVote(weftComm* comm, int leader, const CreateVote& mine,
                        ShrinkVerdict* verdict) {
  Bootstrap& bs = *comm->bootstrap;
  const Deadline deadline = Deadline::fromConfig();
  const std::string who = bs.peerName(leader);
  int fd = -1;
  WEFT_CHECK(bs.connectPeer(leader, kTagShrink, &fd));
  weftResult_t r = sendAll(fd, &mine, sizeof(mine), deadline, &comm->aborted, who.c_str());
  if (r == weftSuccess)
    r = recvAll(fd, verdict, sizeof(*verdict), deadline, &comm->aborted, who.c_str());
  closeFd(&fd);
  WEFT_CHECK(r);
  if (mine.refused) return setError(weftInvalidArgument, "%s", mine.why);
  if (verdict->failed) {
    verdict->why[sizeof(verdict->why) - 1] = '\0';
    return setError(weftInvalidUsage, "%s", verdict->why);
  }
  return weftSuccess;
}

// This rank's objection to its own arguments, or "". Marks the valid
// entries of excludeRanks in `excluded` even then, so that a refusing rank
// still finds the leader the others vote with.
std::string refusal(const weftComm* comm, const int* excludeRanks, int nExclude,
                    const weftComm_t* newcomm, std::vector<bool>* excluded) {
  const int n = comm->nranks;
  char text[160] = "";
  if (nExclude < 0)
    snprintf(text, sizeof(text), "nExclude=%d is negative", nExclude);
  else if (nExclude > 0 && excludeRanks == nullptr)
    snprintf(text, sizeof(text), "excludeRanks is NULL with nExclude=%d", nExclude);
  for (int i = 0; excludeRanks != nullptr && i < nExclude; ++i) {
    if (excludeRanks[i] >= 0 && excludeRanks[i] < n) {
      (*excluded)[excludeRanks[i]] = true;
    } else if (text[0] == '\0') {
      snprintf(text, sizeof(text), "excludeRanks[%d]=%d is not a rank of this communicator (0..%d)",
               i, excludeRanks[i], n - 1);
    }
  }
  if (text[0] == '\0' && newcomm == nullptr) return "newcomm is NULL";
  return text;
}

}  // namespace

extern "C" weftResult_t weftCommShrink(weftComm_t comm, const int* excludeRanks, int nExclude,
                                       weftComm_t* newcomm) {
  clearError();
  CommCall guard(comm, "weftCommShrink");
  WEFT_CHECK(guard.status());
  if (newcomm != nullptr) *newcomm = nullptr;
  const int n = comm->nranks;
  std::vector<bool> excluded(n, false);
  const std::string refused = refusal(comm, excludeRanks, nExclude, newcomm, &excluded);
  std::vector<int> survivors;
  for (int r = 0; r < n; ++r)
    if (!excluded[r]) survivors.push_back(r);
  if (survivors.empty())  // nobody to tell
    return setError(weftInvalidArgument, "weftCommShrink: excludeRanks excludes all %d ranks", n);
  if (excluded[comm->rank]) {  // an excluded caller gets NULL, like NOCOLOR
    if (refused.empty()) return weftSuccess;
    return setError(weftInvalidArgument, "weftCommShrink: %s", refused.c_str());
  }
  CreateVote mine = makeVote(CreateOp::kShrink, ++comm->createCalls, digest(excluded));
  if (!refused.empty()) refuseVote(&mine, refused);
  ShrinkVerdict verdict{};
  const bool leader = survivors.front() == comm->rank;
  if (leader && refused.empty()) {
    weftUniqueId id;
    if (weftGetUniqueId(&id) == weftSuccess)
      std::memcpy(verdict.id, id.internal, sizeof(verdict.id));
    else
      refuseVote(&mine, "the leader could not create a unique id: " + lastError());
  }
  weftResult_t r = leader ? leadVote(comm, survivors, mine, &verdict)
                          : followVote(comm, survivors.front(), mine, &verdict);
  if (r != weftSuccess) return setError(r, "weftCommShrink: %s", lastError().c_str());
  weftUniqueId id;
  std::memcpy(id.internal, verdict.id, sizeof(id.internal));
  int newRank = 0;
  while (survivors[newRank] != comm->rank) ++newRank;
  r = weftCommInitRank(newcomm, static_cast<int>(survivors.size()), id, newRank);
  if (r != weftSuccess) return setError(r, "weftCommShrink: %s", lastError().c_str());
  return weftSuccess;
}
