// Small helpers of the multi-process tests (see mp_common.h).
#include "mp_common.h"

#include <atomic>

namespace mp {
namespace {

HostAlloc gHostAlloc = HostAlloc::kNone;
int gRank = 0;
std::atomic<size_t> gAllocations{0};  // the mixed mode's alternation (split tests: threads)

}  // namespace

void setHostAlloc(HostAlloc mode, int rank) {
  gHostAlloc = mode;
  gRank = rank;
}

bool parseHostAlloc(const char* text, HostAlloc* mode) {
  if (std::strcmp(text, "none") == 0)
    *mode = HostAlloc::kNone;
  else if (std::strcmp(text, "all") == 0)
    *mode = HostAlloc::kAll;
  else if (std::strcmp(text, "mixed") == 0)
    *mode = HostAlloc::kMixed;
  else
    return false;
  return true;
}

unsigned char* allocateTestMemory(size_t total, bool* shared) {
  const size_t n = gAllocations.fetch_add(1, std::memory_order_relaxed);
  *shared = gHostAlloc == HostAlloc::kAll ||
            (gHostAlloc == HostAlloc::kMixed && (n + static_cast<size_t>(gRank)) % 2 == 0);
  void* base = nullptr;
  if (*shared) {
    if (weftHostAlloc(&base, total) != weftSuccess) {
      std::fprintf(stderr, "weftHostAlloc(%zu): %s\n", total, weftGetLastError(nullptr));
      std::exit(2);
    }
  } else {
    base = std::aligned_alloc(64, total);
  }
  if (base == nullptr) {
    std::fprintf(stderr, "out of memory for a %zu-byte test buffer\n", total);
    std::exit(2);
  }
  return static_cast<unsigned char*>(base);
}

void releaseTestMemory(unsigned char* base, bool shared) {
  if (!shared) {
    std::free(base);
    return;
  }
  if (weftHostFree(base) != weftSuccess) {
    std::fprintf(stderr, "weftHostFree: %s\n", weftGetLastError(nullptr));
    std::exit(2);
  }
}

const char* opName(weftRedOp_t op) {
  switch (op) {
    case weftSum:
      return "sum";
    case weftProd:
      return "prod";
    case weftMax:
      return "max";
    case weftMin:
      return "min";
    case weftAvg:
      return "avg";
    default:
      return "?";
  }
}

uint64_t hashBytes(const void* data, size_t bytes) {
  // FNV-1a, 64 bit.
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace mp
