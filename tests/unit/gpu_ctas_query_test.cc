// weftCommGpuCtas, the SMs a rank's GPU ring takes (what compute kernels that
// overlap it should leave free), must report what the ring kernel's launch
// really uses: the spy runtime (spy_runtime.h) records each launch's CTA
// count. One CTA per 256 KiB a link carries, at most WEFT_MAX_CTAS; 0 without
// the ring or for an empty call.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdint>
#include <cstdlib>

#include "spy_ring_comms.h"

namespace {

constexpr size_t kCapacity = size_t{1} << 20;  // floats per rank: 4 MiB

int queried(weftComm_t comm, size_t count, weftDataType_t type = weftFloat) {
  int ctas = -1;
  EXPECT_EQ(weftCommGpuCtas(comm, count, type, &ctas), weftSuccess) << weftGetLastError(nullptr);
  return ctas;
}

// The CTAs the ring launched for an allreduce of `count` floats (-1: failed).
int launched(weft_test::SpyRingComms& ring, size_t count) {
  ring.spy()->ringCtas = -1;
  return ring.allReduce(count) ? ring.spy()->ringCtas.load() : -1;
}

TEST(GpuCtasQuery, MatchesWhatTheRingLaunches) {
  weft_test::SpyRingComms ring(kCapacity);
  ASSERT_TRUE(ring.ok()) << weftGetLastError(nullptr);
  // 1 float; exactly 256 KiB; one float more; 4 MiB (16 wanted, 8 allowed).
  const struct {
    size_t count;
    int ctas;
  } cases[] = {{1, 1}, {65536, 1}, {65537, 2}, {3 * 65536, 3}, {kCapacity, 8}};
  for (const auto& c : cases) {
    for (int r = 0; r < weft_test::SpyRingComms::kRanks; ++r)
      EXPECT_EQ(queried(ring.comm(r), c.count), c.ctas) << c.count << " floats, rank " << r;
    EXPECT_EQ(launched(ring, c.count), c.ctas) << c.count << " floats";
  }
  // By bytes, not elements: 65536 doubles are 512 KiB.
  EXPECT_EQ(queried(ring.comm(0), 65536, weftFloat64), 2);
  EXPECT_EQ(queried(ring.comm(0), 0), 0);
  EXPECT_EQ(queried(ring.comm(0), SIZE_MAX, weftFloat64), 8);  // saturates, no wrap to 0
}

TEST(GpuCtasQuery, AtMostMaxCtas) {
  setenv("WEFT_MAX_CTAS", "3", 1);
  {
    weft_test::SpyRingComms ring(kCapacity);
    ASSERT_TRUE(ring.ok()) << weftGetLastError(nullptr);
    EXPECT_EQ(queried(ring.comm(0), kCapacity), 3);
    EXPECT_EQ(launched(ring, kCapacity), 3);
    EXPECT_EQ(queried(ring.comm(1), 65537), 2);
  }
  unsetenv("WEFT_MAX_CTAS");
}

TEST(GpuCtasQuery, ZeroWithTheRingOff) {
  setenv("WEFT_GPU_RING", "0", 1);  // device calls stage through host memory
  {
    weft_test::SpyRingComms ring(kCapacity);
    EXPECT_FALSE(ring.ok());  // the ring is off
    EXPECT_EQ(queried(ring.comm(0), kCapacity), 0);
    EXPECT_EQ(launched(ring, 65536), -1);  // never launched: the spy's mark stays
  }
  unsetenv("WEFT_GPU_RING");
}

}  // namespace
