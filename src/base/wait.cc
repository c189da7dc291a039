// Deadline, Backoff and Waiter (see wait.h).
#include "base/wait.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "base/config.h"

namespace weft {

namespace {

// Two checks of a deadline further apart than this mean that the process did
// not run in between: waiting loops check at least every second. CI saw why
// it matters: a VM whose every vCPU stopped for about a minute (its kernel
// logged a workqueue lockup on each CPU) timed out all ranks of a healthy
// job at once. Time frozen for everyone is no peer's stall; a peer that did
// die is still caught by its closed connection, or by the time counted on
// either side of the gap.
constexpr Clock::duration kFrozenGap = std::chrono::seconds(3);

}  // namespace

Deadline Deadline::after(double seconds) {
  Deadline d;
  d.seconds_ = seconds;
  d.restart();
  return d;
}

void Deadline::restart() {
  if (!(seconds_ > 0 && seconds_ < 1e9)) return;  // no limit: at_ stays at max
  checked_ = Clock::now();
  at_ = checked_ + std::chrono::microseconds(static_cast<int64_t>(seconds_ * 1e6));
}

bool Deadline::expired() const {
  if (at_ == Clock::time_point::max()) return false;
  const Clock::time_point now = Clock::now();
  if (now - checked_ > kFrozenGap) at_ += now - checked_;
  checked_ = now;
  return now >= at_;
}

Deadline Deadline::fromConfig() { return after(configDouble("WEFT_TIMEOUT")); }

int Deadline::remainingMs(int capMs) const {
  if (at_ == Clock::time_point::max()) return capMs;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, capMs));
}

// The yield window (WEFT_YIELD_US). Sleeping in poll() costs the waker an
// interrupt to this core and, in a VM, the hypervisor's halt and wake-up;
// yielding costs nothing when no one else wants the core, and lets a peer on
// it run when one does. The default window covers a 512 KiB chunk's arrival
// over loopback, so a large call's ranks stop sleeping between chunks
// (measured against shorter windows: docs/tuning.md, "Waiting: spin, yield, sleep").
Backoff::Backoff(int64_t spinUs, int64_t yieldUs) : spinUs_(spinUs), yieldUs_(yieldUs) {}

Backoff::Step Backoff::next() {
  auto now = Clock::now();
  if (idleSince_ == Clock::time_point::min()) idleSince_ = now;
  auto idleUs = std::chrono::duration_cast<std::chrono::microseconds>(now - idleSince_).count();
  if (idleUs < spinUs_) return Step::kSpin;
  // Yield for the yield window more, then sleep: a peer sharing our core gets
  // to run during the yields, and an idle wait stops burning CPU after that.
  if (idleUs < spinUs_ + yieldUs_) return Step::kYield;
  return Step::kSleep;
}

Waiter::Waiter(const WaitPolicy& policy)
    : policy_(policy),
      backoff_(policy.spinUs, policy.yieldUs),
      deadline_(Deadline::after(policy.timeoutSec)) {}

Waiter::Idle Waiter::idle() {
  if (aborted()) return Idle::kAborted;
  if (progressed_) {
    deadline_.restart();
    progressed_ = false;
  }
  const Backoff::Step step = backoff_.next();
  if (step == Backoff::Step::kSpin) return Idle::kLook;
  // Yields and sleeps are slow anyway: the clock read costs nothing there, and
  // a long yield window (WEFT_YIELD_US) cannot postpone the deadline.
  if (deadline_.expired()) return Idle::kTimedOut;
  if (step == Backoff::Step::kYield) {
    sched_yield();
    return Idle::kLook;
  }
  return Idle::kSleep;
}

void Waiter::nap() { usleep(50); }

}  // namespace weft
