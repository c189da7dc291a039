// Which thread allocates and frees pinned staging (device/staging_pool.h), with
// the spy runtime (spy_runtime.h). On a GPU both may order or wait for device
// work: cudaFreeHost synchronises the device, and the CUDA guide counts a
// page-locked allocation among the operations that order work issued before
// it against work issued after. A thread that enqueues several ranks' calls
// (weftCommInitAll, or a group over communicators) must do neither between
// them, or a GPU ring kernel already running could wait for a launch that
// this thread has not made yet. So: ring calls, up to the blocks reserved at
// setup, allocate nothing while enqueuing, and blocks the pool drops are freed
// by the reaper's thread, never by the caller's.
#include <gtest/gtest.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "core/comm.h"
#include "device/fake_runtime.h"
#include "device/staging_pool.h"
#include "spy_runtime.h"

namespace {

namespace fake = weft::fake;
constexpr int kRanks = 2;

class StreamStagingThread : public ::testing::Test {
 protected:
  void SetUp() override {
    spy_->reset();
    weft::setDeviceRuntimeForTesting(spy_);
  }
  void TearDown() override {
    for (int r = 0; r < kRanks; ++r) {
      if (streams_[r] != nullptr) fake::streamSync(streams_[r]);
      if (comms_[r] != nullptr) {
        EXPECT_EQ(weftCommDestroy(comms_[r]), weftSuccess);
      }
      if (streams_[r] != nullptr) fake::streamDestroy(streams_[r]);
      if (bufs_[r] != nullptr) fake::memFree(bufs_[r]);
    }
    weft::setDeviceRuntimeForTesting(nullptr);
  }
  void initRanks(bool ring) {
    spy_->ring = ring;
    ASSERT_EQ(weftCommInitAll(comms_, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
    for (int r = 0; r < kRanks; ++r) {
      ASSERT_EQ(comms_[r]->peerRing.state == weft::GpuPeerRing::State::kOn, ring)
          << comms_[r]->peerRing.offWhy;
      streams_[r] = fake::streamCreate();
      bufs_[r] = static_cast<float*>(fake::deviceAlloc(kCount * sizeof(float)));
      fake::deviceMemset(bufs_[r], 0, kCount * sizeof(float));
    }
  }
  // `calls` in-place allreduces on every rank, enqueued by this thread
  // rank after rank with no wait in between; then both streams drained and
  // both progress threads idle (a ring call's block is its watch's until
  // then), so that the next batch finds every block free.
  void allReduces(int calls, size_t count) {
    for (int k = 0; k < calls; ++k)
      for (int r = 0; r < kRanks; ++r)
        ASSERT_EQ(
            weftAllReduce(bufs_[r], bufs_[r], count, weftFloat, weftSum, comms_[r], streams_[r]),
            weftSuccess)
            << weftGetLastError(nullptr);
    for (void* s : streams_) fake::streamSync(s);
    for (weftComm_t c : comms_)
      for (int i = 0; i < 5000 && !c->progress.idle(); ++i) usleep(1000);
  }

  static constexpr size_t kCount = size_t{1} << 20;
  weft_test::SpyRuntime* spy_ = weft_test::SpyRuntime::instance();
  weftComm_t comms_[kRanks] = {};
  void* streams_[kRanks] = {};
  float* bufs_[kRanks] = {};
};

// Up to the reserved eight calls of each rank in flight, the first calls of a
// communicator included, nothing pinned is allocated by the caller.
TEST_F(StreamStagingThread, RingCallsAllocateNothingWhileEnqueuing) {
  initRanks(true);
  spy_->watched = std::this_thread::get_id();
  allReduces(1, 4096);
  allReduces(8, kCount);
  EXPECT_EQ(spy_->pinnedAllocsWatched.load(), 0)
      << "a ring call allocated pinned memory on the enqueuing thread";
}

// Staged calls (avg stages) of growing sizes between ring calls: the pool
// drops idle smaller blocks, but never the ring's reserved ones, so the ring
// calls after them still allocate nothing on the caller's thread.
TEST_F(StreamStagingThread, StagedCallsLeaveTheRingReserveAlone) {
  initRanks(true);
  for (size_t count = 16 << 10; count <= kCount; count *= 2)
    for (int r = 0; r < kRanks; ++r)
      ASSERT_EQ(
          weftAllReduce(bufs_[r], bufs_[r], count, weftFloat, weftAvg, comms_[r], streams_[r]),
          weftSuccess)
          << weftGetLastError(nullptr);
  allReduces(0, 0);  // drain
  spy_->watched = std::this_thread::get_id();
  allReduces(8, 4096);
  EXPECT_EQ(spy_->pinnedAllocsWatched.load(), 0)
      << "the ring's reserved blocks were dropped by staged calls";
}

// Staged calls of growing sizes make the pool drop its idle smaller blocks:
// the reaper frees them; the enqueuing thread frees nothing.
TEST_F(StreamStagingThread, DroppedBlocksAreFreedByTheReaper) {
  initRanks(false);
  spy_->watched = std::this_thread::get_id();
  // Each size needs a block twice the last one's (64 KiB up to 4 MiB), and
  // two calls in flight per rank keep two blocks busy at a time.
  for (size_t count = 16 << 10; count <= kCount; count *= 2) allReduces(2, count);
  EXPECT_EQ(spy_->pinnedFreesWatched.load(), 0)
      << "the enqueuing thread freed pinned memory (cudaFreeHost synchronises the device)";
  for (int i = 0; i < 500 && spy_->pinnedFrees.load() == 0; ++i) usleep(10 * 1000);  // the reaper
  EXPECT_GT(spy_->pinnedFrees.load(), 0) << "no dropped block was freed: the test dropped none";
  EXPECT_LE(comms_[0]->streamStaging->blocks(), 8u);
}

}  // namespace
