// The staging pool of calls on a stream (see staging_pool.h for the flags).
#include "device/staging_pool.h"

#include <unistd.h>

#include <cstring>

#include "base/error.h"
#include "device/staging_reaper.h"

namespace weft {
namespace {

constexpr size_t kLine = 64;
constexpr size_t kHeader = 4 * kLine;  // four flag lines; data starts aligned
constexpr size_t kMinCapacity = 64 << 10;
constexpr size_t kMaxIdleBlocks = 8;  // beyond this, free idle blocks too small to reuse

size_t roundUpPow2(size_t n) {
  size_t p = kMinCapacity;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

StagingPool::~StagingPool() { shutdown(Clock::now()); }

bool StagingPool::isFree(const StagingBlock* b) const {
  // Acquire pairs with the stream's write of `freed`, which follows its last
  // read of the block (and with unhold, after the watch's last read): what we
  // do with the block next happens after both.
  if (b->held.load(std::memory_order_acquire)) return false;
  return flagReached(__atomic_load_n(b->freed, __ATOMIC_ACQUIRE), b->gen);
}

void StagingPool::unhold(StagingBlock* block) {
  block->held.store(false, std::memory_order_release);
}

weftResult_t StagingPool::acquire(size_t bytes, StagingBlock** block, bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  StagingBlock* best = nullptr;
  size_t idleSmall = 0, grown = 0;  // grown: blocks not from reserve
  for (StagingBlock* b : blocks_) {
    if (!b->reserved) ++grown;
    if (!isFree(b)) continue;
    if (b->capacity < bytes) {
      if (!b->reserved) ++idleSmall;
      continue;
    }
    if (best == nullptr || b->capacity < best->capacity) best = b;
  }
  if (best == nullptr) {
    if (idleSmall > 0 && grown >= kMaxIdleBlocks) {
      // Sizes grew: drop the idle blocks that can no longer serve. The
      // reaper frees them, not this thread: cudaFreeHost synchronises the
      // device, and the caller may be about to enqueue the call that a GPU
      // ring kernel already running waits for (one thread driving several
      // ranks, or a group over communicators): here, that would wait until
      // WEFT_TIMEOUT failed the kernel.
      std::vector<StagingBlock*> keep;
      for (StagingBlock* b : blocks_) {
        if (isFree(b) && b->capacity < bytes && !b->reserved) {
          reapWhenFreed(rt_, b->mem, b->freed, b->gen);  // already reached: freed at its next look
          delete b;
        } else {
          keep.push_back(b);
        }
      }
      blocks_.swap(keep);
    }
    WEFT_CHECK(grow(bytes, &best));
  }
  ++best->gen;
  *best->abort = 0;  // no kernel reads it: the block's last use is over (freed)
  best->held.store(hold, std::memory_order_relaxed);
  *block = best;
  return weftSuccess;
}

weftResult_t StagingPool::reserve(size_t bytes, size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < count; ++i) {
    StagingBlock* b = nullptr;
    // Exactly the size asked (in whole lines): these serve small argument
    // blocks, not the data of staged calls, which take kMinCapacity and up.
    WEFT_CHECK(grow((bytes + kLine - 1) / kLine * kLine, &b, false));  // gen 0, "freed" 0: free
    b->reserved = true;
  }
  return weftSuccess;
}

weftResult_t StagingPool::grow(size_t bytes, StagingBlock** block, bool round) {
  const size_t capacity = round ? roundUpPow2(bytes) : bytes;
  void* mem = nullptr;
  WEFT_CHECK(rt_->allocPinned(kHeader + capacity, &mem));
  auto* b = new StagingBlock();
  b->mem = mem;
  auto* base = static_cast<char*>(mem);
  std::memset(base, 0, kHeader);  // every flag at gen 0: free, nothing ready
  b->ready = reinterpret_cast<uint32_t*>(base);
  b->done = reinterpret_cast<uint32_t*>(base + kLine);
  b->freed = reinterpret_cast<uint32_t*>(base + 2 * kLine);
  b->abort = reinterpret_cast<int*>(base + 3 * kLine);
  b->data = base + kHeader;
  b->capacity = capacity;
  blocks_.push_back(b);
  *block = b;
  return weftSuccess;
}

void StagingPool::release(StagingBlock* block) {
  std::lock_guard<std::mutex> lock(mu_);
  --block->gen;
  block->held.store(false, std::memory_order_relaxed);
}

void StagingPool::abandon(StagingBlock* block) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_[i] == block) {
      blocks_.erase(blocks_.begin() + static_cast<long>(i));
      break;
    }
  }
  // The pinned memory is leaked on purpose; only the bookkeeping goes.
  delete block;
}

bool StagingPool::shutdown(Clock::time_point until) {
  std::lock_guard<std::mutex> lock(mu_);
  for (StagingBlock* b : blocks_) {
    if (isFree(b)) continue;
    __atomic_store_n(b->abort, 1, __ATOMIC_RELAXED);  // ordered before `done` by its release
    __atomic_store_n(b->done, b->gen, __ATOMIC_RELEASE);
  }
  for (;;) {
    bool busy = false;
    for (StagingBlock* b : blocks_) busy = busy || !isFree(b);
    if (!busy || Clock::now() >= until) break;
    usleep(1000);
  }
  bool allFreed = true;
  for (StagingBlock* b : blocks_) {
    if (isFree(b)) {
      rt_->freePinned(b->mem);
    } else {  // a stream may still copy through it: freed once the stream is past it
      reapWhenFreed(rt_, b->mem, b->freed, b->gen);
      allFreed = false;
    }
    delete b;
  }
  blocks_.clear();
  return allFreed;
}

size_t StagingPool::blocks() {
  std::lock_guard<std::mutex> lock(mu_);
  return blocks_.size();
}

}  // namespace weft
