// Checks weftCommAbort from another thread while a rank is blocked in a
// collective whose peers never call it (the hang a fault-tolerant framework
// must break): abort must return within 1 s, and the blocked call (blocking
// form, or weftWait on the async form) must return an error soon after; and
// two threads retiring one communicator at once free it once.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRanks = 3;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct BlockedCall {
  std::atomic<bool> done{false};
  weftResult_t result = weftSuccess;
  std::string error;
  Clock::time_point finishedAt;
};

// Waits for `call` to finish; a call that never returns cannot be joined, so the
// process ends here rather than hang until the ctest timeout.
void joinOrDie(std::thread& t, BlockedCall& call, double seconds) {
  Clock::time_point start = Clock::now();
  while (!call.done.load() && secondsSince(start) < seconds)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!call.done.load()) {
    std::fprintf(stderr, "FAIL: the blocked call did not return %.0f s after abort\n", seconds);
    std::_Exit(1);
  }
  t.join();
}

class CommAbort : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(weftCommInitAll(comms_, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
  }
  void TearDown() override {
    // Ranks 1 and 2 never called anything; destroying them must still work.
    for (int r = 1; r < kRanks; ++r)
      if (comms_[r] != nullptr) {
        EXPECT_EQ(weftCommDestroy(comms_[r]), weftSuccess) << r;
      }
  }
  // Aborts rank 0 once `call` has been blocked for a while; checks abort's timing.
  void abortRank0(const BlockedCall& call) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_FALSE(call.done.load()) << "the call returned before abort: " << call.error;
    Clock::time_point start = Clock::now();
    EXPECT_EQ(weftCommAbort(comms_[0]), weftSuccess) << weftGetLastError(nullptr);
    abortedAt_ = Clock::now();
    EXPECT_LT(secondsSince(start), 1.0) << "weftCommAbort took too long";
    comms_[0] = nullptr;
  }
  void expectAbortedError(const BlockedCall& call) {
    EXPECT_NE(call.result, weftSuccess);
    EXPECT_EQ(call.result, weftInvalidUsage) << call.error;
    EXPECT_NE(call.error.find("abort"), std::string::npos) << call.error;
    EXPECT_LT(std::chrono::duration<double>(call.finishedAt - abortedAt_).count(), 1.0);
  }

  weftComm_t comms_[kRanks] = {nullptr, nullptr, nullptr};
  Clock::time_point abortedAt_;
};

TEST_F(CommAbort, UnblocksBlockingAllReduce) {
  for (size_t count : {size_t{1000}, size_t{4000000}}) {  // one-round and ring
    SCOPED_TRACE("count " + std::to_string(count));
    if (comms_[0] == nullptr) {
      ASSERT_EQ(weftCommInitAll(comms_, kRanks, nullptr), weftSuccess);
    }
    std::vector<float> in(count, 1.0f), out(count, 0.0f);
    BlockedCall call;
    std::thread t([&] {
      call.result =
          weftAllReduce(in.data(), out.data(), count, weftFloat, weftSum, comms_[0], nullptr);
      call.error = weftGetLastError(nullptr);
      call.finishedAt = Clock::now();
      call.done.store(true);
    });
    abortRank0(call);
    joinOrDie(t, call, 5.0);
    expectAbortedError(call);
    for (int r = 1; r < kRanks; ++r) {
      EXPECT_EQ(weftCommDestroy(comms_[r]), weftSuccess);
      comms_[r] = nullptr;
    }
  }
}

TEST_F(CommAbort, UnblocksWaitOnAsyncAllGather) {
  const size_t count = 50000;
  std::vector<int32_t> in(count, 3), out(count * kRanks, 0);
  weftRequest_t req = nullptr;
  ASSERT_EQ(weftAllGatherAsync(in.data(), out.data(), count, weftInt32, comms_[0], &req),
            weftSuccess);
  BlockedCall call;
  std::thread t([&] {
    call.result = weftWait(&req);
    call.error = weftGetLastError(nullptr);
    call.finishedAt = Clock::now();
    call.done.store(true);
  });
  abortRank0(call);
  joinOrDie(t, call, 5.0);
  expectAbortedError(call);
  EXPECT_EQ(req, nullptr);
}

TEST_F(CommAbort, AbortIdleCommIsQuickAndPeersFail) {
  Clock::time_point start = Clock::now();
  EXPECT_EQ(weftCommAbort(comms_[0]), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_LT(secondsSince(start), 1.0);
  comms_[0] = nullptr;
  // The survivors' next collective needs rank 0: it must fail promptly (rank 0's
  // sockets are closed), not hang, and break their communicators.
  BlockedCall calls[kRanks - 1];
  std::vector<std::thread> threads;
  for (int r = 1; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      std::vector<double> x(10, 1.0);
      BlockedCall& c = calls[r - 1];
      c.result =
          weftAllReduce(x.data(), x.data(), x.size(), weftDouble, weftSum, comms_[r], nullptr);
      c.error = weftGetLastError(nullptr);
      c.finishedAt = Clock::now();
      c.done.store(true);
    });
  for (auto& t : threads) t.join();
  for (int r = 1; r < kRanks; ++r) {
    const BlockedCall& c = calls[r - 1];
    EXPECT_TRUE(c.result == weftRemoteError || c.result == weftTimeout)
        << "rank " << r << ": " << c.result << " " << c.error;
    EXPECT_LT(secondsSince(start), 5.0) << "rank " << r << " took too long to fail";
    weftResult_t async = weftSuccess;
    EXPECT_EQ(weftCommGetAsyncError(comms_[r], &async), weftSuccess);
    EXPECT_EQ(async, c.result) << "rank " << r;
  }
}

// Two threads abort (or one aborts, one destroys) one communicator at once:
// exactly one frees it, the other is told it is not live (the sanitizer tiers
// would see a double free).
TEST(CommAbortRace, ExactlyOneOfTwoRetirersFreesTheCommunicator) {
  for (int round = 0; round < 200; ++round) {
    weftUniqueId id;
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
    ASSERT_EQ(weftCommInitRank(&comm, 1, id, 0), weftSuccess) << weftGetLastError(nullptr);
    std::atomic<int> ready{0}, freed{0}, refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        const bool destroy = t == 1 && round % 2 == 1;
        weftResult_t r = destroy ? weftCommDestroy(comm) : weftCommAbort(comm);
        if (r == weftSuccess)
          freed.fetch_add(1);
        else if (r == weftInvalidArgument &&
                 std::string(weftGetLastError(nullptr)).find("not a live") != std::string::npos)
          refused.fetch_add(1);
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(freed.load(), 1) << "round " << round;
    EXPECT_EQ(refused.load(), 1) << "round " << round;
  }
}

}  // namespace
