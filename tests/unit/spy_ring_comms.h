// Two ranks of this process whose device calls run on the GPU ring of the spy
// runtime (spy_runtime.h: the fake GPU, recording each ring launch): their
// communicators (weftCommInitAll), streams and device buffers. Settings read
// at init (WEFT_NTHREADS, WEFT_MAX_CTAS) must be in the environment before
// construction. Everything is freed, and the real runtime put back, at the end.
#pragma once

#include <gtest/gtest.h>
#include <weft/weft.h>

#include "core/comm.h"
#include "device/fake_runtime.h"
#include "spy_runtime.h"

namespace weft_test {

class SpyRingComms {
 public:
  static constexpr int kRanks = 2;

  // Buffers of `capacity` floats per rank.
  explicit SpyRingComms(size_t capacity) : spy_(SpyRuntime::instance()) {
    spy_->reset();
    spy_->ring = true;
    weft::setDeviceRuntimeForTesting(spy_);
    inited_ = weftCommInitAll(comms_, kRanks, nullptr) == weftSuccess;
    ok_ = inited_;
    for (int r = 0; r < kRanks && inited_; ++r) {
      ok_ = ok_ && comms_[r]->peerRing.state == weft::GpuPeerRing::State::kOn;
      streams_[r] = weft::fake::streamCreate();
      bufs_[r] = static_cast<float*>(weft::fake::deviceAlloc(capacity * sizeof(float)));
      weft::fake::deviceMemset(bufs_[r], 0, capacity * sizeof(float));
    }
  }
  ~SpyRingComms() {
    for (int r = 0; r < kRanks; ++r) {
      if (comms_[r] != nullptr) {
        EXPECT_EQ(weftCommDestroy(comms_[r]), weftSuccess) << weftGetLastError(nullptr);
      }
      if (streams_[r] != nullptr) weft::fake::streamDestroy(streams_[r]);
      if (bufs_[r] != nullptr) weft::fake::memFree(bufs_[r]);
    }
    weft::setDeviceRuntimeForTesting(nullptr);
  }
  SpyRingComms(const SpyRingComms&) = delete;
  SpyRingComms& operator=(const SpyRingComms&) = delete;

  // Init succeeded with the ring on at every rank.
  bool ok() const { return ok_; }
  weftComm_t comm(int r) const { return comms_[r]; }
  SpyRuntime* spy() const { return spy_; }

  // A sum allreduce of `count` floats (at most the capacity) on every rank's
  // stream (on the ring or not), then waits for the streams; false when a
  // call failed or init did.
  bool allReduce(size_t count) {
    bool ok = inited_;
    for (int r = 0; r < kRanks && ok; ++r)
      ok = weftAllReduce(bufs_[r], bufs_[r], count, weftFloat, weftSum, comms_[r], streams_[r]) ==
           weftSuccess;
    for (int r = 0; r < kRanks; ++r)
      if (streams_[r] != nullptr) weft::fake::streamSync(streams_[r]);
    return ok;
  }

 private:
  SpyRuntime* spy_;
  bool inited_ = false;
  bool ok_ = false;
  weftComm_t comms_[kRanks] = {};
  void* streams_[kRanks] = {};
  float* bufs_[kRanks] = {};
};

}  // namespace weft_test
