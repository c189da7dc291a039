// Bounded waiting. Every blocking loop in weft carries a Deadline (from
// WEFT_TIMEOUT) and an optional abort flag, and backs off in three stages:
// spin (cheap when the peer answers within microseconds), yield (lets a peer
// on the same core run: these machines are often oversubscribed), then sleep
// in poll()/condition variables so an idle rank costs no CPU.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

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
  // For loops that poll memory written by another agent (a stream, a GPU) and
  // have no fd to sleep on: next(), then spin on, yield, or sleep 50 us.
  void pause();
  void reset() { idleSince_ = Clock::time_point::min(); }

 private:
  int64_t spinUs_, yieldUs_;
  Clock::time_point idleSince_ = Clock::time_point::min();
};

}  // namespace weft
