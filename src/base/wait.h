// Bounded waiting. Every loop that waits for peers during a call is a Waiter
// (set-up's socket waits block in poll() under a Deadline alone): it carries a
// Deadline (from WEFT_TIMEOUT) and an optional abort flag, and backs off in
// three stages: spin (cheap when the peer answers within microseconds), yield
// (lets a peer on the same core run: these machines are often
// oversubscribed), then sleep on what the loop waits for (poll(), the
// doorbell, or a short nap) so an idle rank costs no CPU. What a loop looks
// at, how it sleeps and how it words a give-up are its own; when to give up
// is decided here. Peer deaths are the channels' (Channel::checkPeer).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "base/config.h"

namespace weft {

using Clock = std::chrono::steady_clock;

// A deadline for one wait, counting only time in which this process ran: a
// gap between two checks longer than kFrozenGap (wait.cc) means the process
// was frozen (its VM paused, SIGSTOP, a suspended machine), and the check
// that sees it moves the deadline by the gap. So every waiting loop must
// check at least every second or so, as they all do (their polls and
// sleeps last at most 100 ms, rdma_cm's 1 s).
class Deadline {
 public:
  Deadline() : at_(Clock::time_point::max()) {}
  static Deadline after(double seconds);
  static Deadline fromConfig();  // now + WEFT_TIMEOUT
  // Const so that `const Deadline&` parameters work; it may move the
  // deadline (mutable members), and a Deadline serves one thread at a time.
  bool expired() const;
  // The same span again, from now (an idle timer after progress).
  void restart();
  // Milliseconds left, clamped to [0, capMs].
  int remainingMs(int capMs) const;
  double seconds() const { return seconds_; }

 private:
  mutable Clock::time_point at_;
  mutable Clock::time_point checked_;  // the last check, or the start
  double seconds_ = 0;
};

// WEFT_SPIN_US=auto (its default): microseconds a waiter spins, where the
// node's ranks do not outnumber its CPUs (0 where they do; src/core/api_init.cc).
constexpr int64_t kAutoSpinUs = 2;

// Decides what a waiting loop does next after an iteration without progress.
class Backoff {
 public:
  enum class Step { kSpin, kYield, kSleep };
  // Spin for spinUs, then yield for yieldUs more (WEFT_SPIN_US, WEFT_YIELD_US), then sleep.
  Backoff(int64_t spinUs, int64_t yieldUs);
  Step next();  // call after an idle iteration
  void reset() { idleSince_ = Clock::time_point::min(); }

 private:
  int64_t spinUs_, yieldUs_;
  Clock::time_point idleSince_ = Clock::time_point::min();
};

// What every wait obeys, from the communicator's knobs.
struct WaitPolicy {
  const std::atomic<bool>* abortFlag = nullptr;  // raised by weftCommAbort
  double timeoutSec = configDefaultNumber("WEFT_TIMEOUT");
  int64_t spinUs = kAutoSpinUs;  // WEFT_SPIN_US
  int64_t yieldUs = static_cast<int64_t>(configDefaultNumber("WEFT_YIELD_US"));
};

// One wait. The loop looks at what it waits for; after a look without
// progress it calls idle() and does what that says. WEFT_TIMEOUT bounds a
// stall, not a wait that keeps progressing: progressed() restarts it (at the
// next idle, off the fast path).
class Waiter {
 public:
  enum class Idle {
    kLook,      // spun or yielded: look again
    kSleep,     // block on what the loop waits for (bounded: 100 ms at most), or nap()
    kAborted,   // the abort flag is up: give up
    kTimedOut,  // WEFT_TIMEOUT passed without progress: give up
  };
  explicit Waiter(const WaitPolicy& policy);
  // The abort flag is read at every call (one relaxed load); the clock only
  // once spinning is over, so the spin stays a tight loop.
  Idle idle();
  void progressed() {
    backoff_.reset();
    progressed_ = true;
  }
  // For loops with nothing to block on (memory another agent writes): 50 us.
  static void nap();
  bool aborted() const {
    return policy_.abortFlag != nullptr && policy_.abortFlag->load(std::memory_order_relaxed);
  }
  double timeoutSec() const { return policy_.timeoutSec; }

 private:
  const WaitPolicy policy_;
  Backoff backoff_;
  Deadline deadline_;
  bool progressed_ = false;
};

}  // namespace weft
