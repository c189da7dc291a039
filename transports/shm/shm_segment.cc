// memfd-backed shared segments (see shm_segment.h).
#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.h"

namespace weft {

ShmSegment::~ShmSegment() {
  if (base_ != nullptr) munmap(base_, bytes_);
  if (fd_ >= 0) close(fd_);
}

weftResult_t ShmSegment::create(size_t bytes) {
  fd_ = memfd_create("weft-shm", MFD_CLOEXEC);
  if (fd_ < 0) return setError(weftSystemError, "memfd_create failed: %s", strerror(errno));
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    return setError(weftSystemError, "cannot size shared segment to %zu bytes: %s", bytes,
                    strerror(errno));
  // MAP_POPULATE allocates every page now: no page faults in the steady state.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
  if (p == MAP_FAILED)
    return setError(weftSystemError, "cannot map %zu bytes of shared memory: %s", bytes,
                    strerror(errno));
  madvise(p, bytes, MADV_HUGEPAGE);
  base_ = static_cast<char*>(p);
  bytes_ = bytes;
  return weftSuccess;
}

ShmSegment::FileId ShmSegment::fileId() const {
  struct stat st {};
  if (fd_ < 0 || fstat(fd_, &st) != 0) return FileId{};
  return FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

weftResult_t ShmSegment::attach(pid_t pid, int fd, size_t bytes, FileId expected) {
  std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0)
    return setError(weftSystemError, "cannot open local peer %d's shared segment %s: %s", pid,
                    path.c_str(), strerror(errno));
  struct stat st {};
  if (fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_dev) != expected.device ||
      static_cast<uint64_t>(st.st_ino) != expected.inode)
    return setError(weftSystemError,
                    "%s is not local peer %d's shared segment but another file: the peer's pid "
                    "means another process here (is the peer in another PID namespace, with "
                    "WEFT_HOSTID set alike?)",
                    path.c_str(), pid);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
  if (p == MAP_FAILED)
    return setError(weftSystemError, "cannot map local peer %d's shared segment: %s", pid,
                    strerror(errno));
  // The mapping keeps the file; the descriptor would only cost one per local peer.
  close(fd_);
  fd_ = -1;
  base_ = static_cast<char*>(p);
  bytes_ = bytes;
  return weftSuccess;
}

}  // namespace weft
