// A doorbell lets a rank sleep until a local peer changes one of the FIFO
// counters it waits on, without a file descriptor per FIFO. It lives in the
// rank's shared segment; peers ring it after publishing a counter.
//
// Memory ordering (a Dekker pair, so no wake-up is lost):
//   sleeper:  exchange(sleeping, 1, acq_rel); re-check every FIFO; futex_wait(seq, v)
//   ringer:   publish tail/head (release); fetch_add(sleeping, 0, acq_rel);
//             if it read 1 {++seq; futex_wake}
// Both read-modify-writes hit the same word, so one comes first in its
// modification order: either the ringer reads 1 and bumps seq (futex_wait with
// the old v returns at once), or the sleeper's exchange reads from the ringer's
// write, which makes the published counter visible to the re-check. RMWs
// rather than seq_cst fences: same cost on x86, and TSan models them (it does
// not support atomic_thread_fence).
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
