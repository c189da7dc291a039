// WEFT_NTHREADS, the ring kernel's threads per CTA, reaches the launch (with
// the spy runtime, spy_runtime.h, which records it): 512 unless set, the
// value set otherwise. The kernels' loops take any lane count; on a GPU the
// width decides how much of each SM the ring leaves to compute kernels.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdlib>
#include <string>

#include "core/comm.h"
#include "device/fake_runtime.h"
#include "spy_runtime.h"

namespace {

namespace fake = weft::fake;
constexpr int kRanks = 2;
constexpr size_t kCount = 4096;

// The threads per CTA of an allreduce on the ring between two ranks of this
// process, with WEFT_NTHREADS = `value` (nullptr: unset); -1 on a failure.
int launchedWidth(const char* value) {
  if (value != nullptr) setenv("WEFT_NTHREADS", value, 1);
  weft_test::SpyRuntime* spy = weft_test::SpyRuntime::instance();
  spy->reset();
  spy->ring = true;
  weft::setDeviceRuntimeForTesting(spy);
  int width = -1;
  weftComm_t comms[kRanks] = {};
  void* streams[kRanks] = {};
  float* bufs[kRanks] = {};
  if (weftCommInitAll(comms, kRanks, nullptr) == weftSuccess) {
    bool ok = true;
    for (int r = 0; r < kRanks; ++r) {
      ok = ok && comms[r]->p2pRing.state == weft::P2pRing::State::kOn;
      streams[r] = fake::streamCreate();
      bufs[r] = static_cast<float*>(fake::deviceAlloc(kCount * sizeof(float)));
      fake::deviceMemset(bufs[r], 0, kCount * sizeof(float));
    }
    for (int r = 0; r < kRanks && ok; ++r)
      ok = weftAllReduce(bufs[r], bufs[r], kCount, weftFloat, weftSum, comms[r], streams[r]) ==
           weftSuccess;
    for (int r = 0; r < kRanks; ++r) fake::streamSync(streams[r]);
    if (ok) width = spy->ringThreads.load();
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(weftCommDestroy(comms[r]), weftSuccess) << weftGetLastError(nullptr);
      fake::streamDestroy(streams[r]);
      fake::memFree(bufs[r]);
    }
  }
  weft::setDeviceRuntimeForTesting(nullptr);
  unsetenv("WEFT_NTHREADS");
  return width;
}

TEST(RingKernelWidth, FiveHundredTwelveThreadsUnlessSet) { EXPECT_EQ(launchedWidth(nullptr), 512); }

TEST(RingKernelWidth, NthreadsReachesTheLaunch) {
  EXPECT_EQ(launchedWidth("128"), 128);
  EXPECT_EQ(launchedWidth("64"), 64);
}

TEST(RingKernelWidth, AnotherWidthIsRefusedAtInit) {
  setenv("WEFT_NTHREADS", "96", 1);
  weftComm_t comms[kRanks] = {};
  EXPECT_EQ(weftCommInitAll(comms, kRanks, nullptr), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("WEFT_NTHREADS=96: expected 64, 128, 256"),
            std::string::npos)
      << weftGetLastError(nullptr);
  unsetenv("WEFT_NTHREADS");
}

}  // namespace
