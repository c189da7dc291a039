// The sharing probe (see share_probe.h).
#include "collectives/share_probe.h"

#include <cstring>

#include "base/error.h"
#include "base/host_memory.h"
#include "transports/shm/peer_memory.h"

namespace weft {
namespace {

const uint64_t kShareWord = 0x5745465453484152ull;  // written in every rank's probe page

}  // namespace

weftResult_t probeSharing(LocalBoard* board, const std::vector<pid_t>& pids,
                          const FlowRunOptions& run, bool* shared) {
  const int n = board->nranks(), me = board->rank();
  void* page = nullptr;
  HostRegion mine;
  if (hostAlloc(4096, &page) == weftSuccess) {
    std::memcpy(page, &kShareWord, sizeof(kShareWord));
    mine = findHostRegion(page, 4096);
  }
  int slot = 0;
  weftResult_t r = board->publishAndWait(&mine, sizeof(mine), run, &slot);
  bool ok = r == weftSuccess && mine.inode != 0;
  {
    PeerMemory peers(n);  // unmapped when this scope ends
    for (int p = 0; r == weftSuccess && ok && p < n; ++p) {
      if (p == me) continue;
      HostRegion theirs;
      std::memcpy(&theirs, board->slotOf(p, slot), sizeof(theirs));
      char* view = nullptr;
      uint64_t word = 0;
      if (theirs.inode == 0 || peers.resolve(p, pids[p], theirs, theirs.base, &view) != weftSuccess)
        ok = false;
      else
        std::memcpy(&word, view, sizeof(word));
      ok = ok && word == kShareWord;
    }
    // Everyone must agree; after this barrier nobody reads our page any more.
    *shared = false;
    if (r == weftSuccess) r = board->agree(ok, run, shared);
  }
  if (page != nullptr) hostFree(page);
  if (r != weftSuccess) return r;
  clearError();  // a failed probe is not an error: the ranks share nothing
  return weftSuccess;
}

}  // namespace weft
