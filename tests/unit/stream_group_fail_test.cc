// A group over several communicators with calls on streams is enqueued on
// all of them or on none (device/stream_group.h): when one communicator's
// part cannot be enqueued, no other part is left on its stream or queued to
// its progress thread, every communicator of the group is broken, and the
// ranks on the other side see an error within WEFT_TIMEOUT. Two 2-rank
// communicators of this process (weftCommInitAll), with the spy runtime
// (spy_runtime.h) refusing staging or enqueues on demand.
#include <gtest/gtest.h>
#include <unistd.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/comm.h"
#include "device/fake_runtime.h"
#include "single_rank_comm.h"
#include "spy_runtime.h"

namespace {

namespace fake = weft::fake;
using Clock = std::chrono::steady_clock;
using weft_test::failedWith;
constexpr size_t kCount = 1024;
constexpr double kTimeout = 3;  // WEFT_TIMEOUT in this test

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One rank's view of a communicator: its stream and buffers.
struct Rank {
  weftComm_t comm = nullptr;
  void* stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

class StreamGroupFail : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("WEFT_TIMEOUT", "3", 1);
    spy_->reset();
    weft::setDeviceRuntimeForTesting(spy_);
    for (auto& comm : ranks_) {
      weftComm_t comms[2] = {nullptr, nullptr};
      ASSERT_EQ(weftCommInitAll(comms, 2, nullptr), weftSuccess) << weftGetLastError(nullptr);
      for (int r = 0; r < 2; ++r) {
        Rank& k = comm[r];
        k.comm = comms[r];
        k.stream = fake::streamCreate();
        k.send = static_cast<float*>(fake::deviceAlloc(kCount * sizeof(float)));
        k.recv = static_cast<float*>(fake::deviceAlloc(kCount * sizeof(float)));
        std::vector<float> ones(kCount, 1.0f);
        fake::copyToDevice(k.send, ones.data(), kCount * sizeof(float));
        fake::deviceMemset(k.recv, 0, kCount * sizeof(float));
      }
    }
  }
  void TearDown() override {
    for (auto& comm : ranks_)
      for (Rank& k : comm) {
        if (k.comm != nullptr) {
          EXPECT_EQ(weftCommDestroy(k.comm), weftSuccess);
        }
        fake::streamDestroy(k.stream);
        fake::memFree(k.send);
        fake::memFree(k.recv);
      }
    weft::setDeviceRuntimeForTesting(nullptr);
    unsetenv("WEFT_TIMEOUT");
  }
  static weftResult_t allReduce(const Rank& k) {
    return weftAllReduce(k.send, k.recv, kCount, weftFloat, weftSum, k.comm, k.stream);
  }
  // Runs, as one group, the allreduce of rank `r` on both communicators.
  weftResult_t groupOfRank(int r) {
    if (weftGroupStart() != weftSuccess) return weftInternalError;
    for (auto& comm : ranks_)
      if (allReduce(comm[r]) != weftSuccess) return weftInternalError;
    return weftGroupEnd();
  }
  static bool recvUntouched(const Rank& k) {
    std::vector<float> got(kCount);
    fake::copyFromDevice(got.data(), k.recv, kCount * sizeof(float));
    for (float v : got)
      if (v != 0.0f) return false;
    return true;
  }
  static weftResult_t asyncError(const Rank& k) {
    weftResult_t r = weftInternalError;
    EXPECT_EQ(weftCommGetAsyncError(k.comm, &r), weftSuccess);
    return r;
  }
  // Waits up to `seconds` for `k`'s communicator to report an async error.
  static weftResult_t asyncErrorWithin(const Rank& k, double seconds) {
    auto t0 = Clock::now();
    weftResult_t r = asyncError(k);
    while (r == weftSuccess && secondsSince(t0) < seconds) {
      usleep(10 * 1000);
      r = asyncError(k);
    }
    return r;
  }

  weft_test::SpyRuntime* spy_ = weft_test::SpyRuntime::instance();
  Rank ranks_[2][2];  // [communicator][rank]
};

// The second communicator's staging cannot be allocated: nothing of the group
// is enqueued, on either stream.
TEST_F(StreamGroupFail, StagingFailureEnqueuesNothing) {
  spy_->allocsBeforeFailure = 1;  // the first communicator's block, not the second's
  EXPECT_TRUE(failedWith(groupOfRank(0), weftSystemError, "could not enqueue on the stream"));
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("every communicator of the group"),
            std::string::npos);
  for (auto& comm : ranks_) {
    fake::streamSync(comm[0].stream);
    EXPECT_EQ(fake::streamOpsDone(comm[0].stream), 0u) << "a part of the failed group ran";
    EXPECT_TRUE(recvUntouched(comm[0]));
    EXPECT_NE(asyncError(comm[0]), weftSuccess) << "a communicator of the failed group works";
    EXPECT_TRUE(comm[0].comm->progress.idle()) << "a collective of the failed group was queued";
  }
  // The first communicator's block went back to its pool, free for reuse.
  ASSERT_NE(ranks_[0][0].comm->streamStaging, nullptr);
  EXPECT_EQ(ranks_[0][0].comm->streamStaging->blocks(), 1u);
}

// Enqueuing the second communicator's part fails on its stream (a CUDA
// error): the first part, already on its stream, is cancelled (its stream
// passes) and no collective of the group is queued.
TEST_F(StreamGroupFail, EnqueueFailureQueuesNoCollective) {
  spy_->failingStream = ranks_[1][0].stream;
  EXPECT_TRUE(
      failedWith(groupOfRank(0), weftUnhandledCudaError, "could not enqueue on the stream"));
  for (auto& comm : ranks_) {
    EXPECT_TRUE(comm[0].comm->progress.idle()) << "a collective of the failed group was queued";
    fake::streamSync(comm[0].stream);  // hangs if a stream was left waiting
    EXPECT_NE(asyncError(comm[0]), weftSuccess);
  }
}

// Rank 1 enqueues its group; rank 0's fails on the second communicator. Rank
// 1's calls on both communicators must fail within WEFT_TIMEOUT (not
// succeed on one and hang on the other), and release its streams.
TEST_F(StreamGroupFail, PeersSeeAnErrorWithinTheTimeout) {
  spy_->failingStream = ranks_[1][0].stream;
  weftResult_t rank1 = weftInternalError;
  std::thread peer([&] { rank1 = groupOfRank(1); });
  EXPECT_TRUE(
      failedWith(groupOfRank(0), weftUnhandledCudaError, "could not enqueue on the stream"));
  peer.join();
  EXPECT_EQ(rank1, weftSuccess) << "rank 1 enqueues its group and returns";
  auto t0 = Clock::now();
  for (auto& comm : ranks_) {
    EXPECT_NE(asyncErrorWithin(comm[1], 2 * kTimeout), weftSuccess);
    fake::streamSync(comm[1].stream);
  }
  EXPECT_LT(secondsSince(t0), 2 * kTimeout);
}

}  // namespace
