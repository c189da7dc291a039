// The bootstrap's allgather in log2(n) steps (bootstrap_allgather.cc) on the
// in-process communicators' bootstraps: every rank gets every block, for
// counts that are and are not powers of two, with blocks larger than a
// socket's buffer (each step's send and receive must go together), and again
// on the connections the first call made.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"

namespace {

unsigned char pattern(int rank, size_t i, int round) {
  return static_cast<unsigned char>(rank * 31 + i * 7 + round);
}

TEST(BootstrapAllgather, EveryBlockForAnyCount) {
  for (int n : {1, 2, 3, 5, 8, 11}) {
    std::vector<weftComm_t> comms(n, nullptr);
    ASSERT_EQ(weftCommInitAll(comms.data(), n, nullptr), weftSuccess) << weftGetLastError(nullptr);
    for (int round = 0; round < 2; ++round) {
      const size_t bytes = round == 0 ? 300000 : 3;  // past any socket buffer, then tiny
      std::vector<std::vector<unsigned char>> data(n);
      std::vector<weftResult_t> got(n, weftInternalError);
      std::vector<std::thread> ranks;
      for (int r = 0; r < n; ++r) {
        data[r].assign(n * bytes, 0);
        for (size_t i = 0; i < bytes; ++i) data[r][r * bytes + i] = pattern(r, i, round);
        ranks.emplace_back(
            [&, r] { got[r] = comms[r]->bootstrap->allgather(data[r].data(), bytes); });
      }
      for (auto& t : ranks) t.join();
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(got[r], weftSuccess) << n << " ranks: " << weftGetLastError(nullptr);
        for (int b = 0; b < n; ++b)
          for (size_t i = 0; i < bytes; i += 997)
            ASSERT_EQ(data[r][b * bytes + i], pattern(b, i, round))
                << n << " ranks, rank " << r << ", block " << b << ", byte " << i;
      }
    }
    for (weftComm_t c : comms) EXPECT_EQ(weftCommDestroy(c), weftSuccess);
  }
}

}  // namespace
