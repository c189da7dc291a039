// Pinned staging blocks for calls on a stream, one pool per communicator.
// First touch of pinned pages is expensive, so blocks are reused across calls
// and the steady state allocates nothing; the pool grows when a call needs
// more, or when more calls are in flight on the stream than it has blocks.
//
// A block carries three flags, each a uint32 on its own cache line of the
// same pinned allocation, and a generation number `gen` bumped at each use:
//   ready  written by the stream  (inputs staged)     read by the progress thread
//   done   written by the progress thread (results staged, or failed)  read by the stream
//   freed  written by the stream  (results copied out) read by the pool
// and a fourth word, `abort`, for calls of the GPU-driven ring (device_ring.h):
// zeroed at each acquire, raised by the progress thread or the shutdown to
// make the call's kernel give up; its kernel polls it. A ring call's block is
// also `held` by its progress-thread watch, which reads `freed` itself: the
// pool neither reuses nor frees a held block, even once freed, until the
// watch lets it go (unhold), so the watch never reads freed memory.
// Flags only grow (cyclically), so no reset is needed between uses and a
// stale value can never look like the current use. A block is reused only
// once freed == gen: after the stream's last touch of it. When the pool shuts
// down, a block a stream may still use goes to the reaper (staging_reaper.h),
// which frees it once the stream raised its `freed`.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "base/device_runtime.h"
#include "base/wait.h"

namespace weft {

struct StagingBlock {
  void* mem = nullptr;  // the pinned allocation (flags, then data)
  uint32_t* ready = nullptr;
  uint32_t* done = nullptr;
  uint32_t* freed = nullptr;
  int* abort = nullptr;
  std::atomic<bool> held{false};  // see above: set by acquire(.., hold), cleared by unhold
  bool reserved = false;          // made by reserve: kept until shutdown, never dropped
  char* data = nullptr;
  size_t capacity = 0;
  uint32_t gen = 0;  // the current (or last) use
};

class StagingPool {
 public:
  explicit StagingPool(DeviceRuntime* rt) : rt_(rt) {}
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A free block of at least `bytes`, its gen already advanced for this use;
  // `hold`: held until unhold.
  weftResult_t acquire(size_t bytes, StagingBlock** block, bool hold = false);
  // Allocates `count` free blocks of at least `bytes` now (at communicator
  // setup), kept until shutdown, so that calls up to that many in flight
  // allocate nothing: the
  // CUDA programming guide counts a page-locked allocation among the
  // operations that order device work issued before it against work issued
  // after it, which, between two ranks' GPU ring launches, could keep the
  // second from starting while the first waits for it.
  weftResult_t reserve(size_t bytes, size_t count);
  // Lets the pool reuse or free a held block once its stream raised "freed".
  void unhold(StagingBlock* block);
  // Gives back a block acquired for a use that enqueued nothing: its gen goes
  // back to its last use, whose "freed" it already has.
  void release(StagingBlock* block);
  // Gives up on a block whose stream operations were only partly enqueued:
  // it is never reused nor freed (the stream may still write into it).
  void abandon(StagingBlock* block);
  // Raises `abort` and `done` of every block in use (so no stream waits on
  // this pool any more, and no ring kernel waits for a peer), waits until
  // `until` for the streams to free them, frees what was freed and hands the
  // rest to the reaper, which frees each block once its stream is past it.
  // Returns false when some block went to the reaper (a stream, or a ring
  // kernel, may still be running behind it).
  bool shutdown(Clock::time_point until);
  size_t blocks();

 private:
  bool isFree(const StagingBlock* b) const;
  // A new block of `bytes` (`round`: up to a power of two, 64 KiB at least).
  weftResult_t grow(size_t bytes, StagingBlock** block, bool round = true);

  DeviceRuntime* rt_;
  std::mutex mu_;
  std::vector<StagingBlock*> blocks_;
};

}  // namespace weft
