// weft.hpp, the C++ layer: a one-rank communicator, blocking and async
// allreduce/allgather on HostBuffer memory, errors as weft::Error with the
// C code and sentence, and HostBuffer's ownership when moved.
#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <string>
#include <utility>

namespace {

TEST(CppApi, OneRankCollectivesOnHostBuffers) {
  weft::Comm comm(1, weft::uniqueId(), 0);
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  weft::HostBuffer<float> in(1000), out(1000);
  ASSERT_EQ(in.size(), 1000u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i], 0.0f) << "not zeroed";
    in[i] = static_cast<float>(i);
  }
  comm.allReduce(in.data(), out.data(), in.size());
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<float>(i));
  weft::HostBuffer<int64_t> piece(5), all(5);
  for (size_t i = 0; i < 5; ++i) piece[i] = static_cast<int64_t>(i) * 3;
  weft::Request r = comm.allGatherAsync(piece.data(), all.data(), 5);
  r.wait();
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(all[i], static_cast<int64_t>(i) * 3);
}

TEST(CppApi, ErrorsCarryTheCodeAndSentence) {
  weft::Comm comm(1, weft::uniqueId(), 0);
  float x = 1.0f;
  try {
    comm.allReduce<float>(nullptr, &x, 1);
    FAIL() << "no exception";
  } catch (const weft::Error& e) {
    EXPECT_EQ(e.code(), weftInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("sendbuff"), std::string::npos) << e.what();
  }
}

TEST(CppApi, HostBufferMovesOwnership) {
  weft::HostBuffer<double> a(16);
  double* p = a.data();
  weft::HostBuffer<double> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(a.size(), 0u);
  weft::HostBuffer<double> c(4);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 16u);
}

}  // namespace
