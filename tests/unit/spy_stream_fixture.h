// Test fixture for the stream path with the spy runtime (spy_runtime.h): a
// 1-rank communicator, a fake stream and two device buffers of kCount floats
// (send_ holds i % 1000, recv_ zeros), with helpers to read them back.
#pragma once

#include <gtest/gtest.h>
#include <weft/weft.h>

#include <vector>

#include "device/fake_runtime.h"
#include "single_rank_comm.h"
#include "spy_runtime.h"

namespace weft_test {

class SpyStreamTest : public SingleRankComm {
 protected:
  void SetUp() override {
    spy_->reset();
    weft::setDeviceRuntimeForTesting(spy_);
    SingleRankComm::SetUp();
    stream_ = weft::fake::streamCreate();
    send_ = newDeviceBuffer();
    recv_ = newDeviceBuffer();
    std::vector<float> in(kCount);
    for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>(i % 1000);
    weft::fake::copyToDevice(send_, in.data(), kCount * sizeof(float));
  }
  void TearDown() override {
    SingleRankComm::TearDown();
    weft::fake::streamDestroy(stream_);
    weft::fake::memFree(send_);
    weft::fake::memFree(recv_);
    weft::setDeviceRuntimeForTesting(nullptr);
  }
  static float* newDeviceBuffer() {
    auto* p = static_cast<float*>(weft::fake::deviceAlloc(kCount * sizeof(float)));
    weft::fake::deviceMemset(p, 0, kCount * sizeof(float));
    return p;
  }
  static std::vector<float> download(const float* dev) {
    std::vector<float> out(kCount);
    weft::fake::copyFromDevice(out.data(), dev, kCount * sizeof(float));
    return out;
  }
  // True when `dev` holds what send_ holds (the allreduce of 1 rank).
  static bool holdsInput(const float* dev) {
    std::vector<float> got = download(dev);
    for (size_t i = 0; i < kCount; ++i)
      if (got[i] != static_cast<float>(i % 1000)) return false;
    return true;
  }
  static bool allZero(const float* dev) {
    for (float v : download(dev))
      if (v != 0.0f) return false;
    return true;
  }

  static constexpr size_t kCount = 4099;
  SpyRuntime* spy_ = SpyRuntime::instance();
  void* stream_ = nullptr;
  float* send_ = nullptr;
  float* recv_ = nullptr;
};

}  // namespace weft_test
