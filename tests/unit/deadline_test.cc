// Deadline (base/wait.h): time in which the process was frozen does not
// count, time in which it ran does. A forked child waits on a pipe under a
// deadline while the parent stops it (SIGSTOP) for longer than the gap that
// marks a freeze, then continues it: the real thing, not a mocked clock.
// Backoff: spin, then yield, then sleep, each for as long as it was given.
// Waiter: the one wait every loop uses gives up on abort and after
// WEFT_TIMEOUT without progress, and progress restarts that timeout.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "base/wait.h"

namespace {

using weft::Clock;
using weft::Deadline;

// The child's exit codes.
constexpr int kGotByte = 0;
constexpr int kExpired = 1;
constexpr int kStuck = 2;

// In the child: announce readiness on `ready`, then wait for a byte on `go`
// under a deadline of `seconds`, checking it every 100 ms as weft's loops do.
[[noreturn]] void childWait(int ready, int go, double seconds) {
  Deadline d = Deadline::after(seconds);
  char b = 1;
  if (write(ready, &b, 1) != 1) _exit(kStuck);
  const auto giveUp = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < giveUp) {
    pollfd p{go, POLLIN, 0};
    if (poll(&p, 1, 100) > 0 && read(go, &b, 1) == 1) _exit(kGotByte);
    if (d.expired()) _exit(kExpired);
  }
  _exit(kStuck);
}

struct Child {
  pid_t pid = -1;
  int go = -1;  // the parent's end of the child's `go` pipe
};

Child start(double seconds) {
  int ready[2], go[2];
  EXPECT_EQ(pipe(ready), 0);
  EXPECT_EQ(pipe(go), 0);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    close(ready[0]);
    close(go[1]);
    childWait(ready[1], go[0], seconds);
  }
  close(ready[1]);
  close(go[0]);
  char b = 0;
  EXPECT_EQ(read(ready[0], &b, 1), 1);
  close(ready[0]);
  c.go = go[1];
  return c;
}

int finish(const Child& c) {
  int status = 0;
  EXPECT_EQ(waitpid(c.pid, &status, 0), c.pid);
  close(c.go);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void freeze(const Child& c, double seconds) {
  ASSERT_EQ(kill(c.pid, SIGSTOP), 0);
  usleep(static_cast<useconds_t>(seconds * 1e6));
  ASSERT_EQ(kill(c.pid, SIGCONT), 0);
}

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST(Deadline, FrozenTimeDoesNotCount) {
  // 1 s of deadline; stopped for 4.5 s (past the 3 s gap), then the byte
  // comes 0.3 s after the continue: 0.5 s of running time in all.
  signal(SIGPIPE, SIG_IGN);  // a child that gave up early has closed its end
  Child c = start(1.0);
  usleep(200000);
  freeze(c, 4.5);
  usleep(300000);
  char b = 1;
  const bool sent = write(c.go, &b, 1) == 1;
  EXPECT_EQ(finish(c), kGotByte) << "the frozen time counted against the deadline"
                                 << (sent ? "" : " (the child had already exited)");
}

TEST(Deadline, RunningTimeStillCountsAfterAFreeze) {
  // The same freeze, and then no byte: the deadline must still expire, after
  // about the second of running time it had, not never.
  Child c = start(1.0);
  usleep(200000);
  freeze(c, 4.5);
  const auto resumed = Clock::now();
  EXPECT_EQ(finish(c), kExpired);
  EXPECT_LT(secondsSince(resumed), 2.5);
}

TEST(Deadline, ExpiresWithoutAFreeze) {
  const auto t0 = Clock::now();
  Child c = start(0.5);
  EXPECT_EQ(finish(c), kExpired);
  EXPECT_LT(secondsSince(t0), 2.0);
}

TEST(Deadline, RestartGivesTheWholeSpanAgain) {
  Deadline d = Deadline::after(0.3);
  usleep(200000);
  d.restart();
  usleep(200000);
  EXPECT_FALSE(d.expired());  // 0.2 s since the restart
  EXPECT_GT(d.remainingMs(1000), 0);
  usleep(200000);
  EXPECT_TRUE(d.expired());
}

TEST(Deadline, NoLimitNeverExpires) {
  Deadline none;
  EXPECT_FALSE(none.expired());
  Deadline zero = Deadline::after(0);
  zero.restart();
  EXPECT_FALSE(zero.expired());
  EXPECT_EQ(zero.remainingMs(100), 100);
}

// Steps seen by a loop calling next() for `forUs` microseconds.
struct StepsSeen {
  bool spin = false, yield = false, sleep = false;
  bool sleptBefore(int64_t us) const { return sleep && firstSleepUs < us; }
  int64_t firstSleepUs = -1;
};

StepsSeen watch(weft::Backoff& b, int64_t forUs) {
  StepsSeen seen;
  const auto start = Clock::now();
  for (;;) {
    const weft::Backoff::Step step = b.next();
    // Read after next(), whose own clock read (and idle start) follow `start`:
    // so `at` is never less than the time Backoff went by, even where the two
    // reads are far apart (a sanitizer build once saw 49999 us for a 50 ms window).
    const int64_t at =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    if (at > forUs) return seen;
    switch (step) {
      case weft::Backoff::Step::kSpin:
        seen.spin = true;
        break;
      case weft::Backoff::Step::kYield:
        seen.yield = true;
        break;
      case weft::Backoff::Step::kSleep:
        if (!seen.sleep) seen.firstSleepUs = at;
        seen.sleep = true;
        break;
    }
  }
}

TEST(Backoff, SpinsThenYieldsThenSleeps) {
  // Windows of 20 and 30 ms: long enough that a busy machine's scheduling
  // cannot skip one, short enough to keep the test quick.
  weft::Backoff b(20000, 30000);
  StepsSeen seen = watch(b, 80000);
  EXPECT_TRUE(seen.spin && seen.yield && seen.sleep);
  EXPECT_GE(seen.firstSleepUs, 50000);  // not before spin + yield
}

TEST(Backoff, NoWindowsSleepsAtOnce) {
  weft::Backoff b(0, 0);
  StepsSeen seen = watch(b, 1000);
  EXPECT_FALSE(seen.spin);
  EXPECT_FALSE(seen.yield);
  EXPECT_TRUE(seen.sleptBefore(500));
}

TEST(Backoff, ResetStartsTheWindowsAgain) {
  weft::Backoff b(0, 100000);  // yield for 100 ms
  EXPECT_EQ(b.next(), weft::Backoff::Step::kYield);
  b.reset();
  EXPECT_EQ(b.next(), weft::Backoff::Step::kYield);
  weft::Backoff sleeper(0, 0);
  EXPECT_EQ(sleeper.next(), weft::Backoff::Step::kSleep);
}

// Runs idle() until it says something other than kLook, napping on kSleep;
// returns what it said and how long that took.
// What idleUntilNotLook saw: the final answer, how long it took, whether it slept.
struct IdleEnd {
  weft::Waiter::Idle idle;
  double seconds;
  bool slept;
};
// `start`: when the waiter's timeout began (its construction), for tests
// that bound the time from below.
IdleEnd idleUntilNotLook(weft::Waiter& w, Clock::time_point start = Clock::now()) {
  bool slept = false;
  for (;;) {
    const weft::Waiter::Idle idle = w.idle();
    if (idle == weft::Waiter::Idle::kSleep) {
      slept = true;
      weft::Waiter::nap();
    }
    if (idle != weft::Waiter::Idle::kLook && idle != weft::Waiter::Idle::kSleep)
      return {idle, std::chrono::duration<double>(Clock::now() - start).count(), slept};
  }
}

TEST(Waiter, SpinsYieldsSleepsThenTimesOut) {
  weft::WaitPolicy policy;
  policy.timeoutSec = 0.2;
  policy.spinUs = 1000;
  policy.yieldUs = 1000;
  const auto constructed = Clock::now();  // before the waiter's own clock starts
  weft::Waiter w(policy);
  const IdleEnd end = idleUntilNotLook(w, constructed);
  EXPECT_EQ(end.idle, weft::Waiter::Idle::kTimedOut);
  EXPECT_TRUE(end.slept);
  EXPECT_GE(end.seconds, 0.2);
  EXPECT_LT(end.seconds, 2.0);
}

TEST(Waiter, AbortEndsTheWaitAtOnceEvenWhileSpinning) {
  std::atomic<bool> abort{false};
  weft::WaitPolicy policy;
  policy.abortFlag = &abort;
  policy.timeoutSec = 30;
  policy.spinUs = 60 * 1000000;  // a minute of spinning: only the flag can end this
  weft::Waiter w(policy);
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    abort.store(true);
  });
  const IdleEnd end = idleUntilNotLook(w);
  raiser.join();
  EXPECT_EQ(end.idle, weft::Waiter::Idle::kAborted);
  EXPECT_LT(end.seconds, 5.0);
}

TEST(Waiter, ProgressRestartsTheTimeout) {
  weft::WaitPolicy policy;
  policy.timeoutSec = 1.0;
  policy.spinUs = 0;
  policy.yieldUs = 0;
  weft::Waiter w(policy);
  // Idle 0.6 s, progress, idle 0.6 s more: 1.2 s in all, never 1 s without progress.
  const auto idleFor = [&](double seconds) {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
      const weft::Waiter::Idle idle = w.idle();
      if (idle != weft::Waiter::Idle::kLook && idle != weft::Waiter::Idle::kSleep) return idle;
      weft::Waiter::nap();
    }
    return weft::Waiter::Idle::kLook;
  };
  EXPECT_EQ(idleFor(0.6), weft::Waiter::Idle::kLook);
  w.progressed();
  EXPECT_EQ(idleFor(0.6), weft::Waiter::Idle::kLook);
  // Without progress it does end.
  EXPECT_EQ(idleUntilNotLook(w).idle, weft::Waiter::Idle::kTimedOut);
}

}  // namespace
