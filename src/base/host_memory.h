// Host memory that the ranks of one node can map into each other
// (weftHostAlloc). Each allocation is a memfd mapped MAP_SHARED and kept
// open, so a peer process of the same user can open it again through
// /proc/<pid>/fd/<fd> and map the same pages: the single-copy collectives then
// move data between such buffers with plain loads and stores instead of
// cross-memory attach, which pins every page per call and runs at about half
// the speed of memcpy. The registry of allocations answers "does this buffer
// lie inside one, and where" for every large local collective.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/weft.h"

namespace weft {

// Where a buffer lies inside one of this process's host allocations, in the
// form the peers need to map it (published on the shared-memory boards).
struct HostRegion {
  uint64_t inode = 0;   // the memfd's inode; 0: the buffer is not in an allocation
  uint64_t device = 0;  // its st_dev (an inode number is unique per device only)
  int64_t fd = -1;      // our descriptor for it
  uint64_t base = 0;    // the allocation's first address in our process
  uint64_t bytes = 0;   // the allocation's size
};

// Allocates `bytes` (> 0) of zeroed, page-aligned host memory backed by a
// memfd; every page is faulted in now, so calls on it never page-fault.
weftResult_t hostAlloc(size_t bytes, void** ptr);
// Frees an allocation; `ptr` must be exactly what hostAlloc returned.
weftResult_t hostFree(void* ptr);
// The allocation containing all of [ptr, ptr + bytes), or inode = 0 if none.
HostRegion findHostRegion(const void* ptr, size_t bytes);
// How many allocations this process has freed so far: a peer that sees this
// change re-checks which of our allocations it still needs to keep mapped.
uint64_t hostFreeCount();

}  // namespace weft
