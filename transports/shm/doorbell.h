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
//
// A sleeper that also waits on sockets (a plan with peers on other nodes)
// cannot sleep in a futex, which sockets do not wake: it sleeps in poll() on
// its sockets and a wake socket, an abstract Unix datagram socket of this
// network namespace (a node's ranks share one). It stores 2 in `sleeping`
// instead of 1, and a ringer that reads 2 sends one byte there; the same pair
// of RMWs orders it. The ringer's read of 2 also makes the socket's name
// (written by the owner before its first such exchange) visible. A byte left
// from an earlier sleep is drained before arming, never after: a byte that
// arrives once armed is a wake-up for this sleep.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft {

struct Doorbell {
  alignas(64) std::atomic<uint32_t> seq{0};
  alignas(64) std::atomic<uint32_t> sleeping{0};  // 0 awake, 1 in futex_wait, 2 in poll()
  char pad[60];
  // The wake socket's name, "weft-bell-<pid>-<id>" (the owner writes it at
  // setup), and the owner's descriptor for it (-1: none; meaningless in
  // other processes).
  alignas(64) uint32_t wakePid = 0;
  uint32_t wakeId = 0;
  int32_t wakeFd = -1;

  // Called by a peer after it published a counter this rank may be waiting on.
  void ring();
  // Sleeper protocol: arm() returns the sequence to wait on, then the caller
  // re-checks its FIFOs, then wait() (unless the re-check found work), then disarm().
  uint32_t arm();
  void wait(uint32_t armedSeq, int timeoutUs);
  void disarm() { sleeping.store(0, std::memory_order_relaxed); }
  // The poll() sleeper (owner only): drainWake(), armPoll(), re-check, then
  // poll() with wakeFd among the descriptors, then disarm().
  void drainWake();
  void armPoll() { sleeping.exchange(2, std::memory_order_acq_rel); }
  // Owner, at setup: makes the wake socket; false (and wakeFd -1) where it
  // cannot be made, and a sleeper that also waits on sockets then sleeps in
  // the futex for at most 1 ms at a time.
  bool openWake();
  void closeWake();
};

}  // namespace weft
