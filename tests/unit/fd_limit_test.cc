// The descriptor budget (base/fd_limit.h): weft raises a low soft
// RLIMIT_NOFILE as far as a job needs, and where even the hard limit is too
// low, init fails at once with a sentence saying how many are needed (it used
// to fail deep in a connect or accept, or at the root after WEFT_TIMEOUT).
// Every case runs in its own process (see CMakeLists.txt), so lowering the
// limits here touches no other test.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <weft/weft.h>

#include <chrono>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fd_limit.h"

namespace {

rlimit limits() {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  return lim;
}

// Sets soft and hard limits to `open now + soft` and `open now + hard`.
bool setLimits(size_t soft, size_t hard) {
  const size_t open = weft::openFdCount();
  if (open == 0) return false;  // no /proc/self/fd: nothing to go by
  rlimit lim{static_cast<rlim_t>(open + soft), static_cast<rlim_t>(open + hard)};
  return setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

TEST(FdLimit, RaisesTheSoftLimitAsFarAsTheHardOne) {
  if (!setLimits(8, 500)) GTEST_SKIP() << "cannot read /proc/self/fd or set RLIMIT_NOFILE";
  const size_t open = weft::openFdCount();
  ASSERT_EQ(weft::ensureFdRoom(20, 100, "this test"), weftSuccess) << weft::lastError();
  EXPECT_EQ(limits().rlim_cur, open + 100);
  // Wants more than the hard limit, needs less: raised to the hard limit.
  ASSERT_EQ(weft::ensureFdRoom(300, 1000, "this test"), weftSuccess) << weft::lastError();
  EXPECT_EQ(limits().rlim_cur, limits().rlim_max);
  // Needs more than the hard limit: a sentence that says how many.
  EXPECT_EQ(weft::ensureFdRoom(600, 700, "this test"), weftSystemError);
  const std::string why = weft::lastError();
  EXPECT_NE(why.find("this test needs at least " + std::to_string(open + 600)), std::string::npos)
      << why;
  EXPECT_NE(why.find("ulimit -n"), std::string::npos) << why;
  // Never lowers: a limit already high enough stays.
  const rlim_t before = limits().rlim_cur;
  ASSERT_EQ(weft::ensureFdRoom(1, 2, "this test"), weftSuccess);
  EXPECT_EQ(limits().rlim_cur, before);
}

TEST(FdLimit, InitAllOfTwelveRanksUnderALowSoftLimit) {
  // 12 ranks in one process hold 12 x 11 mesh sockets after init, 12 at the root.
  if (!setLimits(16, 2000)) GTEST_SKIP() << "cannot read /proc/self/fd or set RLIMIT_NOFILE";
  std::vector<weftComm_t> comms(12, nullptr);
  ASSERT_EQ(weftCommInitAll(comms.data(), 12, nullptr), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_GT(limits().rlim_cur, weft::openFdCount());
  for (weftComm_t c : comms) EXPECT_EQ(weftCommDestroy(c), weftSuccess);
}

TEST(FdLimit, InitAllFailsAtOnceWhenTheHardLimitIsTooLow) {
  if (!setLimits(16, 16)) GTEST_SKIP() << "cannot read /proc/self/fd or set RLIMIT_NOFILE";
  std::vector<weftComm_t> comms(12, nullptr);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(weftCommInitAll(comms.data(), 12, nullptr), weftSystemError);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string why = weftGetLastError(nullptr);
  EXPECT_NE(why.find("RLIMIT_NOFILE"), std::string::npos) << why;
  EXPECT_NE(why.find("weftCommInitAll of 12 ranks"), std::string::npos) << why;
  EXPECT_LT(seconds, 2.0) << why;
}

}  // namespace
