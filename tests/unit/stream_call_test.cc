// Calls on a stream through the C API, on a 1-rank communicator with the fake
// CUDA (src/device/fake_runtime.h): results land on the stream, the call does
// not wait for the stream, bad buffers are refused with a sentence naming
// them, staging is reused, and abort or destroy never leave a stream blocked.
// The multi-rank cases are in tests/mp/mp_device*.cc.
#include <gtest/gtest.h>
#include <unistd.h>
#include <weft/weft.h>

#include <chrono>
#include <vector>

#include "base/device_runtime.h"
#include "core/comm.h"
#include "device/fake_runtime.h"
#include "single_rank_comm.h"

namespace {

namespace fake = weft::fake;
using weft_test::failedWith;

class StreamCall : public weft_test::SingleRankComm {
 protected:
  void SetUp() override {
    weft::setDeviceRuntimeForTesting(fake::runtime());
    weft_test::SingleRankComm::SetUp();
    stream_ = fake::streamCreate();
    send_ = static_cast<float*>(fake::deviceAlloc(kCount * sizeof(float)));
    recv_ = static_cast<float*>(fake::deviceAlloc(kCount * sizeof(float)));
    std::vector<float> in(kCount);
    for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>(i % 1000);
    fake::copyToDevice(send_, in.data(), kCount * sizeof(float));
    fake::deviceMemset(recv_, 0, kCount * sizeof(float));
  }
  void TearDown() override {
    weft_test::SingleRankComm::TearDown();
    fake::streamDestroy(stream_);
    fake::memFree(send_);
    fake::memFree(recv_);
    weft::setDeviceRuntimeForTesting(nullptr);
  }
  std::vector<float> download(const float* dev, size_t count = kCount) {
    std::vector<float> out(count);
    fake::copyFromDevice(out.data(), dev, count * sizeof(float));
    return out;
  }
  bool recvHoldsInput() {
    std::vector<float> got = download(recv_);
    for (size_t i = 0; i < kCount; ++i)
      if (got[i] != static_cast<float>(i % 1000)) return false;
    return true;
  }
  static constexpr size_t kCount = 10007;
  void* stream_ = nullptr;
  float* send_ = nullptr;
  float* recv_ = nullptr;
};

TEST_F(StreamCall, AllReduceLandsOnTheStream) {
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess)
      << weftGetLastError(nullptr);
  fake::streamSync(stream_);
  EXPECT_TRUE(recvHoldsInput());
  // In place.
  ASSERT_EQ(weftAllReduce(recv_, recv_, kCount, weftFloat, weftMax, comm_, stream_), weftSuccess);
  fake::streamSync(stream_);
  EXPECT_TRUE(recvHoldsInput());
  weftResult_t async = weftInternalError;
  ASSERT_EQ(weftCommGetAsyncError(comm_, &async), weftSuccess);
  EXPECT_EQ(async, weftSuccess);
}

TEST_F(StreamCall, ReturnsWithoutWaitingForAStalledStream) {
  fake::streamStall(stream_);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftBroadcast(send_, recv_, kCount, weftFloat, 0, comm_, stream_), weftSuccess);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  usleep(100 * 1000);
  EXPECT_EQ(fake::streamOpsDone(stream_), 0u);
  EXPECT_EQ(download(recv_)[1], 0.0f) << "written while the stream was stalled";
  fake::streamResume(stream_);
  fake::streamSync(stream_);
  EXPECT_TRUE(recvHoldsInput());
}

TEST_F(StreamCall, PinnedAndManagedBuffers) {
  auto* pin = static_cast<float*>(fake::pinnedAlloc(kCount * sizeof(float)));
  auto* managed = static_cast<float*>(fake::managedAlloc(kCount * sizeof(float)));
  for (size_t i = 0; i < kCount; ++i) pin[i] = static_cast<float>(i % 1000);
  // Pinned on a stream: no staging, still stream-ordered.
  ASSERT_EQ(weftAllReduce(pin, pin, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess)
      << weftGetLastError(nullptr);
  // Pinned to device, then managed on the host path (host-accessible memory).
  ASSERT_EQ(weftAllReduce(pin, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  fake::streamSync(stream_);
  EXPECT_TRUE(recvHoldsInput());
  ASSERT_EQ(weftAllReduce(pin, managed, kCount, weftFloat, weftSum, comm_, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  EXPECT_EQ(managed[kCount - 1], static_cast<float>((kCount - 1) % 1000));
  fake::memFree(pin);
  fake::memFree(managed);
}

TEST_F(StreamCall, BadBuffersNameTheArgument) {
  std::vector<float> host(kCount);
  EXPECT_TRUE(
      failedWith(weftAllReduce(send_, host.data(), kCount, weftFloat, weftSum, comm_, nullptr),
                 weftInvalidArgument, "sendbuff="));
  EXPECT_TRUE(failedWith(weftAllGather(host.data(), recv_, kCount, weftFloat, comm_, nullptr),
                         weftInvalidArgument, "recvbuff="));
  EXPECT_TRUE(
      failedWith(weftAllReduce(send_, host.data(), kCount, weftFloat, weftSum, comm_, stream_),
                 weftInvalidArgument, "recvbuff="));
  auto* other = static_cast<float*>(fake::deviceAlloc(kCount * sizeof(float), 1));
  EXPECT_TRUE(failedWith(weftAllReduce(send_, other, kCount, weftFloat, weftSum, comm_, stream_),
                         weftInvalidArgument,
                         "recvbuff is on device 1 but sendbuff is on device 0"));
  int notAStream = 0;
  EXPECT_TRUE(
      failedWith(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, &notAStream),
                 weftInvalidArgument, "stream="));
  fake::memFree(other);
  // None of this reached the peers: the communicator still works.
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  fake::streamSync(stream_);
  EXPECT_TRUE(recvHoldsInput());
}

TEST_F(StreamCall, GroupsOnAStream) {
  void* other = fake::streamCreate();
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  EXPECT_TRUE(failedWith(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, other),
                         weftInvalidArgument, "share one stream"));
  ASSERT_EQ(weftSend(send_, 5, weftFloat, 0, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftRecv(recv_ + 10, 5, weftFloat, 0, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
  fake::streamSync(stream_);
  std::vector<float> got = download(recv_);
  for (size_t i = 0; i < kCount; ++i) {
    float want = static_cast<float>((i >= 10 && i < 15 ? i - 10 : i) % 1000);
    ASSERT_EQ(got[i], want) << "element " << i;
  }
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  weftRequest_t req = nullptr;
  EXPECT_TRUE(failedWith(weftGroupEndAsync(&req), weftInvalidUsage, "weftGroupEnd"));
  fake::streamDestroy(other);
}

// A group's inputs are staged before its first call runs, so a later call
// cannot read an earlier call's output: such a group is refused, naming both
// calls, and the communicator stays usable.
TEST_F(StreamCall, GroupThatReadsAnEarlierOutputIsRefused) {
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftAllReduce(recv_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  EXPECT_TRUE(failedWith(weftGroupEnd(), weftInvalidUsage, "call 2 of the group"));
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftSend(recv_ + 100, 5, weftFloat, 0, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftRecv(send_, 5, weftFloat, 0, comm_, stream_), weftSuccess);
  EXPECT_TRUE(failedWith(weftGroupEnd(), weftInvalidUsage, "reads sendbuff"));
  // Nothing of the refused groups ran; the next call does.
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess)
      << weftGetLastError(nullptr);
  fake::streamSync(stream_);
  EXPECT_TRUE(recvHoldsInput());
}

TEST_F(StreamCall, StagingIsReused) {
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
    fake::streamSync(stream_);
  }
  EXPECT_EQ(comm_->streamStaging->blocks(), 1u);
  // 8 calls in flight on a stalled stream hold 8 blocks; afterwards, 8 more
  // calls reuse them.
  fake::streamStall(stream_);
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  EXPECT_EQ(comm_->streamStaging->blocks(), 8u);
  fake::streamResume(stream_);
  fake::streamSync(stream_);
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  fake::streamSync(stream_);
  EXPECT_EQ(comm_->streamStaging->blocks(), 8u);
  EXPECT_TRUE(recvHoldsInput());
}

TEST_F(StreamCall, AbortReleasesAWaitingStream) {
  fake::streamStall(stream_);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(weftCommAbort(comm_), weftSuccess);
  comm_ = nullptr;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  fake::streamResume(stream_);
  fake::streamSync(stream_);  // hangs if a "done" flag was left down
}

TEST_F(StreamCall, DestroyWaitsForCallsInFlight) {
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftCommDestroy(comm_), weftSuccess);
  comm_ = nullptr;
  fake::streamSync(stream_);
  EXPECT_TRUE(recvHoldsInput());
}

}  // namespace
