// Request handles completed more than once: a copy of a handle waited or
// tested after the original completed, two threads waiting on copies of one
// handle at once, and a pointer that never came from weft. Each must be
// refused with weftInvalidArgument and a sentence naming the request, never
// freed twice (the sanitizer tiers run this too); exactly one completion of a
// request returns its result.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <atomic>
#include <thread>
#include <vector>

#include "single_rank_comm.h"

namespace {

using weft_test::failedWith;

class RequestHandle : public weft_test::SingleRankComm {
 protected:
  weftRequest_t start(std::vector<float>* buf) {
    weftRequest_t req = nullptr;
    EXPECT_EQ(weftAllReduceAsync(buf->data(), buf->data(), buf->size(), weftFloat32, weftSum, comm_,
                                 &req),
              weftSuccess)
        << weftGetLastError(nullptr);
    return req;
  }
};

TEST_F(RequestHandle, ACopyWaitedAfterTheOriginalIsRefused) {
  std::vector<float> buf(1000, 1.0f);
  weftRequest_t req = start(&buf);
  weftRequest_t copy = req;
  ASSERT_EQ(weftWait(&req), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_TRUE(failedWith(weftWait(&copy), weftInvalidArgument, "not an outstanding request"));
  int done = 0;
  EXPECT_TRUE(failedWith(weftTest(&copy, &done), weftInvalidArgument, "weftTest: request"));
  EXPECT_EQ(done, 0);
}

TEST_F(RequestHandle, ACopyTestedAfterTheOriginalIsRefused) {
  std::vector<float> buf(1000, 1.0f);
  weftRequest_t req = start(&buf);
  weftRequest_t copy = req;
  int done = 0;
  for (int i = 0; i < 10000000 && !done; ++i)
    ASSERT_EQ(weftTest(&req, &done), weftSuccess) << weftGetLastError(nullptr);
  ASSERT_EQ(done, 1);
  EXPECT_EQ(req, nullptr);
  EXPECT_TRUE(failedWith(weftTest(&copy, &done), weftInvalidArgument, "not an outstanding"));
  EXPECT_TRUE(failedWith(weftWait(&copy), weftInvalidArgument, "weftWait: request"));
}

TEST_F(RequestHandle, APointerThatIsNoRequestIsRefused) {
  int notARequest = 0;
  weftRequest_t fake = reinterpret_cast<weftRequest_t>(&notARequest);
  EXPECT_TRUE(failedWith(weftWait(&fake), weftInvalidArgument, "never returned by"));
  int done = 0;
  EXPECT_TRUE(failedWith(weftTest(&fake, &done), weftInvalidArgument, "never returned by"));
}

TEST_F(RequestHandle, OneOfTwoThreadsWaitingOnCopiesCompletesIt) {
  for (int round = 0; round < 50; ++round) {
    std::vector<float> buf(100000, 1.0f);
    weftRequest_t req = start(&buf);
    weftRequest_t copies[2] = {req, req};
    std::atomic<int> ok{0}, refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        // Thread 1 polls with weftTest, thread 0 blocks in weftWait.
        weftResult_t r = weftSuccess;
        if (t == 0) {
          r = weftWait(&copies[t]);
        } else {
          int done = 0;
          while (r == weftSuccess && !done) r = weftTest(&copies[t], &done);
        }
        (r == weftSuccess ? ok : refused).fetch_add(1);
      });
    for (std::thread& th : threads) th.join();
    ASSERT_EQ(ok.load(), 1) << "round " << round;
    ASSERT_EQ(refused.load(), 1) << "round " << round;
  }
}

TEST_F(RequestHandle, AGroupRequestIsTrackedToo) {
  std::vector<float> a(100, 1.0f), b(100, 2.0f);
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftAllReduce(a.data(), a.data(), a.size(), weftFloat32, weftSum, comm_, nullptr),
            weftSuccess);
  ASSERT_EQ(weftAllReduce(b.data(), b.data(), b.size(), weftFloat32, weftMax, comm_, nullptr),
            weftSuccess);
  weftRequest_t req = nullptr;
  ASSERT_EQ(weftGroupEndAsync(&req), weftSuccess) << weftGetLastError(nullptr);
  weftRequest_t copy = req;
  ASSERT_EQ(weftWait(&req), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_TRUE(failedWith(weftWait(&copy), weftInvalidArgument, "not an outstanding"));
  // An empty group's request is complete at once, and tracked like the others.
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftGroupEndAsync(&req), weftSuccess) << weftGetLastError(nullptr);
  copy = req;
  int done = 0;
  ASSERT_EQ(weftTest(&req, &done), weftSuccess);
  EXPECT_EQ(done, 1);
  EXPECT_TRUE(failedWith(weftTest(&copy, &done), weftInvalidArgument, "not an outstanding"));
}

}  // namespace
