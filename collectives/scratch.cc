// Grow-only communicator scratch (see coll_context.h).
#include <sys/mman.h>

#include <cstring>

#include "collectives/coll_context.h"

namespace weft {

Scratch::~Scratch() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

char* Scratch::get(size_t bytes) {
  if (bytes <= bytes_) return base_;
  size_t want = (bytes + (2u << 20) - 1) & ~static_cast<size_t>((2u << 20) - 1);
  void* p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  madvise(p, want, MADV_HUGEPAGE);
  std::memset(p, 0, want);  // fault every page in now, not inside a collective
  if (base_ != nullptr) munmap(base_, bytes_);
  base_ = static_cast<char*>(p);
  bytes_ = want;
  return base_;
}

}  // namespace weft
