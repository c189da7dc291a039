// What destroy and abort do with calls on a stream that are still pending: the
// stream is released (never left waiting), destroy waits one WEFT_TIMEOUT in
// all however many calls its stalled stream holds, and staging a stream may
// still copy through is kept until the stream is past it, then freed (not
// leaked, and never freed early: the fake's pinned memory is unmapped when
// freed, so a late copy through it would crash the test).
#include <gtest/gtest.h>
#include <unistd.h>
#include <weft/weft.h>

#include <chrono>
#include <string>

#include "core/comm.h"
#include "device/fake_runtime.h"
#include "spy_stream_fixture.h"

namespace {

namespace fake = weft::fake;
using Clock = std::chrono::steady_clock;
using StreamTeardown = weft_test::SpyStreamTest;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Waits up to 5 s for the staging still held to be freed; returns what is left.
int pinnedLeftAfterWaiting(weft_test::SpyRuntime* spy) {
  for (int i = 0; i < 500 && spy->pinnedLive() > 0; ++i) usleep(10 * 1000);
  return spy->pinnedLive();
}

// Stalls the stream and makes `n` calls on it, each holding its own block.
void stallWithCalls(void* stream, weftComm_t comm, const float* send, float* recv, size_t count,
                    int n) {
  fake::streamStall(stream);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(weftAllReduce(send, recv, count, weftFloat, weftSum, comm, stream), weftSuccess)
        << weftGetLastError(nullptr);
}

TEST_F(StreamTeardown, AbortFreesStagingOnceTheStreamIsPast) {
  stallWithCalls(stream_, comm_, send_, recv_, kCount, 3);
  ASSERT_EQ(spy_->pinnedLive(), 3);
  ASSERT_EQ(weftCommAbort(comm_), weftSuccess);
  comm_ = nullptr;
  usleep(200 * 1000);
  EXPECT_EQ(spy_->pinnedLive(), 3) << "staging freed while a stalled stream may still use it";
  fake::streamResume(stream_);
  fake::streamSync(stream_);  // hangs if a "done" was left down
  EXPECT_EQ(pinnedLeftAfterWaiting(spy_), 0) << "staging leaked";
}

TEST_F(StreamTeardown, DestroyFreesStagingOnceTheStreamIsPast) {
  comm_->config.timeoutSec = 0.5;
  stallWithCalls(stream_, comm_, send_, recv_, kCount, 3);
  ASSERT_EQ(weftCommDestroy(comm_), weftSuccess);
  comm_ = nullptr;
  EXPECT_EQ(spy_->pinnedLive(), 3) << "staging freed while a stalled stream may still use it";
  fake::streamResume(stream_);
  fake::streamSync(stream_);
  EXPECT_EQ(pinnedLeftAfterWaiting(spy_), 0) << "staging leaked";
}

// A CUDA error part-way through enqueuing a call (at the "ready" flag, the
// wait for "done", the copy out or the "freed" flag): the call fails, the
// stream runs what was enqueued without waiting forever, and the call's
// staging is freed with the communicator (its "freed" is still enqueued, so
// the pool can tell when the stream is past it), not leaked.
TEST_F(StreamTeardown, EnqueueFailingPartWayLeaksNoStaging) {
  for (int failAt = 1; failAt <= 4; ++failAt) {
    SCOPED_TRACE("enqueue " + std::to_string(failAt) + " fails");
    if (comm_ == nullptr) {  // the failure broke the previous one
      weftUniqueId id;
      ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
      ASSERT_EQ(weftCommInitRank(&comm_, 1, id, 0), weftSuccess) << weftGetLastError(nullptr);
    }
    spy_->enqueuesBeforeOneFailure = failAt;
    EXPECT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_),
              weftUnhandledCudaError);
    spy_->enqueuesBeforeOneFailure = -1;
    fake::streamSync(stream_);  // hangs if a "done" was left down
    ASSERT_EQ(weftCommDestroy(comm_), weftSuccess) << weftGetLastError(nullptr);
    comm_ = nullptr;
    EXPECT_EQ(pinnedLeftAfterWaiting(spy_), 0) << "staging leaked";
  }
}

// A stream that drained before destroy: its staging is freed by destroy itself.
TEST_F(StreamTeardown, DestroyFreesDrainedStagingAtOnce) {
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  fake::streamSync(stream_);
  ASSERT_EQ(weftCommDestroy(comm_), weftSuccess);
  comm_ = nullptr;
  EXPECT_EQ(spy_->pinnedLive(), 0);
  EXPECT_TRUE(holdsInput(recv_));
}

// Five calls on a stalled stream: destroy gives the stream one WEFT_TIMEOUT to
// reach them, not one per call (that took 5 timeouts and one more for staging).
TEST_F(StreamTeardown, DestroyWaitsOneTimeoutForAllStalledCalls) {
  const double timeout = 1.0;
  comm_->config.timeoutSec = timeout;
  stallWithCalls(stream_, comm_, send_, recv_, kCount, 5);
  auto t0 = Clock::now();
  ASSERT_EQ(weftCommDestroy(comm_), weftSuccess);
  comm_ = nullptr;
  const double took = secondsSince(t0);
  EXPECT_LT(took, 2 * timeout) << "destroy waited " << took << " s";
  fake::streamResume(stream_);
  fake::streamSync(stream_);
  EXPECT_EQ(pinnedLeftAfterWaiting(spy_), 0);
}

// The same once the calls timed out by themselves: the first timeout broke
// the communicator, and the calls behind it are failed at once (their stream
// released) instead of each waiting its own timeout.
TEST_F(StreamTeardown, CallsBehindATimedOutCallFailAtOnce) {
  const double timeout = 0.5;
  comm_->config.timeoutSec = timeout;
  stallWithCalls(stream_, comm_, send_, recv_, kCount, 5);
  auto t0 = Clock::now();
  weftResult_t async = weftSuccess;
  while (async == weftSuccess && secondsSince(t0) < 10) {
    ASSERT_EQ(weftCommGetAsyncError(comm_, &async), weftSuccess);
    usleep(10 * 1000);
  }
  EXPECT_EQ(async, weftTimeout);
  // All five are done with (the progress thread is idle) about one timeout
  // after they were made, not five.
  while (!comm_->progress.idle() && secondsSince(t0) < 10) usleep(10 * 1000);
  EXPECT_LT(secondsSince(t0), 2 * timeout);
  fake::streamResume(stream_);
  fake::streamSync(stream_);
}

}  // namespace
