// Checks argument validation of the collective entry points on a 1-rank
// communicator: every bad argument must return the documented code AND leave
// a last-error sentence that names the argument (the C ABI's promise), while
// count == 0 must succeed even with NULL buffers, as in NCCL.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdint>
#include <vector>

#include "single_rank_comm.h"

namespace {

using weft_test::failedWith;

class CollArgs : public weft_test::SingleRankComm {
 protected:
  std::vector<float> buf_ = std::vector<float>(64, 1.0f);
  std::vector<float> out_ = std::vector<float>(64, 0.0f);
};

TEST_F(CollArgs, NullComm) {
  EXPECT_TRUE(failedWith(
      weftAllReduce(buf_.data(), out_.data(), 4, weftFloat, weftSum, nullptr, WEFT_STREAM_HOST),
      weftInvalidArgument, "comm is NULL"));
  EXPECT_TRUE(
      failedWith(weftAllGather(buf_.data(), out_.data(), 4, weftFloat, nullptr, WEFT_STREAM_HOST),
                 weftInvalidArgument, "comm is NULL"));
  weftRequest_t req = nullptr;
  EXPECT_TRUE(
      failedWith(weftAllReduceAsync(buf_.data(), out_.data(), 4, weftFloat, weftSum, nullptr, &req),
                 weftInvalidArgument, "comm is NULL"));
  EXPECT_EQ(req, nullptr);
}

TEST_F(CollArgs, NullBuffersWithCount) {
  EXPECT_TRUE(failedWith(weftAllReduce(nullptr, out_.data(), 4, weftFloat, weftSum, comm_, nullptr),
                         weftInvalidArgument, "sendbuff"));
  EXPECT_TRUE(failedWith(weftAllReduce(buf_.data(), nullptr, 4, weftFloat, weftSum, comm_, nullptr),
                         weftInvalidArgument, "recvbuff"));
  EXPECT_TRUE(failedWith(weftAllGather(nullptr, out_.data(), 4, weftFloat, comm_, nullptr),
                         weftInvalidArgument, "sendbuff"));
  EXPECT_TRUE(failedWith(weftAllGather(buf_.data(), nullptr, 4, weftFloat, comm_, nullptr),
                         weftInvalidArgument, "recvbuff"));
}

TEST_F(CollArgs, CountZeroSucceedsEvenWithNullBuffers) {
  EXPECT_EQ(weftAllReduce(nullptr, nullptr, 0, weftFloat, weftSum, comm_, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  EXPECT_STREQ(weftGetLastError(nullptr), "");
  EXPECT_EQ(weftAllGather(nullptr, nullptr, 0, weftInt64, comm_, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  weftRequest_t req = nullptr;
  ASSERT_EQ(weftAllReduceAsync(nullptr, nullptr, 0, weftDouble, weftMax, comm_, &req), weftSuccess);
  EXPECT_EQ(weftWait(&req), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(req, nullptr);
}

TEST_F(CollArgs, BadDatatype) {
  // Invalid values inside the enum's value range (0..15): converting anything
  // outside it to the enum type would itself be undefined behaviour in C++.
  for (int dt : {static_cast<int>(weftNumTypes), 11, 15}) {
    EXPECT_TRUE(failedWith(weftAllReduce(buf_.data(), out_.data(), 4,
                                         static_cast<weftDataType_t>(dt), weftSum, comm_, nullptr),
                           weftInvalidArgument, "datatype"))
        << "datatype " << dt;
    EXPECT_TRUE(failedWith(
        weftAllGather(buf_.data(), out_.data(), 4, static_cast<weftDataType_t>(dt), comm_, nullptr),
        weftInvalidArgument, "datatype"))
        << "datatype " << dt;
  }
}

TEST_F(CollArgs, BadOp) {
  for (int op : {static_cast<int>(weftNumOps), 6, 7})  // inside the enum's range 0..7
    EXPECT_TRUE(failedWith(weftAllReduce(buf_.data(), out_.data(), 4, weftFloat,
                                         static_cast<weftRedOp_t>(op), comm_, nullptr),
                           weftInvalidArgument, "op="))
        << "op " << op;
}

TEST_F(CollArgs, CountOverflow) {
  EXPECT_TRUE(failedWith(
      weftAllReduce(buf_.data(), out_.data(), SIZE_MAX, weftInt8, weftSum, comm_, nullptr),
      weftInvalidArgument, "count"));
  EXPECT_TRUE(failedWith(
      weftAllReduce(buf_.data(), out_.data(), SIZE_MAX / 4 + 1, weftFloat, weftSum, comm_, nullptr),
      weftInvalidArgument, "count"));
  EXPECT_TRUE(failedWith(
      weftAllGather(buf_.data(), out_.data(), SIZE_MAX / 8 + 1, weftDouble, comm_, nullptr),
      weftInvalidArgument, "count"));
  // Byte sizes above SIZE_MAX / 2 are refused too (pointer differences would overflow).
  EXPECT_TRUE(failedWith(
      weftAllReduce(buf_.data(), out_.data(), SIZE_MAX / 2 + 1, weftUint8, weftSum, comm_, nullptr),
      weftInvalidArgument, "count"));
}

TEST_F(CollArgs, OverlappingButNotEqualBuffers) {
  EXPECT_TRUE(
      failedWith(weftAllReduce(buf_.data(), buf_.data() + 1, 8, weftFloat, weftSum, comm_, nullptr),
                 weftInvalidArgument, "overlap"));
  EXPECT_TRUE(
      failedWith(weftAllReduce(buf_.data() + 7, buf_.data(), 8, weftFloat, weftSum, comm_, nullptr),
                 weftInvalidArgument, "overlap"));
  // Adjacent, not overlapping: fine.
  EXPECT_EQ(weftAllReduce(buf_.data(), buf_.data() + 8, 8, weftFloat, weftSum, comm_, nullptr),
            weftSuccess)
      << weftGetLastError(nullptr);
  // Allgather on 1 rank: in place is sendbuff == recvbuff + 0; anything else overlapping is
  // refused.
  EXPECT_TRUE(failedWith(weftAllGather(buf_.data() + 1, buf_.data(), 8, weftFloat, comm_, nullptr),
                         weftInvalidArgument, "overlap"));
  EXPECT_EQ(weftAllGather(buf_.data(), buf_.data(), 8, weftFloat, comm_, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
}

TEST_F(CollArgs, NonNullStream) {
  int fakeStream = 0;
  EXPECT_TRUE(
      failedWith(weftAllReduce(buf_.data(), out_.data(), 4, weftFloat, weftSum, comm_, &fakeStream),
                 weftInvalidArgument, "stream"));
  EXPECT_TRUE(failedWith(weftAllGather(buf_.data(), out_.data(), 4, weftFloat, comm_, &fakeStream),
                         weftInvalidArgument, "stream"));
}

TEST_F(CollArgs, NullRequestAndDone) {
  EXPECT_TRUE(failedWith(
      weftAllReduceAsync(buf_.data(), out_.data(), 4, weftFloat, weftSum, comm_, nullptr),
      weftInvalidArgument, "request"));
  EXPECT_TRUE(failedWith(weftAllGatherAsync(buf_.data(), out_.data(), 4, weftFloat, comm_, nullptr),
                         weftInvalidArgument, "request"));
  EXPECT_TRUE(failedWith(weftWait(nullptr), weftInvalidArgument, "request"));
  weftRequest_t none = nullptr;
  EXPECT_TRUE(failedWith(weftWait(&none), weftInvalidArgument, "request"));
  int done = 0;
  EXPECT_TRUE(failedWith(weftTest(&none, &done), weftInvalidArgument, "request"));
  weftRequest_t req = nullptr;
  ASSERT_EQ(weftAllReduceAsync(buf_.data(), out_.data(), 4, weftFloat, weftSum, comm_, &req),
            weftSuccess);
  EXPECT_TRUE(failedWith(weftTest(&req, nullptr), weftInvalidArgument, "done"));
  EXPECT_EQ(weftWait(&req), weftSuccess) << weftGetLastError(nullptr);
}

TEST_F(CollArgs, AsyncBadArgumentReturnsNoRequest) {
  weftRequest_t req = reinterpret_cast<weftRequest_t>(&buf_);  // garbage the call must clear
  EXPECT_TRUE(failedWith(weftAllReduceAsync(buf_.data(), out_.data(), 4, weftFloat,
                                            static_cast<weftRedOp_t>(7), comm_, &req),
                         weftInvalidArgument, "op="));
  EXPECT_EQ(req, nullptr);
}

TEST_F(CollArgs, SuccessClearsTheLastError) {
  ASSERT_NE(weftAllReduce(nullptr, out_.data(), 4, weftFloat, weftSum, comm_, nullptr),
            weftSuccess);
  EXPECT_STRNE(weftGetLastError(nullptr), "");
  ASSERT_EQ(weftAllReduce(buf_.data(), out_.data(), 4, weftFloat, weftSum, comm_, nullptr),
            weftSuccess);
  EXPECT_STREQ(weftGetLastError(comm_), "");
}

}  // namespace
