// The GPU data-movement kernel's protocol, run on the host: ranks are threads,
// channels live in host memory, and the ring allreduce schedule of
// collectives/kernels/ring_allreduce_schedule.h (the very code the CUDA kernel
// runs with a block as lanes) must give the reference result for odd sizes,
// many pieces per chunk and the smallest FIFOs; an abort ends every wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "collectives/kernels/ring_allreduce_schedule.h"

namespace {

using weft::dev::Channel;
using weft::dev::HostLanes;
using weft::dev::RingArgs;

// The FIFO memory of one link, owned by the test.
struct Link {
  Link(uint32_t nslots, uint32_t slotBytes)
      : slots(size_t{nslots} * slotBytes), sizes(nslots), nslots(nslots), slotBytes(slotBytes) {}
  Channel channel(const int* abort) {
    return Channel{slots.data(), sizes.data(), &tail, &head, nslots, slotBytes, abort};
  }
  std::vector<unsigned char> slots;
  std::vector<uint64_t> sizes;
  uint64_t tail = 0;
  uint64_t head = 0;
  uint32_t nslots, slotBytes;
};

template <typename T, typename Op>
void runRing(int nranks, size_t count, uint32_t nslots, uint32_t slotBytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<T>> in(nranks, std::vector<T>(count));
  for (auto& v : in)
    for (auto& x : v) x = static_cast<T>(static_cast<int>(rng() % 7) - 3);
  std::vector<T> want(in[0]);
  for (int r = 1; r < nranks; ++r)
    for (size_t i = 0; i < count; ++i) want[i] = Op::apply(want[i], in[r][i]);

  int abort = 0;
  std::vector<std::unique_ptr<Link>> links;  // link r: rank r -> rank r+1
  for (int r = 0; r < nranks; ++r) links.push_back(std::make_unique<Link>(nslots, slotBytes));
  std::vector<std::vector<T>> out(nranks, std::vector<T>(count, T(99)));
  std::vector<int> ok(nranks, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r]() {
      RingArgs ring{r, nranks, links[r]->channel(&abort),
                    links[(r + nranks - 1) % nranks]->channel(&abort)};
      int shared = 0;
      ok[r] = weft::dev::ringAllreduce<T, Op>(in[r].data(), out[r].data(), count, ring, HostLanes{},
                                              &shared);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < nranks; ++r) {
    ASSERT_TRUE(ok[r]) << "rank " << r;
    // count 0: data() may be NULL, which memcmp must not be given even for 0 bytes.
    ASSERT_TRUE(count == 0 || std::memcmp(out[r].data(), want.data(), count * sizeof(T)) == 0)
        << "rank " << r << " of " << nranks << ", count " << count << ", slots " << nslots << " x "
        << slotBytes;
  }
}

TEST(DeviceChannel, RingAllreduceSumsOnEveryShape) {
  for (int n : {1, 2, 3, 4, 5})
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{64}, size_t{1001}})
      for (uint32_t nslots : {2u, 3u, 8u})
        runRing<float, weft::dev::OpSum>(n, count, nslots, 64, 7u * n + count);
}

TEST(DeviceChannel, RingAllreduceOtherTypesAndOps) {
  runRing<int32_t, weft::dev::OpMax>(4, 5000, 4, 256, 1);
  runRing<int64_t, weft::dev::OpMin>(3, 777, 2, 40, 2);
  runRing<double, weft::dev::OpSum>(5, 12345, 3, 1024, 3);
  runRing<int32_t, weft::dev::OpProd>(3, 999, 2, 16, 4);
}

TEST(DeviceChannel, MessagesKeepTheirLengthsAndOrder) {
  int abort = 0;
  Link link(2, 32);
  Channel ch = link.channel(&abort);
  std::thread sender([&]() {
    int shared = 0;
    for (uint64_t k = 0; k < 1000; ++k) {
      ASSERT_TRUE(weft::dev::waitCredit(ch, k, HostLanes{}, &shared));
      const uint64_t len = k % 33;
      std::memset(weft::dev::slotOf(ch, k), static_cast<int>(k & 0xFF), len);
      weft::dev::post(ch, k, len, HostLanes{});
    }
  });
  int shared = 0;
  for (uint64_t k = 0; k < 1000; ++k) {
    uint64_t bytes = 0;
    ASSERT_TRUE(weft::dev::waitData(ch, k, HostLanes{}, &shared, &bytes));
    ASSERT_EQ(k % 33, bytes);
    for (uint64_t i = 0; i < bytes; ++i) ASSERT_EQ(k & 0xFF, weft::dev::slotOf(ch, k)[i]);
    weft::dev::consume(ch, k, HostLanes{});
  }
  sender.join();
}

// Rank 2 never starts: the others block until the abort flag is raised, then
// every wait gives up.
TEST(DeviceChannel, AbortEndsEveryWait) {
  const int n = 3;
  int abort = 0;
  std::vector<std::unique_ptr<Link>> links;
  for (int r = 0; r < n; ++r) links.push_back(std::make_unique<Link>(2, 64));
  std::vector<float> in(4096, 1.0f), out0(4096), out1(4096);
  std::atomic<int> finished{0};
  std::vector<int> ok(2, 1);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r]() {
      RingArgs ring{r, n, links[r]->channel(&abort), links[(r + n - 1) % n]->channel(&abort)};
      int shared = 0;
      ok[r] = weft::dev::ringAllreduce<float, weft::dev::OpSum>(
          in.data(), r == 0 ? out0.data() : out1.data(), in.size(), ring, HostLanes{}, &shared);
      finished.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(0, finished.load()) << "ranks finished without rank 2";
  __atomic_store_n(&abort, 1, __ATOMIC_RELAXED);
  auto start = std::chrono::steady_clock::now();
  for (auto& t : threads) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_FALSE(ok[0]);
  EXPECT_FALSE(ok[1]);
}

}  // namespace
