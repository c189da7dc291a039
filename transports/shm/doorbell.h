// A doorbell lets a rank sleep until a local peer changes one of the FIFO
// counters it waits on, without a file descriptor per FIFO. It lives in the
// rank's shared segment; peers ring it after publishing a counter.
//
// Memory ordering (a Dekker pair, so no wake-up is lost):
//   sleeper:  sleeping = 1; fence(seq_cst); re-check every FIFO; futex_wait(seq, v)
//   ringer:   publish tail/head (release); fence(seq_cst); if (sleeping) {++seq; futex_wake}
// Either the ringer sees sleeping == 1 and bumps seq (so futex_wait with the old v
// returns at once), or the sleeper's re-check sees the new counter. The fences
// order each side's store before its load, which release/acquire alone would not.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft {

struct Doorbell {
  alignas(64) std::atomic<uint32_t> seq{0};
  alignas(64) std::atomic<uint32_t> sleeping{0};
  char pad[60];

  // Called by a peer after it published a counter this rank may be waiting on.
  void ring();
  // Sleeper protocol: arm() returns the sequence to wait on, then the caller
  // re-checks its FIFOs, then wait() (unless the re-check found work), then disarm().
  uint32_t arm();
  void wait(uint32_t armedSeq, int timeoutUs);
  void disarm() { sleeping.store(0, std::memory_order_relaxed); }
};

}  // namespace weft
