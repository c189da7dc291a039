// Checks argument validation of the communicator entry points: init with a
// bad rank, nranks or a corrupted unique id; use of a destroyed communicator
// and double destroy (which must be refused, not touch freed memory); and the
// query functions. Each failure must return the right code and a last-error
// sentence naming the argument.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstring>

#include "single_rank_comm.h"

namespace {

using weft_test::failedWith;

weftUniqueId freshId() {
  weftUniqueId id;
  EXPECT_EQ(weftGetUniqueId(&id), weftSuccess) << weftGetLastError(nullptr);
  return id;
}

TEST(CommInitArgs, NullCommPointer) {
  EXPECT_TRUE(failedWith(weftCommInitRank(nullptr, 1, freshId(), 0), weftInvalidArgument, "comm"));
  EXPECT_TRUE(failedWith(weftCommInitFromEnv(nullptr), weftInvalidArgument, "comm"));
  EXPECT_TRUE(failedWith(weftGetUniqueId(nullptr), weftInvalidArgument, "uniqueId"));
}

TEST(CommInitArgs, BadNranks) {
  weftUniqueId id = freshId();
  for (int nranks : {0, -1, -1000, (1 << 20) + 1}) {
    weftComm_t comm = reinterpret_cast<weftComm_t>(&id);  // must be overwritten with NULL
    EXPECT_TRUE(failedWith(weftCommInitRank(&comm, nranks, id, 0), weftInvalidArgument, "nranks"))
        << "nranks=" << nranks;
    EXPECT_EQ(comm, nullptr);
  }
}

TEST(CommInitArgs, BadRank) {
  weftUniqueId id = freshId();
  for (int rank : {-1, 1, 2, 1000}) {
    weftComm_t comm = nullptr;
    EXPECT_TRUE(failedWith(weftCommInitRank(&comm, 1, id, rank), weftInvalidArgument, "rank="))
        << "rank=" << rank;
    EXPECT_EQ(comm, nullptr);
  }
  weftComm_t comm = nullptr;
  EXPECT_TRUE(failedWith(weftCommInitRank(&comm, 4, id, 4), weftInvalidArgument, "rank=4"));
}

TEST(CommInitArgs, CorruptedId) {
  weftUniqueId good = freshId();
  const size_t positions[] = {0, 5, 20, 40, 70};
  for (size_t pos : positions) {
    weftUniqueId bad = good;
    bad.internal[pos] = static_cast<char>(bad.internal[pos] ^ 0x10);
    weftComm_t comm = nullptr;
    EXPECT_TRUE(failedWith(weftCommInitRank(&comm, 1, bad, 0), weftInvalidArgument, "commId"))
        << "flipped byte " << pos;
    EXPECT_EQ(comm, nullptr);
  }
  weftUniqueId zero;
  std::memset(&zero, 0, sizeof(zero));
  weftComm_t comm = nullptr;
  EXPECT_TRUE(failedWith(weftCommInitRank(&comm, 1, zero, 0), weftInvalidArgument, "commId"));
  // The untouched id still works afterwards.
  ASSERT_EQ(weftCommInitRank(&comm, 1, good, 0), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

TEST(CommInitArgs, InitAllArguments) {
  weftComm_t comms[2] = {nullptr, nullptr};
  EXPECT_TRUE(failedWith(weftCommInitAll(nullptr, 2, nullptr), weftInvalidArgument, "comms"));
  EXPECT_TRUE(failedWith(weftCommInitAll(comms, 0, nullptr), weftInvalidArgument, "ndev"));
  int devs[2] = {0, 1};
  EXPECT_TRUE(failedWith(weftCommInitAll(comms, 2, devs), weftInvalidArgument, "devlist"));
}

TEST(CommLifecycle, DestroyedCommIsRefused) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitRank(&comm, 1, freshId(), 0), weftSuccess) << weftGetLastError(nullptr);
  ASSERT_EQ(weftCommDestroy(comm), weftSuccess) << weftGetLastError(nullptr);
  // No communicator is created in between, so the stale handle cannot be reused memory.
  EXPECT_TRUE(failedWith(weftCommDestroy(comm), weftInvalidArgument, "not a live communicator"));
  EXPECT_TRUE(failedWith(weftCommAbort(comm), weftInvalidArgument, "not a live communicator"));
  float x = 1, y = 0;
  EXPECT_TRUE(failedWith(weftAllReduce(&x, &y, 1, weftFloat, weftSum, comm, nullptr),
                         weftInvalidArgument, "not a live communicator"));
  EXPECT_TRUE(failedWith(weftAllGather(&x, &y, 1, weftFloat, comm, nullptr), weftInvalidArgument,
                         "not a live communicator"));
  int n = 0;
  EXPECT_TRUE(failedWith(weftCommCount(comm, &n), weftInvalidArgument, "not a live communicator"));
  weftResult_t async = weftSuccess;
  EXPECT_TRUE(failedWith(weftCommGetAsyncError(comm, &async), weftInvalidArgument,
                         "not a live communicator"));
}

TEST(CommLifecycle, NullCommEverywhere) {
  int n = 0;
  weftResult_t async = weftSuccess;
  EXPECT_TRUE(failedWith(weftCommDestroy(nullptr), weftInvalidArgument, "comm is NULL"));
  EXPECT_TRUE(failedWith(weftCommAbort(nullptr), weftInvalidArgument, "comm is NULL"));
  EXPECT_TRUE(failedWith(weftCommCount(nullptr, &n), weftInvalidArgument, "comm is NULL"));
  EXPECT_TRUE(failedWith(weftCommUserRank(nullptr, &n), weftInvalidArgument, "comm is NULL"));
  EXPECT_TRUE(
      failedWith(weftCommGetAsyncError(nullptr, &async), weftInvalidArgument, "comm is NULL"));
}

class CommQueries : public weft_test::SingleRankComm {};

TEST_F(CommQueries, CountRankAndAsyncError) {
  int n = -1, r = -1;
  EXPECT_EQ(weftCommCount(comm_, &n), weftSuccess);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(weftCommUserRank(comm_, &r), weftSuccess);
  EXPECT_EQ(r, 0);
  weftResult_t async = weftInternalError;
  EXPECT_EQ(weftCommGetAsyncError(comm_, &async), weftSuccess);
  EXPECT_EQ(async, weftSuccess);
  EXPECT_TRUE(failedWith(weftCommCount(comm_, nullptr), weftInvalidArgument, "count"));
  EXPECT_TRUE(failedWith(weftCommUserRank(comm_, nullptr), weftInvalidArgument, "rank"));
  EXPECT_TRUE(failedWith(weftCommGetAsyncError(comm_, nullptr), weftInvalidArgument, "asyncError"));
}

TEST_F(CommQueries, AbortFreesTheComm) {
  EXPECT_EQ(weftCommAbort(comm_), weftSuccess) << weftGetLastError(nullptr);
  int n = 0;
  EXPECT_TRUE(failedWith(weftCommCount(comm_, &n), weftInvalidArgument, "not a live communicator"));
  comm_ = nullptr;  // nothing left for TearDown
}

TEST(Version, CodeAndStrings) {
  int v = 0;
  EXPECT_EQ(weftGetVersion(&v), weftSuccess);
  EXPECT_EQ(v, WEFT_VERSION_CODE);
  EXPECT_TRUE(failedWith(weftGetVersion(nullptr), weftInvalidArgument, "version"));
  for (int r = 0; r <= weftNumResults; ++r) {
    const char* s = weftGetErrorString(static_cast<weftResult_t>(r));
    ASSERT_NE(s, nullptr);
    EXPECT_STRNE(s, "") << r;
  }
  EXPECT_STREQ(weftGetErrorString(weftSuccess), "no error");
}

}  // namespace
