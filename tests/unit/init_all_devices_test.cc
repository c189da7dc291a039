// weftCommInitAll's devices, with the fake CUDA (which keeps a current device
// per thread, as CUDA does): each rank's thread must select the device its
// ring runs on. A new thread starts on device 0, so before this a caller on
// another device got every rank's ring on device 0; devlist, NCCL's way of
// naming a device per rank, was refused in every build.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "core/comm.h"
#include "device/fake_runtime.h"

namespace {

constexpr int kMaxRanks = 3;

class InitAllDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("WEFT_TIMEOUT", "20", 1);
    weft::setDeviceRuntimeForTesting(weft::fake::runtime());
  }
  void TearDown() override {
    for (weftComm_t& c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(weftCommDestroy(c), weftSuccess) << weftGetLastError(nullptr);
      }
      c = nullptr;
    }
    weft::setDeviceRuntimeForTesting(nullptr);
    unsetenv("WEFT_TIMEOUT");
  }
  static int callerDevice() {
    int d = -1;
    EXPECT_EQ(weft::deviceRuntime()->currentDevice(&d), weftSuccess);
    return d;
  }
  // "" when rank r's ring is on, on `device`.
  std::string ringOn(int r, int device) const {
    const weft::GpuPeerRing& ring = comms_[r]->peerRing;
    if (ring.state != weft::GpuPeerRing::State::kOn)
      return "rank " + std::to_string(r) + ": ring off: " + ring.offWhy;
    if (ring.device != device)
      return "rank " + std::to_string(r) + ": ring on device " + std::to_string(ring.device) +
             ", not " + std::to_string(device);
    return "";
  }
  weftComm_t comms_[kMaxRanks] = {};
};

TEST_F(InitAllDevices, NullDevlistPutsEveryRankOnTheCallersDevice) {
  // The application selected device 2 and uses CUDA (the fake counts that
  // from its first device allocation, as weft counts a loaded driver).
  int saved = -1;
  ASSERT_EQ(weft::deviceRuntime()->beginEnqueue(2, &saved), weftSuccess);
  void* used = weft::fake::deviceAlloc(64, 2);
  ASSERT_EQ(weftCommInitAll(comms_, 2, nullptr), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(ringOn(0, 2), "");
  EXPECT_EQ(ringOn(1, 2), "");
  weft::fake::memFree(used);
  weft::deviceRuntime()->endEnqueue(saved);
  EXPECT_EQ(callerDevice(), 0);
}

TEST_F(InitAllDevices, DevlistPutsEachRankOnItsDevice) {
  const int devices[kMaxRanks] = {1, 3, 1};
  ASSERT_EQ(weftCommInitAll(comms_, kMaxRanks, devices), weftSuccess) << weftGetLastError(nullptr);
  for (int r = 0; r < kMaxRanks; ++r) EXPECT_EQ(ringOn(r, devices[r]), "");
  EXPECT_EQ(callerDevice(), 0) << "weftCommInitAll changed the caller's device";
}

TEST_F(InitAllDevices, BadDevicesAreRefusedBeforeAnyRankWaits) {
  const int negative[2] = {0, -1};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(weftCommInitAll(comms_, 2, negative), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("devlist[1]=-1"), std::string::npos)
      << weftGetLastError(nullptr);
  const int missing[2] = {0, 99};
  EXPECT_EQ(weftCommInitAll(comms_, 2, missing), weftInvalidArgument);
  const std::string text = weftGetLastError(nullptr);
  EXPECT_NE(text.find("devlist[1]=99"), std::string::npos) << text;
  EXPECT_NE(text.find("invalid device ordinal"), std::string::npos) << text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5))
      << "a bad device must fail at once, not after a rank waited for the rendezvous";
  EXPECT_EQ(comms_[0], nullptr);
  EXPECT_EQ(comms_[1], nullptr);
}

}  // namespace
