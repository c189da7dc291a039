// No allocation on the hot path: after the first call of a given shape, a
// loop of the same calls allocates nothing. Counts every C++ allocation in
// the process (operator new is replaced below; weft's containers and strings
// all go through it) while 2 or 3 ranks of one process (weftCommInitAll)
// repeat one call, over shared memory and over TCP. Not built under the
// sanitizers, which replace the allocator themselves.
#include <execinfo.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <weft/weft.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

std::atomic<bool> gCounting{false};
std::atomic<long> gAllocations{0};
// HOT_PATH_ALLOC_TRACE=1 prints the stack of every counted allocation (to
// find one); backtrace_symbols_fd writes without allocating.
const bool gTrace = std::getenv("HOT_PATH_ALLOC_TRACE") != nullptr;
thread_local bool tInTrace = false;

void count() {
  if (!gCounting.load(std::memory_order_relaxed)) return;
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (!gTrace || tInTrace) return;
  tInTrace = true;
  void* frames[32];
  int n = backtrace(frames, 32);
  backtrace_symbols_fd(frames, n, 2);
  write(2, "--\n", 3);
  tInTrace = false;
}

void* counted(std::size_t bytes) {
  count();
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

void* countedAligned(std::size_t bytes, std::align_val_t align) {
  count();
  void* p = nullptr;
  std::size_t a = static_cast<std::size_t>(align);
  if (posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, bytes == 0 ? 1 : bytes) == 0)
    return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t bytes) { return counted(bytes); }
void* operator new[](std::size_t bytes) { return counted(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return counted(bytes);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, tag);
}
void* operator new(std::size_t bytes, std::align_val_t align) {
  return countedAligned(bytes, align);
}
void* operator new[](std::size_t bytes, std::align_val_t align) {
  return countedAligned(bytes, align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

constexpr int kWarmup = 20;
constexpr int kMeasured = 200;

// One rank's call: returns weftSuccess or the failing call's result.
using RankCall = std::function<weftResult_t(weftComm_t comm, int rank, int nranks)>;

// Runs `call` kWarmup times on every rank, then kMeasured times with the
// allocation counter on, and returns how many allocations the measured
// loops made (all threads together). Threads wait for each other with
// atomics, which allocate nothing.
long allocationsOfLoop(int nranks, bool tcp, const RankCall& call) {
  if (tcp)
    setenv("WEFT_SHM_DISABLE", "1", 1);
  else
    unsetenv("WEFT_SHM_DISABLE");
  std::vector<weftComm_t> comms(nranks, nullptr);
  EXPECT_EQ(weftCommInitAll(comms.data(), nranks, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  std::atomic<int> warmed{0}, finished{0};
  std::atomic<bool> go{false};
  std::vector<weftResult_t> results(nranks, weftSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r)
    threads.emplace_back([&, r] {
      weftResult_t res = weftSuccess;
      for (int i = 0; i < kWarmup && res == weftSuccess; ++i) res = call(comms[r], r, nranks);
      warmed.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kMeasured && res == weftSuccess; ++i) res = call(comms[r], r, nranks);
      results[r] = res;
      finished.fetch_add(1);
    });
  while (warmed.load() < nranks) std::this_thread::yield();
  gAllocations.store(0);
  gCounting.store(true);
  go.store(true);
  while (finished.load() < nranks) std::this_thread::yield();
  gCounting.store(false);
  long counted = gAllocations.load();
  for (auto& t : threads) t.join();
  for (int r = 0; r < nranks; ++r)
    EXPECT_EQ(results[r], weftSuccess) << "rank " << r << ": " << weftGetLastError(nullptr);
  for (weftComm_t c : comms) EXPECT_EQ(weftCommDestroy(c), weftSuccess);
  unsetenv("WEFT_SHM_DISABLE");
  return counted;
}

constexpr size_t kSmall = 2;          // 8 bytes of float
constexpr size_t kLarge = 256 << 10;  // 1 MiB of float

std::vector<float>& bufferOf(int rank, size_t count) {
  static thread_local std::vector<float> buf;
  (void)rank;
  if (buf.size() < count) buf.resize(count, 1.0f);
  return buf;
}

RankCall allReduce(size_t count) {
  return [count](weftComm_t comm, int rank, int) {
    std::vector<float>& b = bufferOf(rank, 2 * count);
    return weftAllReduce(b.data(), b.data() + count, count, weftFloat, weftSum, comm, nullptr);
  };
}

// Ranks pair up (0-1, 2-3, ...): the lower sends first, then receives back.
RankCall sendRecv(size_t count) {
  return [count](weftComm_t comm, int rank, int nranks) {
    std::vector<float>& b = bufferOf(rank, count);
    int peer = rank ^ 1;
    if (peer >= nranks) return weftSuccess;
    weftResult_t r = rank < peer ? weftSend(b.data(), count, weftFloat, peer, comm, nullptr)
                                 : weftRecv(b.data(), count, weftFloat, peer, comm, nullptr);
    if (r != weftSuccess) return r;
    return rank < peer ? weftRecv(b.data(), count, weftFloat, peer, comm, nullptr)
                       : weftSend(b.data(), count, weftFloat, peer, comm, nullptr);
  };
}

// Every rank sends to the next and receives from the previous in one group
// (how rings and pipelines use send/recv), then two allreduces in one group.
RankCall grouped(size_t count) {
  return [count](weftComm_t comm, int rank, int nranks) {
    std::vector<float>& b = bufferOf(rank, 4 * count);
    weftGroupStart();
    weftSend(b.data(), count, weftFloat, (rank + 1) % nranks, comm, nullptr);
    weftRecv(b.data() + count, count, weftFloat, (rank + nranks - 1) % nranks, comm, nullptr);
    weftResult_t r = weftGroupEnd();
    if (r != weftSuccess) return r;
    weftGroupStart();
    weftAllReduce(b.data(), b.data() + 2 * count, count, weftFloat, weftSum, comm, nullptr);
    weftAllReduce(b.data(), b.data() + 3 * count, count, weftFloat, weftMax, comm, nullptr);
    return weftGroupEnd();
  };
}

RankCall otherCollective(const std::string& which, size_t count) {
  return [which, count](weftComm_t comm, int rank, int nranks) {
    std::vector<float>& b = bufferOf(rank, count * (nranks + 1));
    float* in = b.data();
    float* out = b.data() + count;
    if (which == "allgather") return weftAllGather(in, out, count, weftFloat, comm, nullptr);
    if (which == "reducescatter")
      return weftReduceScatter(out, in, count, weftFloat, weftSum, comm, nullptr);
    if (which == "broadcast") return weftBroadcast(in, out, count, weftFloat, 0, comm, nullptr);
    if (which == "reduce") return weftReduce(in, out, count, weftFloat, weftSum, 0, comm, nullptr);
    if (which == "alltoall")
      return weftAllToAll(out, b.data(), count / nranks, weftFloat, comm, nullptr);
    return weftBarrier(comm, nullptr);
  };
}

// (over TCP, ranks in the job)
class HotPathAllocations : public ::testing::TestWithParam<std::tuple<bool, int>> {
 protected:
  long loop(const RankCall& call) {
    return allocationsOfLoop(std::get<1>(GetParam()), std::get<0>(GetParam()), call);
  }
};

TEST_P(HotPathAllocations, SmallAllReduce) { EXPECT_EQ(loop(allReduce(kSmall)), 0); }
TEST_P(HotPathAllocations, LargeAllReduce) { EXPECT_EQ(loop(allReduce(kLarge)), 0); }
TEST_P(HotPathAllocations, SmallSendRecv) { EXPECT_EQ(loop(sendRecv(kSmall)), 0); }
TEST_P(HotPathAllocations, LargeSendRecv) { EXPECT_EQ(loop(sendRecv(kLarge)), 0); }

TEST_P(HotPathAllocations, SmallGroups) { EXPECT_EQ(loop(grouped(kSmall)), 0); }
TEST_P(HotPathAllocations, LargeGroups) { EXPECT_EQ(loop(grouped(kLarge)), 0); }

TEST_P(HotPathAllocations, OtherCollectives) {
  for (const char* which :
       {"allgather", "reducescatter", "broadcast", "reduce", "alltoall", "barrier"}) {
    for (size_t count : {kSmall * 2, kLarge}) {
      EXPECT_EQ(loop(otherCollective(which, count)), 0) << which << " of " << count << " floats";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, HotPathAllocations,
                         ::testing::Combine(::testing::Values(false, true),
                                            ::testing::Values(2, 3)),
                         [](const ::testing::TestParamInfo<std::tuple<bool, int>>& info) {
                           return std::string(std::get<0>(info.param) ? "Tcp" : "Shm") +
                                  std::to_string(std::get<1>(info.param)) + "Ranks";
                         });

}  // namespace
