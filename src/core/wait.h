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

class Deadline {
 public:
  Deadline() : at_(Clock::time_point::max()) {}
  static Deadline after(double seconds);
  static Deadline fromConfig();  // now + WEFT_TIMEOUT
  bool expired() const { return Clock::now() >= at_; }
  // Milliseconds left, clamped to [0, capMs].
  int remainingMs(int capMs) const;
  double seconds() const { return seconds_; }

 private:
  Clock::time_point at_;
  double seconds_ = 0;
};

// Decides what a waiting loop does next after an iteration without progress.
class Backoff {
 public:
  enum class Step { kSpin, kYield, kSleep };
  explicit Backoff(int64_t spinUs);
  Step next();  // call after an idle iteration
  // For loops that poll memory written by another agent (a stream, a GPU) and
  // have no fd to sleep on: next(), then spin on, yield, or sleep 50 us.
  void pause();
  void reset() { idleSince_ = Clock::time_point::min(); }

 private:
  int64_t spinUs_;
  Clock::time_point idleSince_ = Clock::time_point::min();
};

}  // namespace weft
