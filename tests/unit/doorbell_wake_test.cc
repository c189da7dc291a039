// The doorbell's two ways of sleeping (transports/shm/doorbell.h): in the
// futex, and in poll() on its wake socket (a sleeper that also waits on
// sockets). A ring reaches either sleeper, reaches no one when nobody sleeps,
// and a byte left from an earlier sleep is drained before the next arming.
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <thread>

#include "transports/shm/doorbell.h"

namespace {

using Clock = std::chrono::steady_clock;

bool readable(int fd, int timeoutMs) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeoutMs) == 1 && (p.revents & POLLIN) != 0;
}

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST(DoorbellWake, PollSleeperIsWokenByARing) {
  weft::Doorbell bell;
  ASSERT_TRUE(bell.openWake());
  ASSERT_GE(bell.wakeFd, 0);
  bell.drainWake();
  bell.armPoll();
  std::thread ringer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    bell.ring();
  });
  const auto start = Clock::now();
  const bool woke = readable(bell.wakeFd, 10000);
  const double took = secondsSince(start);
  bell.disarm();
  ringer.join();
  EXPECT_TRUE(woke);
  EXPECT_LT(took, 5.0);
  bell.closeWake();
  EXPECT_EQ(bell.wakeFd, -1);
}

TEST(DoorbellWake, FutexSleeperIsStillWoken) {
  weft::Doorbell bell;
  ASSERT_TRUE(bell.openWake());
  const uint32_t seq = bell.arm();
  std::thread ringer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    bell.ring();
  });
  const auto start = Clock::now();
  bell.wait(seq, 10 * 1000 * 1000);
  const double took = secondsSince(start);
  bell.disarm();
  ringer.join();
  EXPECT_LT(took, 5.0);
  EXPECT_NE(bell.seq.load(), seq);
  EXPECT_FALSE(readable(bell.wakeFd, 0));  // the futex path sends no byte
  bell.closeWake();
}

TEST(DoorbellWake, NoByteWhenNobodySleepsAndStaleOnesAreDrained) {
  weft::Doorbell bell;
  ASSERT_TRUE(bell.openWake());
  bell.ring();  // awake: nothing to send
  EXPECT_FALSE(readable(bell.wakeFd, 0));
  bell.armPoll();
  bell.ring();
  bell.disarm();
  EXPECT_TRUE(readable(bell.wakeFd, 1000));  // a byte for a sleep that is over
  bell.drainWake();
  EXPECT_FALSE(readable(bell.wakeFd, 0));
  bell.closeWake();
}

TEST(DoorbellWake, EachDoorbellHasItsOwnSocket) {
  weft::Doorbell a, b;
  ASSERT_TRUE(a.openWake());
  ASSERT_TRUE(b.openWake());
  EXPECT_NE(a.wakeId, b.wakeId);
  a.armPoll();
  b.armPoll();
  a.ring();
  EXPECT_TRUE(readable(a.wakeFd, 1000));
  EXPECT_FALSE(readable(b.wakeFd, 0));
  a.disarm();
  b.disarm();
  a.closeWake();
  b.closeWake();
}

}  // namespace
