// Small helpers of the multi-process tests (see mp_common.h).
#include "mp_common.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace mp {
namespace {

HostAlloc gHostAlloc = HostAlloc::kNone;
int gRank = 0;
std::atomic<size_t> gAllocations{0};  // the mixed mode's alternation (split tests: threads)

// weftHostAlloc buffers are recycled. The tests allocate and free buffers case
// after case, and weftHostAlloc touches every page of a new buffer (6-14 us a
// page on these VMs: docs/performance.md), which made the host-alloc runs 4-5
// times slower than the same runs on private memory. A freed buffer is kept and
// handed out again for the same size, at most kUsesPerBuffer times in all, then
// really freed: peers still meet new allocations, freed ones (unmapped at their
// next large call) and more than 32 of a rank (their mapping cache's LRU
// eviction), only less often. Threads allocate too (the split tests).
constexpr int kUsesPerBuffer = 4;
constexpr size_t kKeptBuffers = 16;
struct KeptBuffer {
  void* base;
  size_t total;
  int uses;  // times handed out so far
};
std::mutex gKeptMu;
std::vector<KeptBuffer> gKept;  // freed buffers, oldest first
std::vector<KeptBuffer> gLive;  // buffers handed out, with their use counts

void hostFreeOrExit(void* base) {
  if (weftHostFree(base) != weftSuccess) {
    std::fprintf(stderr, "weftHostFree: %s\n", weftGetLastError(nullptr));
    std::exit(2);
  }
}

void* hostAllocate(size_t total) {
  {
    std::lock_guard<std::mutex> lock(gKeptMu);
    for (size_t i = 0; i < gKept.size(); ++i) {
      if (gKept[i].total != total) continue;
      KeptBuffer b = gKept[i];
      gKept.erase(gKept.begin() + static_cast<std::ptrdiff_t>(i));
      ++b.uses;
      gLive.push_back(b);
      std::memset(b.base, 0, total);  // as weftHostAlloc gives it
      return b.base;
    }
  }
  void* base = nullptr;
  if (weftHostAlloc(&base, total) != weftSuccess) {
    std::fprintf(stderr, "weftHostAlloc(%zu): %s\n", total, weftGetLastError(nullptr));
    std::exit(2);
  }
  std::lock_guard<std::mutex> lock(gKeptMu);
  gLive.push_back(KeptBuffer{base, total, 1});
  return base;
}

void hostRelease(void* base) {
  void* evicted = nullptr;
  {
    std::lock_guard<std::mutex> lock(gKeptMu);
    size_t i = 0;
    while (i < gLive.size() && gLive[i].base != base) ++i;
    if (i == gLive.size()) {
      evicted = base;  // not from hostAllocate: let weftHostFree judge it
    } else {
      const KeptBuffer b = gLive[i];
      gLive.erase(gLive.begin() + static_cast<std::ptrdiff_t>(i));
      if (b.uses >= kUsesPerBuffer) {
        evicted = b.base;
      } else {
        gKept.push_back(b);
        if (gKept.size() > kKeptBuffers) {
          evicted = gKept.front().base;
          gKept.erase(gKept.begin());
        }
      }
    }
  }
  if (evicted != nullptr) hostFreeOrExit(evicted);
}

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
    base = hostAllocate(total);
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
  hostRelease(base);
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
    case weftBand:
      return "band";
    case weftBor:
      return "bor";
    case weftBxor:
      return "bxor";
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
