// A rank's shared-memory segment: an anonymous memfd (no name under /dev/shm,
// so nothing is left behind when a process is killed), prefaulted, mapped by
// the local peers through /proc/<pid>/fd/<fd> while the owner is alive.
#pragma once

#include <sys/types.h>
#include <cstddef>
#include <cstdint>

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
  // The file's identity, which the owner publishes with its pid and fd.
  struct FileId {
    uint64_t device = 0, inode = 0;
  };
  FileId fileId() const;
  // Maps the segment of local process `pid` whose memfd is `fd` there, after
  // checking that /proc/<pid>/fd/<fd> is the file `expected` (a pid means
  // another process in another PID namespace, or a forged WEFT_HOSTID).
  weftResult_t attach(pid_t pid, int fd, size_t bytes, FileId expected);

  char* base() const { return base_; }
  size_t size() const { return bytes_; }
  int fd() const { return fd_; }

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
  int fd_ = -1;
};

}  // namespace weft
