// Peers' host allocations (weftHostAlloc) mapped into this process, so that
// the single-copy collectives load from and store to a peer's buffer directly.
//
// A peer publishes where its buffer lies (base/host_memory.h's HostRegion); we
// open the memfd behind it through /proc/<pid>/fd/<fd> (the same permission
// that cross-memory attach needs), check that the inode is the one published
// (a descriptor number may have been reused), and map it whole. Mappings are
// cached per peer by inode: an inode cannot be reused while our mapping keeps
// the file alive, so a cached mapping is never stale, only possibly unneeded.
// When a peer's count of frees changes we drop the mappings whose file the
// peer no longer holds, so its freed memory goes back within one call; the
// cache is also bounded per peer (least recently used goes first).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/host_memory.h"
#include "weft/weft.h"

namespace weft {

class PeerMemory {
 public:
  static constexpr size_t kMaxMappingsPerPeer = 32;

  explicit PeerMemory(int nranks) : peers_(nranks), seenFrees_(nranks, 0) {}
  ~PeerMemory();
  PeerMemory(const PeerMemory&) = delete;
  PeerMemory& operator=(const PeerMemory&) = delete;

  // *local = our address for `addr` in rank `peer`'s (process `pid`) memory,
  // which lies in `region`; nullptr when region.inode is 0 (not shareable).
  // Fails, naming the peer, when the published allocation cannot be mapped.
  weftResult_t resolve(int peer, pid_t pid, const HostRegion& region, uint64_t addr, char** local);
  // The peer reported `frees` frees so far: if that changed, unmap what it let go.
  void noteFrees(int peer, pid_t pid, uint64_t frees);
  size_t mappedCount(int peer) const { return peers_[peer].size(); }

 private:
  struct Mapping {
    uint64_t inode, device;
    int64_t fd;  // the peer's descriptor number, to re-check it
    char* ptr;
    size_t bytes;
    uint64_t lastUse;
  };
  weftResult_t map(int peer, pid_t pid, const HostRegion& region, Mapping* out);

  std::vector<std::vector<Mapping>> peers_;
  std::vector<uint64_t> seenFrees_;
  uint64_t clock_ = 0;  // orders uses for the least-recently-used eviction
};

}  // namespace weft
