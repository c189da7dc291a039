// Checks the collectives on a 1-rank communicator, the degenerate case every
// algorithm must still get right: allreduce and allgather copy the input to
// the output out of place and leave it alone in place, for every datatype,
// every op (avg over one rank is the identity) and odd counts, through the
// blocking and the async (wait and test) forms.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "single_rank_comm.h"

namespace {

class SingleRank : public weft_test::SingleRankComm {};

constexpr weftRedOp_t kOps[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};
constexpr weftDataType_t kReducible[] = {weftInt8,  weftUint8,  weftInt32,   weftUint32,
                                         weftInt64, weftUint64, weftFloat32, weftFloat64};
constexpr size_t kCounts[] = {1, 7, 1023, 300001};

size_t sizeOf(weftDataType_t dt) {
  switch (dt) {
    case weftInt8:
    case weftUint8:
      return 1;
    case weftFloat16:
    case weftBfloat16:
      return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32:
      return 4;
    default:
      return 8;
  }
}

// Bytes that are a valid value in every type: small positive integers in each
// element's low byte (floats get 0x3f.. patterns, which are ordinary numbers).
std::vector<unsigned char> pattern(size_t bytes, int seed) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>((i * 13 + seed) % 61 + 1);
  return v;
}

TEST_F(SingleRank, AllReduceCopiesOutOfPlace) {
  for (weftDataType_t dt : kReducible)
    for (weftRedOp_t op : kOps)
      for (size_t count : kCounts) {
        size_t bytes = count * sizeOf(dt);
        std::vector<unsigned char> in = pattern(bytes, 1), out(bytes, 0xee);
        ASSERT_EQ(weftAllReduce(in.data(), out.data(), count, dt, op, comm_, nullptr), weftSuccess)
            << weftGetLastError(nullptr);
        ASSERT_EQ(out, in) << "dt=" << dt << " op=" << op << " count=" << count;
        ASSERT_EQ(in, pattern(bytes, 1)) << "input changed";
      }
}

TEST_F(SingleRank, AllReduceInPlaceLeavesData) {
  for (weftDataType_t dt : kReducible)
    for (weftRedOp_t op : kOps)
      for (size_t count : kCounts) {
        size_t bytes = count * sizeOf(dt);
        std::vector<unsigned char> buf = pattern(bytes, 2);
        ASSERT_EQ(weftAllReduce(buf.data(), buf.data(), count, dt, op, comm_, nullptr), weftSuccess)
            << weftGetLastError(nullptr);
        ASSERT_EQ(buf, pattern(bytes, 2)) << "dt=" << dt << " op=" << op << " count=" << count;
      }
}

TEST_F(SingleRank, AllGatherCopiesEveryDatatype) {
  for (int d = 0; d < weftNumTypes; ++d) {
    weftDataType_t dt = static_cast<weftDataType_t>(d);
    for (size_t count : kCounts) {
      size_t bytes = count * sizeOf(dt);
      std::vector<unsigned char> in = pattern(bytes, 3), out(bytes, 0xee);
      ASSERT_EQ(weftAllGather(in.data(), out.data(), count, dt, comm_, nullptr), weftSuccess)
          << weftGetLastError(nullptr);
      ASSERT_EQ(out, in) << "dt=" << dt << " count=" << count;
      // In place: sendbuff == recvbuff + rank * count.
      ASSERT_EQ(weftAllGather(out.data(), out.data(), count, dt, comm_, nullptr), weftSuccess)
          << weftGetLastError(nullptr);
      ASSERT_EQ(out, in) << "in place, dt=" << dt << " count=" << count;
    }
  }
}

TEST_F(SingleRank, AsyncWaitInOrder) {
  const size_t n = 100003;
  std::vector<float> a(n), outA(n, -1.0f);
  std::vector<int64_t> b(n), outB(n, -1);
  std::vector<double> c(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = static_cast<int64_t>(i) - 7;
    c[i] = static_cast<double>(i) / 3.0;
  }
  std::vector<double> cIn = c;
  weftRequest_t reqs[3] = {nullptr, nullptr, nullptr};
  ASSERT_EQ(weftAllReduceAsync(a.data(), outA.data(), n, weftFloat, weftSum, comm_, &reqs[0]),
            weftSuccess);
  ASSERT_EQ(weftAllGatherAsync(b.data(), outB.data(), n, weftInt64, comm_, &reqs[1]), weftSuccess);
  ASSERT_EQ(weftAllReduceAsync(c.data(), c.data(), n, weftDouble, weftMax, comm_, &reqs[2]),
            weftSuccess);
  for (weftRequest_t& r : reqs) {
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(weftWait(&r), weftSuccess) << weftGetLastError(nullptr);
    EXPECT_EQ(r, nullptr);
  }
  EXPECT_EQ(outA, a);
  EXPECT_EQ(outB, b);
  EXPECT_EQ(c, cIn);
}

TEST_F(SingleRank, AsyncTestLoop) {
  const size_t n = 4099;
  std::vector<int32_t> in(n), out[3];
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<int32_t>(i * 3);
  weftRequest_t reqs[3] = {nullptr, nullptr, nullptr};
  for (int k = 0; k < 3; ++k) {
    out[k].assign(n, -1);
    ASSERT_EQ(weftAllReduceAsync(in.data(), out[k].data(), n, weftInt32, weftMin, comm_, &reqs[k]),
              weftSuccess);
  }
  int pending = 3;
  for (int spins = 0; pending > 0 && spins < 10000000; ++spins) {
    for (weftRequest_t& r : reqs) {
      if (r == nullptr) continue;
      int done = 0;
      ASSERT_EQ(weftTest(&r, &done), weftSuccess) << weftGetLastError(nullptr);
      if (done) {
        EXPECT_EQ(r, nullptr);
        --pending;
      } else {
        EXPECT_NE(r, nullptr);
      }
    }
  }
  ASSERT_EQ(pending, 0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(out[k], in) << "request " << k;
}

TEST_F(SingleRank, BlockingCallQueuesBehindAsync) {
  const size_t n = 200001;
  std::vector<uint32_t> in(n, 5), first(n, 0), second(n, 0);
  weftRequest_t req = nullptr;
  ASSERT_EQ(weftAllReduceAsync(in.data(), first.data(), n, weftUint32, weftSum, comm_, &req),
            weftSuccess);
  ASSERT_EQ(weftAllReduce(in.data(), second.data(), n, weftUint32, weftProd, comm_, nullptr),
            weftSuccess)
      << weftGetLastError(nullptr);
  EXPECT_EQ(second, in);
  ASSERT_EQ(weftWait(&req), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(first, in);
}

}  // namespace
