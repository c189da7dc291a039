// The GPU ring's per-call arithmetic (collectives/kernels/ring_call.h), on
// the host: CTA shares cover a call exactly once, and ringMessages is what
// the schedule really posts, so that message numbers carried from call to
// call (as src/device/device_ring.h does) keep every rank in step. Ranks
// are threads running runRingCta, the code each CTA of the kernel runs.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "collectives/kernels/ring_call.h"

namespace {

using weft::dev::Channel;
using weft::dev::RingCall;

TEST(RingCall, SharesCoverEveryElementOnce) {
  for (uint64_t count : {0ull, 1ull, 63ull, 64ull, 65ull, 1000ull, 4096ull, 3145733ull}) {
    for (int nctas : {1, 2, 3, 8, 32}) {
      uint64_t next = 0;
      for (int c = 0; c < nctas; ++c) {
        uint64_t begin = 0, len = 0;
        weft::dev::ringCtaShare(count, nctas, c, &begin, &len);
        if (len == 0) continue;
        EXPECT_EQ(begin, next) << count << " elements, CTA " << c << " of " << nctas;
        EXPECT_EQ(begin % 64, 0u);
        next = begin + len;
      }
      EXPECT_EQ(next, count) << count << " elements over " << nctas << " CTAs";
    }
  }
}

struct Fifo {
  explicit Fifo(uint32_t nslots, uint32_t slotBytes)
      : slots(size_t{nslots} * slotBytes), sizes(nslots), nslots(nslots), slotBytes(slotBytes) {}
  std::vector<unsigned char> slots;
  std::vector<uint64_t> sizes;
  uint64_t tail = 0, head = 0;
  uint32_t nslots, slotBytes;
  Channel channel(const int* abort) {
    return Channel{slots.data(), sizes.data(), &tail, &head, nslots, slotBytes, abort};
  }
};

// Several calls of different sizes in a row on the same FIFOs (two CTAs per
// rank), each starting at the message number the previous ones left.
TEST(RingCall, MessageNumbersCarryAcrossCalls) {
  const uint32_t kSlotBytes = 256;
  for (int n : {2, 3, 5}) {
    const int nctas = 2;
    std::vector<std::unique_ptr<Fifo>> fifos;  // [cta * n + r]: rank r -> r + 1
    for (int i = 0; i < nctas * n; ++i) fifos.push_back(std::make_unique<Fifo>(3, kSlotBytes));
    uint64_t seq[2] = {0, 0};
    int abort = 0;
    for (uint64_t count : {1000ull, 1ull, 0ull, 777ull, 4099ull}) {
      std::vector<std::vector<int32_t>> data(n, std::vector<int32_t>(count));
      for (int r = 0; r < n; ++r)
        for (uint64_t i = 0; i < count; ++i) data[r][i] = static_cast<int32_t>(i % 13) + r;
      std::vector<RingCall> calls(n);
      for (int r = 0; r < n; ++r) {
        RingCall& call = calls[r];
        std::memset(&call, 0, sizeof(call));
        call.in = call.out = data[r].data();
        call.count = count;
        call.rank = r;
        call.nranks = n;
        call.nctas = nctas;
        call.elemBytes = 4;
        call.abort = &abort;
        for (int c = 0; c < nctas; ++c) {
          call.seq[c] = seq[c];
          call.send[c] = fifos[c * n + r]->channel(&abort);
          call.recv[c] = fifos[c * n + (r + n - 1) % n]->channel(&abort);
        }
      }
      std::vector<std::thread> threads;
      std::vector<int> shared(static_cast<size_t>(n * nctas));
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < nctas; ++c)
          threads.emplace_back([&, r, c] {
            weft::dev::runRingCta<int32_t, weft::dev::OpSum>(&calls[r], c, weft::dev::HostLanes{},
                                                             &shared[r * nctas + c]);
          });
      for (auto& t : threads) t.join();
      for (int c = 0; c < nctas; ++c) {
        uint64_t begin = 0, len = 0;
        weft::dev::ringCtaShare(count, nctas, c, &begin, &len);
        seq[c] += weft::dev::ringMessages(len, n, kSlotBytes, 4);
        for (int r = 0; r < n; ++r) {
          ASSERT_EQ(calls[r].status[c], weft::dev::kRingCtaDone);
          EXPECT_EQ(fifos[c * n + r]->tail, seq[c]) << n << " ranks, count " << count;
          EXPECT_EQ(fifos[c * n + r]->head, seq[c]);
        }
      }
      for (int r = 0; r < n; ++r)
        for (uint64_t i = 0; i < count; ++i)
          ASSERT_EQ(data[r][i], static_cast<int32_t>(i % 13) * n + n * (n - 1) / 2)
              << "rank " << r << " element " << i << " of " << count;
    }
  }
}

}  // namespace
