// weftCommShrink: the ranks that survive a failure build a new communicator
// without the excluded (dead) ones. It works on a broken communicator: it
// never uses the data channels or the bootstrap ring (both may lead through
// a dead rank), only the bootstrap's point-to-point connections between
// survivors. The lowest surviving rank creates a fresh unique id and hands it
// to every other survivor over an authenticated bootstrap connection,
// together with a digest of its exclude list (survivors that disagree on who
// is gone get weftInvalidUsage rather than a communicator of the wrong size);
// then the survivors initialise the new communicator with their rank among
// the survivors, in the old rank order.
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/wait.h"
#include "bootstrap/socket.h"
#include "core/comm.h"

using namespace weft;

namespace {

// Bootstrap tags above the transports' (kTagTransportBase + peer*streams...).
constexpr uint32_t kTagShrinkBase = 0x53480000;

struct ShrinkOffer {
  char id[WEFT_UNIQUE_ID_BYTES];
  uint64_t excludeDigest;  // of the sorted, de-duplicated exclude list
  int32_t survivors;
  int32_t pad;
};

uint64_t digest(const std::vector<bool>& excluded) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the excluded rank numbers
  for (size_t r = 0; r < excluded.size(); ++r)
    if (excluded[r]) {
      h ^= r + 1;
      h *= 1099511628211ull;
    }
  return h;
}

weftResult_t exchangeOffer(weftComm* comm, const std::vector<int>& survivors, uint32_t tag,
                           ShrinkOffer* offer) {
  Bootstrap& bs = *comm->bootstrap;
  const Deadline deadline = Deadline::fromConfig();
  if (survivors.front() == comm->rank) {
    for (size_t i = 1; i < survivors.size(); ++i) {
      int fd = -1;
      std::string who = bs.peerName(survivors[i]);
      WEFT_CHECK(bs.connectPeer(survivors[i], tag, &fd));
      weftResult_t r = sendAll(fd, offer, sizeof(*offer), deadline, &comm->aborted, who.c_str());
      closeFd(&fd);
      WEFT_CHECK(r);
    }
    return weftSuccess;
  }
  int fd = -1;
  std::string who = bs.peerName(survivors.front());
  WEFT_CHECK(bs.acceptPeer(survivors.front(), tag, &fd));
  ShrinkOffer got;
  weftResult_t r = recvAll(fd, &got, sizeof(got), deadline, &comm->aborted, who.c_str());
  closeFd(&fd);
  WEFT_CHECK(r);
  if (got.excludeDigest != offer->excludeDigest || got.survivors != offer->survivors)
    return setError(weftInvalidUsage,
                    "weftCommShrink: rank %d excludes a different set of ranks than this rank "
                    "(%d): every survivor must pass the same excludeRanks",
                    survivors.front(), comm->rank);
  *offer = got;
  return weftSuccess;
}

}  // namespace

extern "C" weftResult_t weftCommShrink(weftComm_t comm, const int* excludeRanks, int nExclude,
                                       weftComm_t* newcomm) {
  clearError();
  CommCall guard(comm, "weftCommShrink");
  WEFT_CHECK(guard.status());
  if (newcomm == nullptr) return setError(weftInvalidArgument, "weftCommShrink: newcomm is NULL");
  *newcomm = nullptr;
  if (nExclude < 0)
    return setError(weftInvalidArgument, "weftCommShrink: nExclude=%d is negative", nExclude);
  if (nExclude > 0 && excludeRanks == nullptr)
    return setError(weftInvalidArgument, "weftCommShrink: excludeRanks is NULL with nExclude=%d",
                    nExclude);
  const int n = comm->nranks;
  std::vector<bool> excluded(n, false);
  for (int i = 0; i < nExclude; ++i) {
    if (excludeRanks[i] < 0 || excludeRanks[i] >= n)
      return setError(weftInvalidArgument,
                      "weftCommShrink: excludeRanks[%d]=%d is not a rank of this communicator "
                      "(0..%d)",
                      i, excludeRanks[i], n - 1);
    excluded[excludeRanks[i]] = true;
  }
  std::vector<int> survivors;
  for (int r = 0; r < n; ++r)
    if (!excluded[r]) survivors.push_back(r);
  if (survivors.empty())
    return setError(weftInvalidArgument, "weftCommShrink: excludeRanks excludes all %d ranks", n);
  if (excluded[comm->rank]) return weftSuccess;  // an excluded caller gets NULL, like NOCOLOR

  ShrinkOffer offer{};
  offer.excludeDigest = digest(excluded);
  offer.survivors = static_cast<int32_t>(survivors.size());
  if (survivors.front() == comm->rank) {
    weftUniqueId id;
    WEFT_CHECK(weftGetUniqueId(&id));
    std::memcpy(offer.id, id.internal, sizeof(offer.id));
  }
  const uint32_t tag = kTagShrinkBase + ++comm->shrinks;
  weftResult_t r = exchangeOffer(comm, survivors, tag, &offer);
  if (r != weftSuccess) return setError(r, "weftCommShrink: %s", lastError().c_str());
  weftUniqueId id;
  std::memcpy(id.internal, offer.id, sizeof(id.internal));
  int newRank = 0;
  while (survivors[newRank] != comm->rank) ++newRank;
  r = weftCommInitRank(newcomm, static_cast<int>(survivors.size()), id, newRank);
  if (r != weftSuccess) return setError(r, "weftCommShrink: %s", lastError().c_str());
  return weftSuccess;
}
