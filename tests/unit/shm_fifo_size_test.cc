// The shared-memory FIFO size fitted to the node (shmFifoForNode): unchanged
// up to 32 ranks, then halved until the node's nlocal^2 FIFOs fit 2 GiB, never
// below 64 KiB. 128 ranks once mapped and prefaulted 32 GiB at init.
#include <gtest/gtest.h>

#include "transports/shm/shm_transport.h"

namespace {

using weft::shmFifoForNode;

TEST(ShmFifoSize, FitsTheNodeBudget) {
  constexpr size_t M = 1 << 20, K = 1 << 10;
  EXPECT_EQ(shmFifoForNode(2 * M, 1, 1), 2 * M);
  EXPECT_EQ(shmFifoForNode(2 * M, 2, 1), 2 * M);
  EXPECT_EQ(shmFifoForNode(2 * M, 8, 1), 2 * M);
  EXPECT_EQ(shmFifoForNode(2 * M, 32, 1), 2 * M);  // 32 x 31 x 2 MiB = 1.94 GiB
  EXPECT_EQ(shmFifoForNode(2 * M, 33, 1), 1 * M);
  EXPECT_EQ(shmFifoForNode(2 * M, 32, 2), 1 * M);  // two streams: twice the FIFOs
  EXPECT_EQ(shmFifoForNode(2 * M, 64, 1), 512 * K);
  EXPECT_EQ(shmFifoForNode(2 * M, 128, 1), 128 * K);
  EXPECT_EQ(shmFifoForNode(2 * M, 1024, 1), 64 * K);  // the floor: over the budget
  EXPECT_EQ(shmFifoForNode(64 * K, 4096, 4), 64 * K);
  for (int n = 2; n <= 256; ++n) {
    const size_t fifo = shmFifoForNode(2 * M, n, 1);
    EXPECT_TRUE(fifo == 64 * K || fifo * n * (n - 1) <= weft::kShmNodeBudget) << n;
  }
}

}  // namespace
