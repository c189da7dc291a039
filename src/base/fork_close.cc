// The registry of descriptors closed in forked children (fork_close.h).
#include "base/fork_close.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace weft {
namespace {

// Slots in chunks made on demand and never freed, so a reader (the child's
// handler) never meets freed memory. -1: free.
constexpr int kChunkSlots = 4096;
constexpr int kChunks = 256;
std::atomic<std::atomic<int>*> chunks[kChunks];

// Chunk `c`, made if it is missing (two threads may race: one's is kept).
std::atomic<int>* chunkAt(int c) {
  std::atomic<int>* slots = chunks[c].load(std::memory_order_acquire);
  if (slots != nullptr) return slots;
  auto* fresh = new std::atomic<int>[kChunkSlots];
  for (int i = 0; i < kChunkSlots; ++i) fresh[i].store(-1, std::memory_order_relaxed);
  // Release: a thread that sees the chunk sees its slots set to -1.
  if (chunks[c].compare_exchange_strong(slots, fresh, std::memory_order_acq_rel)) return fresh;
  delete[] fresh;
  return slots;  // the winner's, loaded by the failed exchange
}

// In the child: one thread, async-signal-safe work only (loads, close).
void closeAllInChild() {
  for (auto& chunk : chunks) {
    std::atomic<int>* slots = chunk.load(std::memory_order_acquire);
    if (slots == nullptr) continue;
    for (int i = 0; i < kChunkSlots; ++i) {
      const int fd = slots[i].exchange(-1, std::memory_order_relaxed);
      if (fd >= 0) close(fd);
    }
  }
}

}  // namespace

void closeInForkedChildren(int fd) {
  if (fd < 0) return;
  static std::once_flag installed;
  std::call_once(installed, [] { pthread_atfork(nullptr, nullptr, closeAllInChild); });
  for (int c = 0; c < kChunks; ++c) {
    std::atomic<int>* slots = chunkAt(c);
    for (int i = 0; i < kChunkSlots; ++i) {
      int empty = -1;
      if (slots[i].load(std::memory_order_relaxed) == -1 &&
          slots[i].compare_exchange_strong(empty, fd, std::memory_order_relaxed))
        return;
    }
  }
}

void keepInForkedChildren(int fd) {
  if (fd < 0) return;
  for (auto& chunk : chunks) {
    std::atomic<int>* slots = chunk.load(std::memory_order_acquire);
    if (slots == nullptr) return;  // chunks fill in order: none after a missing one
    for (int i = 0; i < kChunkSlots; ++i) {
      int mine = fd;
      if (slots[i].compare_exchange_strong(mine, -1, std::memory_order_relaxed)) return;
    }
  }
}

int forkClosedCount() {
  int n = 0;
  for (auto& chunk : chunks) {
    std::atomic<int>* slots = chunk.load(std::memory_order_acquire);
    if (slots == nullptr) break;
    for (int i = 0; i < kChunkSlots; ++i) n += slots[i].load(std::memory_order_relaxed) >= 0;
  }
  return n;
}

}  // namespace weft
