// Integer weftAvg where the sum overflows the element type: the sum wraps
// first and the wrapped sum is divided (docs/api.md, as NCCL's ncclAvg), on
// both paths one node takes and on every collective that reduces. 13 ranks in one
// process (weftCommInitAll), every rank contributing the same value, so each
// expectation is one line of arithmetic:
//   uint8 21 x 13 = 273 -> 17 (mod 256) -> 17 / 13 = 1   (exact avg would be 21)
//   int8 -10 x 13 = -130 -> 126 (two's complement) -> 126 / 13 = 9
//   uint8 sum of 21 x 13 -> 17; int32 21 x 13 avg -> 21 (no overflow)
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kRanks = 13;

template <typename T>
std::string checkAll(const std::vector<T>& got, T want, const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want)
      return what + " index " + std::to_string(i) + ": " + std::to_string(int64_t{got[i]}) +
             " != " + std::to_string(int64_t{want});
  return "";
}

template <typename T>
std::string allReduceCase(weftComm_t comm, weftDataType_t dt, weftRedOp_t op, T in, T want,
                          size_t count) {
  std::vector<T> send(count, in), recv(count, T{0});
  const std::string what = "allreduce dt " + std::to_string(dt) + " op " + std::to_string(op) +
                           " count " + std::to_string(count);
  if (weftAllReduce(send.data(), recv.data(), count, dt, op, comm, nullptr) != weftSuccess)
    return what + ": " + weftGetLastError(nullptr);
  return checkAll(recv, want, what);
}

std::string runRank(weftComm_t comm, int rank) {
  // 64 elements take the one-round path; 300000 bytes per rank go through the
  // peers' mapped outboxes (WEFT_DEBUG=INFO shows them being mapped).
  for (size_t count : {size_t{64}, size_t{300000}}) {
    std::string e = allReduceCase<uint8_t>(comm, weftUint8, weftAvg, 21, 1, count);
    if (e.empty()) e = allReduceCase<int8_t>(comm, weftInt8, weftAvg, -10, 9, count);
    if (e.empty()) e = allReduceCase<uint8_t>(comm, weftUint8, weftSum, 21, 17, count);
    if (e.empty()) e = allReduceCase<int32_t>(comm, weftInt32, weftAvg, 21, 21, count);
    if (!e.empty()) return e;
  }
  const size_t per = 5000;
  std::vector<uint8_t> send(per * kRanks, 21), piece(per, 0);
  if (weftReduceScatter(send.data(), piece.data(), per, weftUint8, weftAvg, comm, nullptr) !=
      weftSuccess)
    return std::string("reduce-scatter: ") + weftGetLastError(nullptr);
  std::string e = checkAll<uint8_t>(piece, 1, "reduce-scatter");
  if (!e.empty()) return e;
  const int root = 5;
  std::vector<uint8_t> in(per, 21), out(per, 0);
  if (weftReduce(in.data(), out.data(), per, weftUint8, weftAvg, root, comm, nullptr) !=
      weftSuccess)
    return std::string("reduce: ") + weftGetLastError(nullptr);
  return rank == root ? checkAll<uint8_t>(out, 1, "reduce") : "";
}

TEST(IntegerAvg, WrappedSumDividedOnEveryCollective) {
  std::vector<weftComm_t> comms(kRanks, nullptr);
  ASSERT_EQ(weftCommInitAll(comms.data(), kRanks, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] { errors[r] = runRank(comms[r], r); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(weftCommDestroy(comms[r]), weftSuccess) << weftGetLastError(nullptr);
  }
}

}  // namespace
