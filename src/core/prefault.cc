// Mapping pages writable before a collective touches them (see prefault.h).
#include "core/prefault.h"

#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14 (uapi asm-generic/mman-common.h)
#endif

namespace weft {

bool prefaultWritable(void* addr, size_t bytes) {
  if (bytes == 0) return true;
  return madvise(addr, bytes, MADV_POPULATE_WRITE) == 0;
}

}  // namespace weft
