// Mapping peers' host allocations (see peer_memory.h).
#include "transports/shm/peer_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "base/log.h"

namespace weft {
namespace {

void fdPath(pid_t pid, int64_t fd, char* out, size_t len) {
  std::snprintf(out, len, "/proc/%d/fd/%lld", static_cast<int>(pid), static_cast<long long>(fd));
}

}  // namespace

PeerMemory::~PeerMemory() {
  for (auto& maps : peers_)
    for (Mapping& m : maps) munmap(m.ptr, m.bytes);
}

weftResult_t PeerMemory::map(int peer, pid_t pid, const HostRegion& region, Mapping* out) {
  char path[64];
  fdPath(pid, region.fd, path, sizeof(path));
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    // ENOENT: the process (or its descriptor) is gone; the peer died after
    // publishing the call. That is the peer's failure, not ours.
    const int err = errno;
    if (err == ENOENT || err == ESRCH)
      return setError(weftRemoteError,
                      "local rank %d (pid %d) exited (or freed its buffer) during the call: "
                      "cannot open %s",
                      peer, static_cast<int>(pid), path);
    return setError(weftSystemError, "cannot open local rank %d's shared buffer (%s): %s", peer,
                    path, strerror(err));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != region.inode ||
      static_cast<uint64_t>(st.st_dev) != region.device ||
      static_cast<uint64_t>(st.st_size) < region.bytes) {
    close(fd);
    return setError(weftRemoteError,
                    "local rank %d's shared buffer %s is not the one it published (freed while "
                    "in use?)",
                    peer, path);
  }
  void* mem = mmap(nullptr, region.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  int err = errno;
  close(fd);  // the mapping keeps the file alive
  if (mem == MAP_FAILED)
    return setError(weftSystemError, "cannot map %llu bytes of local rank %d's buffer: %s",
                    static_cast<unsigned long long>(region.bytes), peer, strerror(err));
  madvise(mem, region.bytes, MADV_DONTFORK);
  WEFT_INFO(COLL, "mapped local rank %d's shared buffer (%llu bytes)", peer,
            static_cast<unsigned long long>(region.bytes));
  *out = Mapping{region.inode, region.device, region.fd, static_cast<char*>(mem), region.bytes, 0};
  return weftSuccess;
}

weftResult_t PeerMemory::resolve(int peer, pid_t pid, const HostRegion& region, uint64_t addr,
                                 char** local) {
  *local = nullptr;
  if (region.inode == 0) return weftSuccess;
  if (addr < region.base || addr - region.base >= region.bytes)
    return setError(weftRemoteError, "local rank %d published a buffer outside its allocation",
                    peer);
  std::vector<Mapping>& maps = peers_[peer];
  Mapping* hit = nullptr;
  for (Mapping& m : maps)
    if (m.inode == region.inode && m.device == region.device) hit = &m;
  if (hit == nullptr) {
    Mapping fresh{};
    WEFT_CHECK(map(peer, pid, region, &fresh));
    if (maps.size() >= kMaxMappingsPerPeer) {
      size_t oldest = 0;
      for (size_t i = 1; i < maps.size(); ++i)
        if (maps[i].lastUse < maps[oldest].lastUse) oldest = i;
      munmap(maps[oldest].ptr, maps[oldest].bytes);
      maps.erase(maps.begin() + static_cast<std::ptrdiff_t>(oldest));
    }
    maps.push_back(fresh);
    hit = &maps.back();
  }
  hit->lastUse = ++clock_;
  *local = hit->ptr + (addr - region.base);
  return weftSuccess;
}

void PeerMemory::noteFrees(int peer, pid_t pid, uint64_t frees) {
  if (frees == seenFrees_[peer]) return;
  seenFrees_[peer] = frees;
  std::vector<Mapping>& maps = peers_[peer];
  for (size_t i = 0; i < maps.size();) {
    char path[64];
    fdPath(pid, maps[i].fd, path, sizeof(path));
    struct stat st {};
    const bool held = stat(path, &st) == 0 && static_cast<uint64_t>(st.st_ino) == maps[i].inode &&
                      static_cast<uint64_t>(st.st_dev) == maps[i].device;
    if (held) {
      ++i;
      continue;
    }
    WEFT_INFO(COLL, "unmapped local rank %d's shared buffer: it was freed", peer);
    munmap(maps[i].ptr, maps[i].bytes);
    maps.erase(maps.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace weft
