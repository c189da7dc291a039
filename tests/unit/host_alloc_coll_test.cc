// Collectives on weftHostAlloc buffers between three ranks of one process
// (weftCommInitAll): large enough for the single-copy path, where each rank
// maps its peers' buffers. All shared (allreduce and allgather push into the
// outputs), and input shared with output private (reads through the mapping,
// results through cross-memory attach). In the sanitizer tiers too.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kRanks = 3;
constexpr size_t kCount = 300007;  // odd: blocks of unequal size

float inputOf(int r, size_t i) {
  return static_cast<float>((i * 7 + static_cast<size_t>(r) * 13) % 29) - 14.0f;
}

struct Shared {
  float* ptr = nullptr;
  explicit Shared(size_t count, bool shared) : shared_(shared) {
    if (shared) {
      void* mem = nullptr;
      if (weftHostAlloc(&mem, count * sizeof(float)) == weftSuccess) ptr = static_cast<float*>(mem);
    } else {
      heap_.resize(count);
      ptr = heap_.data();
    }
  }
  ~Shared() {
    if (shared_) weftHostFree(ptr);
  }

 private:
  bool shared_;
  std::vector<float> heap_;
};

std::string runRank(weftComm_t comm, bool sharedOut) {
  int rank = -1;
  weftCommUserRank(comm, &rank);
  for (int round = 0; round < 3; ++round) {  // reuse: the mappings are cached
    Shared in(kCount, true), out(kCount * kRanks, sharedOut);
    if (in.ptr == nullptr || out.ptr == nullptr) return "weftHostAlloc failed";
    for (size_t i = 0; i < kCount; ++i) in.ptr[i] = inputOf(rank, i) + round;
    if (weftAllReduce(in.ptr, out.ptr, kCount, weftFloat, weftSum, comm, nullptr) != weftSuccess)
      return std::string("allreduce: ") + weftGetLastError(nullptr);
    for (size_t i = 0; i < kCount; ++i) {
      float want = inputOf(0, i) + inputOf(1, i) + inputOf(2, i) + 3.0f * round;
      if (out.ptr[i] != want) return "allreduce index " + std::to_string(i);
    }
    if (weftAllGather(in.ptr, out.ptr, kCount, weftFloat, comm, nullptr) != weftSuccess)
      return std::string("allgather: ") + weftGetLastError(nullptr);
    for (int r = 0; r < kRanks; ++r)
      for (size_t i = 0; i < kCount; ++i)
        if (out.ptr[r * kCount + i] != inputOf(r, i) + round)
          return "allgather rank " + std::to_string(r) + " index " + std::to_string(i);
    // In place: the input is the output's own block.
    float* mine = out.ptr + rank * kCount;
    if (weftAllGather(mine, out.ptr, kCount, weftFloat, comm, nullptr) != weftSuccess)
      return std::string("allgather in place: ") + weftGetLastError(nullptr);
    for (size_t i = 0; i < kCount * kRanks; ++i)
      if (out.ptr[i] != inputOf(static_cast<int>(i / kCount), i % kCount) + round)
        return "allgather in place index " + std::to_string(i);
    if (weftAllReduce(out.ptr, out.ptr, kCount, weftFloat, weftMax, comm, nullptr) != weftSuccess)
      return std::string("allreduce in place: ") + weftGetLastError(nullptr);
    for (size_t i = 0; i < kCount; ++i) {
      float want = inputOf(0, i) + round;  // every rank's first block is rank 0's input
      if (out.ptr[i] != want) return "allreduce in place index " + std::to_string(i);
    }
  }
  return "";
}

void runAll(bool sharedOut) {
  weftComm_t comms[kRanks] = {nullptr, nullptr, nullptr};
  ASSERT_EQ(weftCommInitAll(comms, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
  std::string errors[kRanks];
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] { errors[r] = runRank(comms[r], sharedOut); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(weftCommDestroy(comms[r]), weftSuccess);
}

TEST(HostAllocCollectives, AllBuffersShared) { runAll(true); }
TEST(HostAllocCollectives, SharedInputsPrivateOutputs) { runAll(false); }

}  // namespace
