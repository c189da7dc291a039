// fittedRingBytes (transports/ib/ib_options.h): verbs rings and staging of a
// rank stay within the budget as the job grows, never below the floor, and a
// size the job asked for smaller is kept.
#include <gtest/gtest.h>

#include "transports/ib/ib_options.h"

namespace {

TEST(IbRingFit, ShrinksWithTheJobWithinTheBudget) {
  const size_t four = 4 << 20;
  EXPECT_EQ(weft::fittedRingBytes(four, 2, 1), four);
  EXPECT_EQ(weft::fittedRingBytes(four, 65, 1), four);  // 2 x 4 MiB x 64 = 512 MiB
  EXPECT_EQ(weft::fittedRingBytes(four, 66, 1), four / 2);
  EXPECT_EQ(weft::fittedRingBytes(four, 512, 1), size_t{512} << 10);
  EXPECT_EQ(weft::fittedRingBytes(four, 512, 4), weft::kIbRingMin);  // the floor
  EXPECT_EQ(weft::fittedRingBytes(four, 100000, 1), weft::kIbRingMin);
  for (int n : {2, 9, 100, 257, 1000, 4096}) {
    const size_t ring = weft::fittedRingBytes(four, n, 2);
    EXPECT_TRUE(ring == weft::kIbRingMin || 2 * ring * 2 * (n - 1) <= weft::kIbRingBudget) << n;
  }
  EXPECT_EQ(weft::fittedRingBytes(size_t{128} << 10, 4096, 1), size_t{128} << 10);
}

}  // namespace
