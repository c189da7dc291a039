// Test helpers for API tests: a gtest fixture holding a 1-rank communicator
// (weftGetUniqueId + weftCommInitRank(..., 1, id, 0)), and an assertion that a
// call failed with a given code and that weftGetLastError names the culprit.
#pragma once

#include <gtest/gtest.h>
#include <weft/weft.h>

#include <string>

namespace weft_test {

// Checks `got == want` and that this thread's last error mentions `mention`.
inline ::testing::AssertionResult failedWith(weftResult_t got, weftResult_t want,
                                             const std::string& mention) {
  std::string err = weftGetLastError(nullptr);
  if (got != want)
    return ::testing::AssertionFailure()
           << "returned " << got << " (" << weftGetErrorString(got) << "), expected " << want
           << "; last error: '" << err << "'";
  if (err.find(mention) == std::string::npos)
    return ::testing::AssertionFailure()
           << "last error '" << err << "' does not mention '" << mention << "'";
  return ::testing::AssertionSuccess();
}

class SingleRankComm : public ::testing::Test {
 protected:
  void SetUp() override {
    weftUniqueId id;
    ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << weftGetLastError(nullptr);
    ASSERT_EQ(weftCommInitRank(&comm_, 1, id, 0), weftSuccess) << weftGetLastError(nullptr);
    ASSERT_NE(comm_, nullptr);
  }
  void TearDown() override {
    if (comm_ != nullptr) {
      EXPECT_EQ(weftCommDestroy(comm_), weftSuccess) << weftGetLastError(nullptr);
    }
  }
  weftComm_t comm_ = nullptr;
};

}  // namespace weft_test
