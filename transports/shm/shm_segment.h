// A rank's shared-memory segment: an anonymous memfd (no name under /dev/shm,
// so nothing is left behind when a process is killed), prefaulted, mapped by
// the local peers through /proc/<pid>/fd/<fd> while the owner is alive.
#pragma once

#include <sys/types.h>
#include <cstddef>

#include "weft/weft.h"

namespace weft {

class ShmSegment {
 public:
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Creates and maps `bytes` of zeroed shared memory owned by this process.
  weftResult_t create(size_t bytes);
  // Maps the segment of local process `pid` whose memfd is `fd` there.
  weftResult_t attach(pid_t pid, int fd, size_t bytes);

  char* base() const { return base_; }
  size_t size() const { return bytes_; }
  int fd() const { return fd_; }

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
  int fd_ = -1;
};

}  // namespace weft
