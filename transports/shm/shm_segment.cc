// memfd-backed shared segments (see shm_segment.h).
#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.h"

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

weftResult_t ShmSegment::attach(pid_t pid, int fd, size_t bytes) {
  std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0)
    return setError(weftSystemError, "cannot open local peer %d's shared segment %s: %s", pid,
                    path.c_str(), strerror(errno));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
  if (p == MAP_FAILED)
    return setError(weftSystemError, "cannot map local peer %d's shared segment: %s", pid,
                    strerror(errno));
  base_ = static_cast<char*>(p);
  bytes_ = bytes;
  return weftSuccess;
}

}  // namespace weft
