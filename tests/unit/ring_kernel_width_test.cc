// WEFT_NTHREADS, the ring kernel's threads per CTA, reaches the launch (with
// the spy runtime, spy_runtime.h, which records it): 512 unless set, the
// value set otherwise. The kernels' loops take any lane count; on a GPU the
// width decides how much of each SM the ring leaves to compute kernels.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdlib>
#include <string>

#include "spy_ring_comms.h"

namespace {

constexpr size_t kCount = 4096;

// The threads per CTA of an allreduce on the ring between two ranks of this
// process, with WEFT_NTHREADS = `value` (nullptr: unset); -1 on a failure.
int launchedWidth(const char* value) {
  if (value != nullptr) setenv("WEFT_NTHREADS", value, 1);
  int width = -1;
  {
    weft_test::SpyRingComms ring(kCount);
    if (ring.allReduce(kCount)) width = ring.spy()->ringThreads.load();
  }
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
  weftComm_t comms[weft_test::SpyRingComms::kRanks] = {};
  EXPECT_EQ(weftCommInitAll(comms, weft_test::SpyRingComms::kRanks, nullptr), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("WEFT_NTHREADS=96: expected 64, 128, 256"),
            std::string::npos)
      << weftGetLastError(nullptr);
  unsetenv("WEFT_NTHREADS");
}

}  // namespace
