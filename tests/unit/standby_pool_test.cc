// The standby pool's answer to survivors (bootstrap/standby_pool.h) while a
// standby is still starting: held until it waits, answered at once when it
// ends or when no standby is known to be starting. A survivor told "no
// standby" a moment before one came to wait would go on shrunk for nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/standby_pool.h"

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct AssignResult {
  weftResult_t code = weftInternalError;
  bool assigned = false;
  std::string why;
  double seconds = 0;
};

// A survivor asking for one standby for rank 1 of 2, on a thread of its own.
std::thread askForOne(const std::string& addr, AssignResult* out) {
  return std::thread([addr, out] {
    weftUniqueId id{};
    const auto start = Clock::now();
    out->code = standbyAssign(addr, 2, {1}, id, &out->assigned, &out->why);
    out->seconds = secondsSince(start);
  });
}

class StandbyPoolTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(StandbyPool::start(&pool_, &addr_), weftSuccess); }

  // A survivor asks for one standby; 300 ms later (still "importing") a
  // standby comes to wait. The pool stops once the survivor has its answer,
  // so a standby that was not sent returns too.
  void askThenWait(AssignResult* result, weftResult_t* waitCode, StandbyAnswer* place) {
    std::thread survivor = askForOne(addr_, result);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::thread standby([this, waitCode, place] { *waitCode = standbyWait(addr_, place); });
    survivor.join();
    pool_.reset();
    standby.join();
  }

  std::unique_ptr<StandbyPool> pool_;
  std::string addr_;
};

TEST_F(StandbyPoolTest, HoldsTheRequestUntilAStartedStandbyWaits) {
  pool_->standbyStarted(getpid());
  AssignResult result;
  weftResult_t waitCode = weftInternalError;
  StandbyAnswer place{};
  askThenWait(&result, &waitCode, &place);
  ASSERT_EQ(result.code, weftSuccess);
  EXPECT_TRUE(result.assigned) << result.why;
  EXPECT_GE(result.seconds, 0.25);
  ASSERT_EQ(waitCode, weftSuccess);
  EXPECT_EQ(place.rank, 1);
  EXPECT_EQ(place.nranks, 2);
}

TEST_F(StandbyPoolTest, HoldsTheRequestForStandbysTheRanksAnnounce) {
  ASSERT_EQ(standbyLifeline(addr_, 0, 2, 1), weftSuccess);  // WEFT_STANDBYS=1
  AssignResult result;
  weftResult_t waitCode = weftInternalError;
  StandbyAnswer place{};
  askThenWait(&result, &waitCode, &place);
  ASSERT_EQ(result.code, weftSuccess);
  EXPECT_TRUE(result.assigned) << result.why;
  ASSERT_EQ(waitCode, weftSuccess);
  EXPECT_EQ(place.rank, 1);
}

TEST_F(StandbyPoolTest, AnswersWhenTheStartingStandbyEnds) {
  const int64_t pid = 999999;  // a standby process that dies before it waits
  pool_->standbyStarted(pid);
  AssignResult result;
  std::thread survivor = askForOne(addr_, &result);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  pool_->processEnded(pid);
  survivor.join();
  ASSERT_EQ(result.code, weftSuccess);
  EXPECT_FALSE(result.assigned);
  EXPECT_NE(result.why.find("0 standby(s) wait, 1 needed"), std::string::npos) << result.why;
  EXPECT_GE(result.seconds, 0.25);
  EXPECT_LT(result.seconds, 5.0);
}

TEST_F(StandbyPoolTest, AnswersAtOnceWhenNoStandbyIsStarting) {
  AssignResult result;
  askForOne(addr_, &result).join();
  ASSERT_EQ(result.code, weftSuccess);
  EXPECT_FALSE(result.assigned);
  EXPECT_NE(result.why.find("0 standby(s) wait, 1 needed"), std::string::npos) << result.why;
  EXPECT_LT(result.seconds, 5.0);
}

}  // namespace
}  // namespace weft
