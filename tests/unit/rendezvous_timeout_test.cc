// Checks rendezvous failure: with WEFT_TIMEOUT=2, ranks whose peers never
// arrive must fail with weftTimeout or weftRemoteError within a few seconds
// (not hang), and the message must name the missing rank(s) so that a user
// knows which process to look at. Runs in its own test process because
// WEFT_TIMEOUT must be set before the first weft call.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct InitOutcome {
  weftResult_t result = weftSuccess;
  std::string error;
  double seconds = 0;
  weftComm_t comm = nullptr;
};

InitOutcome initRank(int nranks, const weftUniqueId& id, int rank) {
  InitOutcome o;
  Clock::time_point start = Clock::now();
  o.result = weftCommInitRank(&o.comm, nranks, id, rank);
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  o.error = weftGetLastError(nullptr);
  return o;
}

void expectMissingFailure(const InitOutcome& o, const std::string& missing) {
  EXPECT_TRUE(o.result == weftTimeout || o.result == weftRemoteError)
      << "result " << o.result << ": " << o.error;
  EXPECT_EQ(o.comm, nullptr);
  EXPECT_LT(o.seconds, 5.0) << "took too long to give up";
  EXPECT_GT(o.seconds, 1.0) << "gave up before WEFT_TIMEOUT: " << o.error;
  // "rank 1", or a list such as "ranks 1,3".
  EXPECT_NE(o.error.find(missing), std::string::npos)
      << "error does not name the missing rank(s) '" << missing << "': " << o.error;
}

class RendezvousTimeout : public ::testing::Test {
 protected:
  void SetUp() override { setenv("WEFT_TIMEOUT", "2", 1); }
};

TEST_F(RendezvousTimeout, SecondRankNeverComes) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << weftGetLastError(nullptr);
  InitOutcome o = initRank(2, id, 0);
  expectMissingFailure(o, "1");
  EXPECT_NE(o.error.find("never arrived"), std::string::npos) << o.error;
}

TEST_F(RendezvousTimeout, TwoOfFourRanksNeverCome) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << weftGetLastError(nullptr);
  InitOutcome outcomes[2];
  std::thread t0([&] { outcomes[0] = initRank(4, id, 0); });
  std::thread t2([&] { outcomes[1] = initRank(4, id, 2); });
  t0.join();
  t2.join();
  for (const InitOutcome& o : outcomes) expectMissingFailure(o, "1,3");
}

TEST_F(RendezvousTimeout, NranksMismatchIsReported) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << weftGetLastError(nullptr);
  InitOutcome outcomes[2];
  std::thread a([&] { outcomes[0] = initRank(2, id, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rank 0 sets nranks=2 first
  std::thread b([&] { outcomes[1] = initRank(3, id, 1); });
  a.join();
  b.join();
  EXPECT_NE(outcomes[0].result, weftSuccess);
  EXPECT_LT(outcomes[0].seconds, 5.0);
  EXPECT_NE(outcomes[0].error.find("nranks"), std::string::npos) << outcomes[0].error;
  EXPECT_NE(outcomes[1].result, weftSuccess);
  EXPECT_LT(outcomes[1].seconds, 5.0);
}

}  // namespace
